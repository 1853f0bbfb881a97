"""Every entry of tinyattn/ops/fast_path.py's TABLE: its compiled kernel, and its door, against its
numpy reference, on awkward layouts.

Each entry has a generator below that draws its arguments: random shapes (zero-size and 0-d
where the op takes them), float32 and float64, and every array in some layout (C order,
transposed, every other element, negative steps, or broadcast with stride 0). The kernel
(fast_path.kernel(name)) and the door (arrays.<name>, so the `worth` predicates and kernel_takes
run too) must give the reference's shapes, dtypes and numbers, and leave their inputs alone
(adam_update's in-place p, m and v are compared after the update instead). An entry without a
generator fails, so a new kernel cannot skip this file.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tinyattn.ops import arrays, fast_path, gelu, reference

RTOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12}
LAYOUTS = ("c", "transposed", "every other", "reversed", "broadcast")


def laid_out(draw, values, layouts=LAYOUTS):
    """`values` in a drawn layout. All but "broadcast" keep the values; "broadcast" repeats the
    first slice along one axis through a stride-0 view (np.broadcast_to), as a caller might pass."""
    layout = draw(st.sampled_from(layouts))
    if values.ndim == 0 or values.size == 0 or layout == "c":
        return values
    axis = draw(st.integers(0, values.ndim - 1))
    if layout == "transposed":  # memory ordered by another permutation of the axes, as x.transpose(0, 1)
        order = draw(st.permutations(range(values.ndim)))
        return np.ascontiguousarray(values.transpose(order)).transpose(np.argsort(order))
    if layout == "every other":
        wide = np.zeros(values.shape[:axis] + (2 * values.shape[axis],) + values.shape[axis + 1:], values.dtype)
        view = wide[(slice(None),) * axis + (slice(None, None, 2),)]
        view[...] = values
        return view
    if layout == "reversed":
        return np.flip(np.flip(values, axis).copy(), axis)
    return np.broadcast_to(values.take([0], axis), values.shape)


def normal(draw, shape, dtype, scale=1.0, layouts=LAYOUTS):
    seed = draw(st.integers(0, 2**32 - 1))
    values = (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)
    return laid_out(draw, values, layouts)


def uniform(draw, shape, dtype, low, high):
    seed = draw(st.integers(0, 2**32 - 1))
    return laid_out(draw, np.random.default_rng(seed).uniform(low, high, shape).astype(dtype))


dtypes = st.sampled_from([np.float32, np.float64])


def shape(min_dims=0, max_dims=4, min_side=0, max_side=4):
    """Mostly sides of 2 or more (where layouts differ), sometimes 1 or 0; mostly 3 or more axes."""
    sides = [n for n in (2, 3, max_side, 1, 2, 3, 0) if min_side <= n <= max_side]
    dims = [n for n in (0, 1, 2, 3, 3, 4, 4) if min_dims <= n <= max_dims] or [max_dims]
    return st.sampled_from(dims).flatmap(lambda n: st.tuples(*[st.sampled_from(sides)] * n))


def keep_rows(draw, batch):
    """None, or a bool (B, 1) of which rows still run (any layout)."""
    if draw(st.booleans()):
        return None
    seed = draw(st.integers(0, 2**32 - 1))
    return laid_out(draw, np.random.default_rng(seed).random((batch, 1)) < 0.6)


# ----------------------------------------------------------------------------- one generator per entry
@st.composite
def matmul_args(draw):
    dtype = draw(dtypes)
    n, k, m = draw(st.integers(0, 4)), draw(st.sampled_from([1, 1, 0, 3])), draw(st.integers(0, 4))
    batch_a, batch_b = draw(shape(0, 2, 0, 3)), draw(shape(0, 2, 0, 3))
    if draw(st.booleans()):  # the same batch axes (the outer-product kernel's case), or some of size 1
        batch_b = batch_a if draw(st.booleans()) else tuple(1 if draw(st.booleans()) else s for s in batch_a)
    try:
        np.broadcast_shapes(batch_a, batch_b)
    except ValueError:
        batch_b = batch_a
    a = normal(draw, batch_a + (n, k), dtype)
    b_dtype = np.int64 if draw(st.integers(0, 9)) == 0 else dtype  # an integer operand: numpy promotes it
    return a, normal(draw, batch_b + (k, m), dtype).astype(b_dtype)


@st.composite
def softmax_args(draw):
    dtype = draw(dtypes)
    x_shape = draw(shape(1, 4, 0, 5).filter(lambda s: s[-1] > 0))  # a softmax over no entries is not defined
    x = normal(draw, x_shape, dtype, scale=3.0)
    if draw(st.booleans()):
        return (x,)
    mask_shape = tuple(s if draw(st.booleans()) else 1 for s in x_shape)[draw(st.integers(0, len(x_shape) - 1)):]
    seed = draw(st.integers(0, 2**32 - 1))
    return x, laid_out(draw, np.random.default_rng(seed).random(mask_shape) < 0.7)


@st.composite
def log_softmax_args(draw):
    return draw(softmax_args())[:1]


@st.composite
def softmax_backward_args(draw, log=False):
    dtype = draw(dtypes)
    y_shape = draw(shape(1, 4, 0, 5))
    y = normal(draw, y_shape, dtype, scale=2.0)
    if y.size:
        y = reference.log_softmax(y) if log else reference.softmax(y)
    return laid_out(draw, y), normal(draw, y_shape, dtype)


@st.composite
def sum_over_args(draw):
    dtype = draw(dtypes)
    x = normal(draw, draw(shape(0, 4, 0, 5)), dtype)
    axes = None if draw(st.integers(0, 4)) == 0 else tuple(sorted(draw(st.sets(st.integers(0, x.ndim - 1)))) if x.ndim else ())
    return x, axes, draw(st.booleans())


@st.composite
def multiply_args(draw):
    dtype = draw(dtypes)
    x_shape = draw(shape(0, 4, 0, 5))
    kind = draw(st.sampled_from(["row", "column", "same", "any"]))
    if kind == "row" and x_shape:  # one number per row: the row-scaling kernel
        s_shape = x_shape[:-1] + (1,)
    elif kind == "column" and x_shape:  # one number per column: the column-scaling kernel
        s_shape = x_shape[-1:]
    elif kind == "same":
        s_shape = x_shape
    else:
        s_shape = tuple(1 if draw(st.booleans()) else s for s in x_shape)[draw(st.integers(0, len(x_shape))):]
    x, s = normal(draw, x_shape, dtype), normal(draw, s_shape, dtype)
    if draw(st.integers(0, 9)) == 0:  # an integer operand: numpy promotes it to float
        x = (x * 4).astype(np.int64)
    return (x, s) if draw(st.booleans()) else (s, x)


@st.composite
def sigmoid_args(draw):
    return (normal(draw, draw(shape(0, 4, 0, 5)), draw(dtypes), scale=30.0),)


approximations = st.sampled_from(["none", "tanh"])


@st.composite
def gelu_args(draw):  # wide enough to reach every range of the float32 erf: |x| / sqrt 2 past 0.46875, 4 and 10
    x = normal(draw, draw(shape(0, 4, 0, 5)), draw(dtypes), scale=draw(st.sampled_from([0.5, 3.0, 30.0])))
    return x, draw(approximations)


@st.composite
def gelu_backward_args(draw):
    x, approximate = draw(gelu_args())
    _, saved = gelu.gelu(np.array(x), approximate)
    return x, laid_out(draw, saved), normal(draw, x.shape, x.dtype), approximate


@st.composite
def layer_norm_args(draw):
    """As nn.LayerNorm calls it: over the trailing axes, weight and bias of their shape or None."""
    dtype = draw(dtypes)
    lead, normalized = draw(shape(0, 3, 0, 4)), draw(shape(1, 2, 1, 5))  # LayerNorm refuses a size of 0
    x = normal(draw, lead + normalized, dtype, scale=3.0)
    axes = tuple(range(len(lead), x.ndim))
    weight, bias = (normal(draw, normalized, dtype) if draw(st.booleans()) else None for _ in range(2))
    return x, axes, weight, bias, draw(st.sampled_from([1e-5, 0.1]))


@st.composite
def layer_norm_backward_args(draw):
    x, axes, weight, _, eps = draw(layer_norm_args())
    _, x_hat, inv_std = reference.layer_norm(np.array(x), axes, weight, None, eps)
    return normal(draw, x.shape, x.dtype), axes, laid_out(draw, x_hat), laid_out(draw, inv_std), weight


@st.composite
def scatter_rows_args(draw):
    dtype, num_rows, n, d = draw(dtypes), draw(st.integers(1, 5)), draw(st.integers(0, 8)), draw(st.integers(0, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    indices = laid_out(draw, np.random.default_rng(seed).integers(-num_rows, num_rows, n))
    return indices, normal(draw, (n, d), dtype), num_rows


@st.composite
def adam_update_args(draw):
    dtype = np.dtype(draw(dtypes))
    p_shape = draw(shape(0, 3, 0, 4))
    written = LAYOUTS[:-1]  # p, m and v are updated in place: never a read-only broadcast view
    p, m = (normal(draw, p_shape, dtype, layouts=written) for _ in range(2))
    g = normal(draw, p_shape, dtype)
    v = laid_out(draw, np.abs(normal(draw, p_shape, dtype, layouts=("c",))), written)
    b1, b2 = dtype.type(0.9), dtype.type(0.999)
    weight_decay = dtype.type(draw(st.sampled_from([0.0, 0.01])))
    return (p, g, m, v, (b1, 1 - b1), (b2, 1 - b2), dtype.type(0.01), dtype.type(0.3), dtype.type(1e-8),
            weight_decay)


def _batch_hidden(draw):
    return draw(dtypes), draw(st.integers(0, 4)), draw(st.integers(0, 5))


@st.composite
def gru_gates_args(draw):
    dtype, B, H = _batch_hidden(draw)
    return (normal(draw, (B, 3 * H), dtype, 2.0), normal(draw, (B, 3 * H), dtype, 2.0), normal(draw, (B, H), dtype),
            keep_rows(draw, B))


@st.composite
def gru_gates_backward_args(draw):
    dtype, B, H = _batch_hidden(draw)
    r, z = (uniform(draw, (B, H), dtype, 0.0, 1.0) for _ in range(2))
    return (normal(draw, (B, H), dtype), normal(draw, (B, H), dtype), r, z, uniform(draw, (B, H), dtype, -1.0, 1.0),
            normal(draw, (B, 3 * H), dtype), keep_rows(draw, B))


@st.composite
def lstm_gates_args(draw):
    dtype, B, H = _batch_hidden(draw)
    return normal(draw, (B, 4 * H), dtype, 2.0), normal(draw, (B, H), dtype), normal(draw, (B, H), dtype), keep_rows(draw, B)


@st.composite
def lstm_gates_backward_args(draw):
    dtype, B, H = _batch_hidden(draw)
    i, f, o = (uniform(draw, (B, H), dtype, 0.0, 1.0) for _ in range(3))
    g, tanh_c = (uniform(draw, (B, H), dtype, -1.0, 1.0) for _ in range(2))
    return (normal(draw, (B, H), dtype), normal(draw, (B, H), dtype), normal(draw, (B, H), dtype), i, f, g, o, tanh_c,
            keep_rows(draw, B))


@st.composite
def through_pair_tanh_args(draw):
    dtype = draw(dtypes)
    B, Tq, Tk, h = (draw(st.integers(0, 4)) for _ in range(4))
    return (normal(draw, (B, Tq, Tk), dtype), normal(draw, (h,), dtype),
            uniform(draw, (B, Tq, Tk, h), dtype, -1.0, 1.0))


GENERATORS = {
    "matmul": matmul_args(),
    "softmax": softmax_args(),
    "softmax_backward": softmax_backward_args(),
    "log_softmax": log_softmax_args(),
    "log_softmax_backward": softmax_backward_args(log=True),
    "sum_over": sum_over_args(),
    "layer_norm": layer_norm_args(),
    "layer_norm_backward": layer_norm_backward_args(),
    "multiply": multiply_args(),
    "sigmoid": sigmoid_args(),
    "gelu": gelu_args(),
    "gelu_backward": gelu_backward_args(),
    "scatter_rows": scatter_rows_args(),
    "adam_update": adam_update_args(),
    "gru_gates": gru_gates_args(),
    "gru_gates_backward": gru_gates_backward_args(),
    "lstm_gates": lstm_gates_args(),
    "lstm_gates_backward": lstm_gates_backward_args(),
    "through_pair_tanh": through_pair_tanh_args(),
}
IN_PLACE = {"adam_update": (0, 2, 3)}  # the arguments a function updates in place: its results


def test_every_table_entry_has_a_generator():
    assert sorted(fast_path.TABLE) == sorted(GENERATORS), (
        f"TABLE entries without a generator in {__name__}: {sorted(set(fast_path.TABLE) - set(GENERATORS))}")


def _copy(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _results(name, function, args):
    """What `function` gives, as a list of arrays (the updated arguments for an in-place one)."""
    out = function(*args)
    if name in IN_PLACE:
        return [args[i] for i in IN_PLACE[name]]
    return list(out) if isinstance(out, tuple) else [out]


def _assert_close(name, got, want):
    assert len(got) == len(want), f"{name}: {len(got)} results, the reference gives {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        if w is None:
            assert g is None, f"{name}: result {k} is {g!r}, the reference's is None"
            continue
        assert g.shape == w.shape and g.dtype == w.dtype, (
            f"{name}: result {k} is {g.dtype}{g.shape}, the reference's {w.dtype}{w.shape}")
        rtol = RTOL.get(w.dtype, 0.0)
        scale = np.max(np.abs(w[np.isfinite(w)]), initial=1.0)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=4 * rtol * scale, err_msg=f"{name}: result {k}")


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_kernel_and_door_equal_the_reference(name):
    reference_function, (_, needs_contiguous, _) = fast_path.reference(name), fast_path.TABLE[name]
    door, compiled = getattr(arrays, name), fast_path.kernel(name)

    @settings(max_examples=60)
    @given(args=GENERATORS[name])
    def check(args):
        values = _copy(args)  # C-ordered copies: the numbers, and the state before an in-place update
        want = _results(name, reference_function, _copy(values))
        # the door takes every layout; the kernel's contract, where TABLE says so, is C order
        for label, function, given_args in (("door", door, args),
                                            ("kernel", compiled, _copy(values) if needs_contiguous else args)):
            got = _results(name, function, given_args)
            _assert_close(f"{name} ({label})", got, want)
            for i, (a, b) in enumerate(zip(given_args, values)):
                if isinstance(a, np.ndarray) and i not in IN_PLACE.get(name, ()):
                    np.testing.assert_array_equal(a, b, err_msg=f"{name} ({label}) wrote into argument {i}")

    check()


def test_adam_kernel_refuses_arrays_it_cannot_update_in_place():
    p = np.zeros((3, 4)).T
    with pytest.raises(ValueError, match="C order"):
        fast_path.kernel("adam_update")(p, p, p.copy(), p.copy(), (0.9, 0.1), (0.999, 0.001), 0.1, 1.0, 1e-8, 0.0)


def test_scatter_rows_kernel_refuses_indices_outside_the_table():
    with pytest.raises(IndexError, match="outside a table of 3 rows"):
        fast_path.kernel("scatter_rows")(np.array([0, 3]), np.ones((2, 2)), 3)


def test_float32_gelu_kernel_within_1e_6_of_the_exact_value():
    """The float32 erf of the GELU kernel (kernels/gelu.py) against float64's math.erfc, far tail included:
    within 1e-6 relative wherever the result is a normal float32."""
    x = np.concatenate([np.linspace(-13, 13, 200_001), np.geomspace(1e-30, 13, 20_000),
                        -np.geomspace(1e-30, 13, 20_000)]).astype(np.float32)
    y, cdf = fast_path.kernel("gelu")(x, "none")
    exact = np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in x.astype(np.float64)])
    normal = np.abs(exact) >= np.finfo(np.float32).tiny
    relative = np.abs(y[normal] - exact[normal]) / np.abs(exact[normal])
    assert relative.max() < 1e-6, f"GELU float32 off by {relative.max():.2e} relative at x = {x[normal][relative.argmax()]}"


OUT_CASES = {  # kernel: (arguments, which results out= takes, as one array or a tuple)
    "softmax_backward": lambda rng: (reference.softmax(rng.standard_normal((3, 5))), rng.standard_normal((3, 5))),
    "log_softmax_backward": lambda rng: (reference.log_softmax(rng.standard_normal((3, 5))),
                                         rng.standard_normal((3, 5))),
    "gelu": lambda rng: (rng.standard_normal((2, 3, 4)), "none"),
    "gelu_backward": lambda rng: (rng.standard_normal((2, 3)), rng.random((2, 3)), rng.standard_normal((2, 3)), "none"),
    "layer_norm": lambda rng: (rng.standard_normal((2, 3, 4)), (2,), rng.standard_normal(4), None, 1e-5),
    "layer_norm_backward": lambda rng: (rng.standard_normal((2, 3, 4)), (2,), rng.standard_normal((2, 3, 4)),
                                        rng.random((2, 3, 1)) + 0.5, rng.standard_normal(4)),
}


@pytest.mark.parametrize("name", sorted(OUT_CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernels_write_into_out(name, dtype):
    """out= (for a compiled step's memory plan): the kernel fills the arrays given and returns them,
    with the numbers it returns without out=; an array it cannot fill is refused, naming the fix."""
    args = [a.astype(dtype) if isinstance(a, np.ndarray) else a for a in OUT_CASES[name](np.random.default_rng(0))]
    compiled = fast_path.kernel(name)
    want = compiled(*args)
    out = tuple(np.full_like(w, np.nan) for w in want) if isinstance(want, tuple) else np.full_like(want, np.nan)
    got = compiled(*args, out=out)
    for g, o, w in zip(*((got, out, want) if isinstance(want, tuple) else ((got,), (out,), (want,)))):
        assert g is o
        np.testing.assert_array_equal(g, w)
    wrong = np.zeros((7,), dtype)
    with pytest.raises(ValueError, match="out= must be a C-contiguous"):
        compiled(*args, out=tuple(wrong for _ in want) if isinstance(want, tuple) else wrong)
    transposed = np.zeros(want[0].shape[::-1] if isinstance(want, tuple) else want.shape[::-1], dtype).T
    if transposed.ndim > 1:
        with pytest.raises(ValueError, match="not C-contiguous"):
            compiled(*args, out=(transposed,) + tuple(want[1:]) if isinstance(want, tuple) else transposed)


@pytest.mark.parametrize("name, shapes", [("gru_gates", [(4, 15), (4, 15), (4, 5)]),
                                          ("lstm_gates", [(4, 20), (4, 5), (4, 5)])])
def test_float64_gate_forwards_run_the_reference(name, shapes):
    """The door sends float64 GRU and LSTM forwards to numpy (their kernels lost to it there), float32 to the kernel."""
    rng = np.random.default_rng(0)
    for dtype, function in ((np.float64, fast_path.reference(name)), (np.float32, fast_path.kernel(name))):
        args = [rng.standard_normal(s).astype(dtype) * 3 for s in shapes] + [None]
        for got, want in zip(getattr(arrays, name)(*args), function(*args)):
            np.testing.assert_array_equal(got, want, err_msg=f"{name} {np.dtype(dtype)}")
