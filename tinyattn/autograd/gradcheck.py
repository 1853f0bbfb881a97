"""Check analytic gradients against central finite differences, as torch.autograd.gradcheck does.

For each output y_o we draw a random upstream gradient u_o and compare, for every checked
element x_j of every input, the analytic vector-Jacobian product (what backward computes) with

    numeric_j = < u_o, (y_o(x + eps e_j) - y_o(x - eps e_j)) / (2 eps) >

which is exact up to O(eps^2). One pair of forward passes per input element gives the whole
numeric Jacobian column, so all outputs are checked from the same perturbations.
"""
import numpy as np

from .engine import backward
from .function import enable_grad, no_grad
from .tensor import Tensor


class GradcheckError(AssertionError):
    """Analytic and numeric gradients differ; the message names output, input and element."""


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, max_elements=2000, seed=0):
    """True if fn's backward agrees with finite differences on `inputs`, else GradcheckError.

    fn(*inputs) returns a Tensor or a tuple of Tensors. Inputs that are Tensors with
    requires_grad=True are checked; they must be float64 and are perturbed in place (so a
    module's parameters may be passed, with fn closing over the module). An input with more
    than `max_elements` elements is checked on a random subset of that many.
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    checked = [(i, t) for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not checked:
        raise ValueError("gradcheck: no input has requires_grad=True, so there is nothing to check")
    for i, t in checked:
        if t.dtype != np.float64:
            raise TypeError(
                f"gradcheck: input {i} is {t.dtype}; finite differences need float64 "
                "(pass t.double(), or module.double() for parameters)"
            )
    rng = np.random.default_rng(seed)

    with enable_grad():
        outputs = _as_outputs(fn(*inputs))
    upstream = []
    for o, out in enumerate(outputs):
        if out.dtype.kind == "f" and out.dtype != np.float64:
            raise TypeError(f"gradcheck: output {o} is {out.dtype}; finite differences need float64")
        upstream.append(rng.standard_normal(out.shape) if out.requires_grad else None)

    picks = [_pick_elements(t.data.shape, max_elements, rng) for _, t in checked]
    numeric = _numeric_vjps(fn, inputs, checked, picks, upstream, eps)

    for o, u in enumerate(upstream):
        analytic = _analytic_vjp(fn, inputs, checked, o, u)
        for k, (i, t) in enumerate(checked):
            got = np.array([analytic[k][idx] for idx in picks[k]])
            want = numeric[o][k]
            _compare(got, want, picks[k], o, i, t, atol, rtol)
    return True


def _as_outputs(result):
    outputs = result if isinstance(result, tuple) else (result,)
    for o, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            raise TypeError(f"gradcheck: fn returned {type(out).__name__} as output {o}, not a Tensor")
    return outputs


def _pick_elements(shape, max_elements, rng):
    size = int(np.prod(shape))
    flat = np.arange(size) if size <= max_elements else np.sort(rng.choice(size, max_elements, replace=False))
    return [np.unravel_index(j, shape) for j in flat]


def _numeric_vjps(fn, inputs, checked, picks, upstream, eps):
    """numeric[o][k][e]: central difference of <u_o, y_o> in element e of checked input k."""
    numeric = [[np.zeros(len(p)) for p in picks] for _ in upstream]

    def projections():
        outputs = _as_outputs(fn(*inputs))
        return [0.0 if u is None else float(np.sum(u * out.data)) for u, out in zip(upstream, outputs)]

    with no_grad():
        for k, (_, t) in enumerate(checked):
            data = t.data
            for e, idx in enumerate(picks[k]):
                original = data[idx].copy()
                data[idx] = original + eps
                plus = projections()
                data[idx] = original - eps
                minus = projections()
                data[idx] = original
                for o in range(len(upstream)):
                    numeric[o][k][e] = (plus[o] - minus[o]) / (2 * eps)
    return numeric


def _analytic_vjp(fn, inputs, checked, o, u):
    """The gradient of <u, y_o> with respect to each checked input, from backward."""
    saved = [t.grad for _, t in checked]
    for _, t in checked:
        t.grad = None
    try:
        with enable_grad():
            out = _as_outputs(fn(*inputs))[o]
        if u is not None:
            backward([out], [u.astype(out.dtype)])
        return [t.grad if t.grad is not None else np.zeros_like(t.data) for _, t in checked]
    finally:
        for (_, t), old in zip(checked, saved):
            t.grad = old


def _compare(got, want, picks, o, i, t, atol, rtol):
    error = np.abs(got - want)
    allowed = atol + rtol * np.abs(want)
    bad = ~(error <= allowed)  # NaN on either side counts as a failure
    if bad.any():
        worst = int(np.argmax(np.where(np.isfinite(error), error - allowed, np.inf)))
        element = tuple(int(v) for v in picks[worst])
        raise GradcheckError(
            f"gradcheck: output {o}, input {i} (shape {t.data.shape}): worst element {element}: "
            f"analytic {got[worst]:.10g}, numeric {want[worst]:.10g} "
            f"(|diff| {error[worst]:.3g} > atol + rtol*|numeric| = {allowed[worst]:.3g}; "
            f"{int(bad.sum())} of {len(got)} elements off)"
        )
