"""The heavy ops: matmul, softmax, log-softmax, the fused cross-entropy (class or probability
targets) and einsum.

They call array functions (tinyattn/ops/reference.py has them in plain numpy, along the last
axis), so this file holds only the calculus.
"""
import numpy as np

from ..ops import arrays
from . import tensor as _tensor
from .dtypes import ShapeError, broadcasts_to, require_float, unbroadcast
from .function import Function


def _matmul_shapes(a_shape, b_shape):
    """Check a @ b before any kernel runs; name the op and both shapes on failure."""
    if len(a_shape) == 0 or len(b_shape) == 0:
        raise ShapeError(f"matmul: {a_shape} @ {b_shape}: scalars have no matrix product; use *")
    inner_a = a_shape[-1]
    inner_b = b_shape[0] if len(b_shape) == 1 else b_shape[-2]
    if inner_a != inner_b:
        raise ShapeError(f"matmul: {a_shape} @ {b_shape}: inner sizes {inner_a} and {inner_b} differ")
    try:
        np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    except ValueError:
        raise ShapeError(
            f"matmul: {a_shape} @ {b_shape}: batch dims {a_shape[:-2]} and {b_shape[:-2]} do not broadcast"
        ) from None


class MatMul(Function):
    """y = a @ b, batched with broadcast batch dims;  dL/da = g @ b^T,  dL/db = a^T @ g.

    (y_ij = sum_k a_ik b_kj, so dy_ij/da_ik = b_kj and dy_ij/db_kj = a_ik.) A 1-D operand is a
    row (left) or column (right) vector, as in numpy, and loses that axis in y again.
    """

    @staticmethod
    def forward(ctx, a, b):
        _matmul_shapes(a.shape, b.shape)
        ctx.shapes = a.shape, b.shape
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        ctx.save_for_backward(a2, b2)
        y = arrays.matmul(a2, b2) if a.dtype.kind == "f" else np.matmul(a2, b2)
        if b.ndim == 1:
            y = y[..., 0]
        if a.ndim == 1:
            y = y[..., 0, :] if b.ndim > 1 else y[..., 0]
        return y

    @staticmethod
    def backward(ctx, g):
        a2, b2 = ctx.saved_arrays
        shape_a, shape_b = ctx.shapes
        need_a, need_b = ctx.needs_input_grad
        # Give g back the axes that 1-D operands dropped, so it is (..., n, m) again.
        if len(shape_b) == 1:
            g = g[..., None]
        if len(shape_a) == 1:
            g = g[..., None, :]
        grad_a = grad_b = None
        if need_a:
            grad_a = unbroadcast(arrays.matmul(g, b2.swapaxes(-1, -2)), a2.shape).reshape(shape_a)
        if need_b:
            grad_b = unbroadcast(arrays.matmul(a2.swapaxes(-1, -2), g), b2.shape).reshape(shape_b)
        return grad_a, grad_b


def _along(axis, function, *inputs):
    """Run a last-axis array function along `axis`: swap that axis with the last, run, swap back.
    (Each row is computed alone, so the order of the other axes does not matter.)"""
    return function(*(a.swapaxes(axis, -1) for a in inputs)).swapaxes(axis, -1)


class Softmax(Function):
    """y = exp(x) / sum(exp(x)) along `axis`, over the places where mask is True (else 0).

    dL/dx = y * (g - sum(g * y)): the Jacobian is diag(y) - y y^T. A row with nothing to
    attend gives zeros, never NaN, and masked places get zero gradient since y = 0 there.
    """

    @staticmethod
    def forward(ctx, x, axis, mask):
        require_float("softmax", x=x)
        if mask is not None:
            mask = np.asarray(mask)
            if mask.dtype != np.bool_:
                raise TypeError(f"softmax: the mask must be bool (True = may attend), got {mask.dtype}")
            if not broadcasts_to(mask.shape, x.shape):
                raise ShapeError(f"softmax: mask {mask.shape} does not broadcast to the scores' {x.shape}")
            # Give the mask x's number of axes (size 1 where it broadcasts), never x's size:
            # a broadcast mask is read through strides, never copied to the scores' size.
            mask = mask.reshape((1,) * (x.ndim - mask.ndim) + mask.shape).swapaxes(axis, -1)
        y = arrays.softmax(x.swapaxes(axis, -1), mask)  # along the last axis (_along)
        ctx.save_for_backward(y)
        ctx.axis = axis
        return y.swapaxes(axis, -1)

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_arrays  # kept with the softmax axis last
        return _along(ctx.axis, lambda g_last: arrays.softmax_backward(y, g_last), g), None, None


class CrossEntropy(Function):
    """Per kept target t (classes on the last axis, smoothing e, C classes, class weights w, all 1
    when not given), PyTorch's loss, with p = arrays.softmax(z):
        l = -(1 - e) w_t log p[t] - (e / C) sum_c w_c log p[c],
    then reduced: "mean" (the sum over kept targets divided by their sum of w_t: their count when
    unweighted), "sum", or "none" (one per target, 0 where ignored).

    dl/dz = (1 - e) w_t (p - onehot(t)) + (e / C) (p sum_c w_c - w) on kept rows, 0 on ignored ones,
    times each row's upstream (g / sum w_t for "mean"); unweighted, p - (1 - e) onehot(t) - e / C.
    Fused: one log-softmax, no one-hot matrix in forward. If every target is ignored the mean is
    0 with zero gradient (PyTorch gives NaN), so a batch of padding cannot poison training.
    """

    @staticmethod
    def forward(ctx, logits, target, weight, ignore_index, reduction, label_smoothing):
        require_float("cross_entropy", logits=logits)
        target = check_targets(logits, target, ignore_index)
        classes = logits.shape[-1]
        log_probs = arrays.log_softmax(logits.reshape(-1, classes))
        flat_target = target.reshape(-1)
        kept = flat_target != ignore_index if ignore_index is not None else np.ones(flat_target.shape, bool)
        safe_target = np.where(kept, flat_target, 0)
        rows = np.arange(flat_target.size)
        count = int(kept.sum())
        losses = -log_probs[rows, safe_target]
        if weight is not None:
            losses = losses * weight[safe_target]
        if label_smoothing:
            spread = log_probs.sum(-1) if weight is None else log_probs @ weight
            losses = (1 - label_smoothing) * losses - (label_smoothing / classes) * spread
        losses = np.where(kept, losses, 0).astype(logits.dtype)
        # "mean" divides by the kept targets' weight: their count unweighted, 1 if none is kept (a 0 loss)
        share = (count if weight is None else weight[safe_target[kept]].sum()) if count else 1
        ctx.save_for_backward(log_probs, safe_target, kept, weight)
        ctx.meta = logits.shape, share, reduction, label_smoothing
        if reduction == "none":
            return losses.reshape(target.shape)
        total = np.sum(losses)
        with np.errstate(invalid="ignore", divide="ignore"):  # kept targets of weight 0 only: NaN, as PyTorch
            return np.asarray(total if reduction == "sum" else total / share, dtype=logits.dtype)

    @staticmethod
    def backward(ctx, g):
        log_probs, safe_target, kept, weight = ctx.saved_arrays
        shape, share, reduction, smoothing = ctx.meta
        rows, grad = np.arange(safe_target.size), np.exp(log_probs)
        if weight is None:
            grad[rows, safe_target] -= 1 - smoothing
            if smoothing:
                grad -= smoothing / shape[-1]
        else:
            row_weight = weight[safe_target]
            grad *= ((1 - smoothing) * row_weight + (smoothing / shape[-1]) * weight.sum())[:, None]
            grad[rows, safe_target] -= (1 - smoothing) * row_weight
            if smoothing:
                grad -= (smoothing / shape[-1]) * weight
        with np.errstate(invalid="ignore", divide="ignore"):
            per_row = g.reshape(-1) if reduction == "none" else g / share if reduction == "mean" else g
            grad *= (kept * per_row).astype(grad.dtype)[:, None]
        return grad.reshape(shape), None, None, None, None, None


class ProbabilityCrossEntropy(Function):
    """Cross-entropy against a probability target q of the logits' shape (soft labels, classes on
    the last axis), PyTorch's: q' = (1 - e) q + e / C with smoothing e, w the class weights (1s
    when not given), per row  l = -sum_c w_c q'_c log p_c,  p = softmax(z); "mean" over the rows
    (0 for an empty batch, as CrossEntropy's; PyTorch gives NaN).

    dl/dz = p sum_c w_c q'_c - w q'  (as d log p_c / dz_j = [c = j] - p_j);  dl/dq = -(1 - e) w log p.
    """

    @staticmethod
    def forward(ctx, logits, target, weight, reduction, label_smoothing):
        require_float("cross_entropy", logits=logits, target=target)
        classes = logits.shape[-1]
        log_probs = arrays.log_softmax(logits.reshape(-1, classes))
        weighted = target.reshape(-1, classes) * (1 - label_smoothing) + label_smoothing / classes
        if weight is not None:
            weighted = weighted * weight
        losses = -(log_probs * weighted).sum(-1)
        ctx.save_for_backward(log_probs, weighted, weight)
        ctx.meta = logits.shape, max(losses.size, 1), reduction, label_smoothing
        if reduction == "none":
            return losses.reshape(logits.shape[:-1])
        total = np.sum(losses)
        return np.asarray(total if reduction == "sum" else total / ctx.meta[1], dtype=logits.dtype)

    @staticmethod
    def backward(ctx, g):
        log_probs, weighted, weight = ctx.saved_arrays
        shape, rows, reduction, smoothing = ctx.meta
        per_row = (g.reshape(-1) if reduction == "none" else np.broadcast_to(g / rows if reduction == "mean" else g,
                                                                             log_probs.shape[:1]))[:, None]
        grad_z = (np.exp(log_probs) * weighted.sum(-1, keepdims=True) - weighted) * per_row
        grad_q = None
        if ctx.needs_input_grad[1]:
            grad_q = (-(1 - smoothing) * log_probs * (1 if weight is None else weight) * per_row).reshape(shape)
        return grad_z.reshape(shape), grad_q, None, None, None


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """ta.cross_entropy: PyTorch's F.cross_entropy, but with the classes on the LAST axis: logits
    (N, C) or (B, T, C), targets (N,) or (B, T) of class indices, or probabilities of the logits'
    own shape (soft labels; a target that requires grad gets its gradient). (F.cross_entropy takes
    PyTorch's own layout, (N, C, d1, ...), and moves the classes here.)
    weight: one per class (C,), as PyTorch's (the "mean" then divides by the kept targets' weight);
    ignore_index (default -100, as PyTorch) marks class targets that count for nothing; reduction
    "mean" (over kept targets), "sum" or "none"; label_smoothing in [0, 1]. One graph node."""

    weight = check_options(weight, reduction, label_smoothing, input)
    if np.shape(getattr(target, "data", target)) == input.shape and input.ndim:  # probabilities, as PyTorch decides
        if ignore_index is not None and ignore_index >= 0:
            raise ValueError(f"cross_entropy: ignore_index={ignore_index} applies to class targets only, not to "
                             "the probability target given (PyTorch refuses it too)")
        if not isinstance(target, _tensor.Tensor):  # an array of probabilities takes the logits' float dtype
            target = np.asarray(target)
            target = target.astype(input.dtype) if target.dtype.kind == "f" else target
        return ProbabilityCrossEntropy.apply(input, target, weight, reduction, float(label_smoothing))
    target = target.data if isinstance(target, _tensor.Tensor) else target
    return CrossEntropy.apply(input, np.asarray(target), weight, ignore_index, reduction, float(label_smoothing))



def cross_entropy_classes_on_axis_1(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """F.cross_entropy: PyTorch's, with its layout: logits (N, C), or (N, C, d1, ...) with the classes
    on axis 1 and targets (N, d1, ...) of class indices, or probabilities of the logits' own shape;
    a sequence model's (B, T, C) logits go in as logits.transpose(1, 2), or to ta.cross_entropy,
    tinyattn's own, which takes the classes last. Options as ta.cross_entropy's (weight,
    ignore_index, reduction, label_smoothing)."""
    if input.ndim > 2:  # move the classes last, where the one graph node (CrossEntropy) wants them
        given = tuple(np.shape(getattr(target, "data", target)))
        wanted = (input.shape[0],) + tuple(input.shape[2:])
        if given == tuple(input.shape):  # probabilities: their classes move too
            target = target.permute(0, *range(2, input.ndim), 1) if hasattr(target, "permute") else \
                np.moveaxis(np.asarray(target), 1, -1)
        elif given != wanted:
            raise ShapeError(
                f"cross_entropy: input {tuple(input.shape)} has its classes on axis 1 (PyTorch's layout, "
                f"(N, C, d1, ...)), so the target must be {wanted} (class indices) or {tuple(input.shape)} "
                f"(probabilities), got {given}. "
                "For a sequence's (B, T, C) logits pass logits.transpose(1, 2), or use ta.cross_entropy (classes last)")
        input = input.permute(0, *range(2, input.ndim), 1)
    return cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)

# --------------------------------------------------------------------------------------------------
# Log-softmax as an op of its own (x.log_softmax(dim)): log-probabilities without the exp and
# log of a softmax in between, which would turn a tiny probability into log(0) = -inf.
# Like the ops above it calls array functions (ops/reference.py) along the last axis.
# --------------------------------------------------------------------------------------------------

class LogSoftmax(Function):
    """y = x - log(sum(exp(x))) along `axis`;  dL/dx = g - arrays.softmax(x) * sum(g) = g - exp(y) * sum(g)."""

    @staticmethod
    def forward(ctx, x, axis):
        require_float("log_softmax", x=x)
        y = _along(axis, arrays.log_softmax, x)
        ctx.save_for_backward(y)
        ctx.axis = axis
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_arrays
        return _along(ctx.axis, arrays.log_softmax_backward, y, g), None


# --------------------------------------------------------------------------------------------------
# cross_entropy's arguments checked (PyTorch's options, the class targets), so the rules above keep to the calculus.
# --------------------------------------------------------------------------------------------------

def check_options(weight, reduction, label_smoothing, logits):
    """The options checked; returns the class weights as an array of the logits' dtype (or None)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"cross_entropy: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must lie in [0, 1], got {label_smoothing}")
    if weight is None:
        return None
    if getattr(weight, "requires_grad", False):
        raise ValueError("cross_entropy: weight= requires grad, but the loss gives class weights no gradient "
                         "(PyTorch neither); call .detach() on it first")
    array = np.asarray(getattr(weight, "data", weight))
    classes = logits.shape[-1] if logits.ndim else 0
    if array.shape != (classes,) or array.dtype.kind not in "fiu":
        raise ShapeError(f"cross_entropy: weight= must hold one number per class, shape ({classes},) for logits "
                         f"{logits.shape}, got {array.dtype} of shape {array.shape}")
    if array.dtype.kind == "f" and array.dtype != logits.dtype and hasattr(weight, "data"):
        raise TypeError(f"cross_entropy: weight is {array.dtype} but the logits are {logits.dtype}; convert one "
                        "with .double() or .float() first")
    return array.astype(logits.dtype, copy=False)


def check_targets(logits, target, ignore_index):
    target = np.asarray(target)
    if logits.ndim < 2:
        raise ShapeError(f"cross_entropy: logits {logits.shape} need a class axis last, as (N, C) or (B, T, C)")
    if target.dtype.kind not in "iu":
        raise TypeError(f"cross_entropy: targets must be integer class indices, got {target.dtype}")
    if target.shape != logits.shape[:-1]:
        raise ShapeError(
            f"cross_entropy: logits {logits.shape} need targets of shape {logits.shape[:-1]}, got {target.shape}"
        )
    classes = logits.shape[-1]
    real = target[target != ignore_index] if ignore_index is not None else target
    if real.size and (real.min() < 0 or real.max() >= classes):
        bad = real[(real < 0) | (real >= classes)][0]
        raise IndexError(f"cross_entropy: target {bad} is not a class index in [0, {classes})")
    return target


# --------------------------------------------------------------------------------------------------
# ta.einsum: products and sums written with index letters, as numpy's and PyTorch's einsum.
#
#     ta.einsum("bij,bjk->bik", a, b)      batched matmul
#     ta.einsum("bhqd,bhkd->bhqk", q, k)   attention scores
#     ta.einsum("i,j->ij", u, v)           outer product
#     ta.einsum("ii->", a), ("ij->j", a)   trace, column sums
#
# One node; the gradient of each operand is again an einsum: the upstream gradient times every
# other operand, summed over what the operand does not carry (see Einsum.backward).
# --------------------------------------------------------------------------------------------------

def _parse(equation, n_operands):
    """(input subscripts, output subscripts) of an equation like "bij,bjk->bik"."""
    equation = equation.replace(" ", "")
    if "." in equation:
        raise NotImplementedError(f"einsum: '...' is not implemented ({equation!r}); name every dim with a letter")
    inputs, arrow, output = equation.partition("->")
    inputs = inputs.split(",")
    if len(inputs) != n_operands:
        raise ValueError(f"einsum: {equation!r} has {len(inputs)} operand(s), {n_operands} tensor(s) were given")
    if not arrow:  # implicit output: the letters used once, in alphabetical order (numpy's and PyTorch's rule)
        letters = "".join(inputs)
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    for term in inputs + [output]:
        if not term.isalpha() and term:
            raise ValueError(f"einsum: {equation!r}: subscripts must be letters")
    if len(set(output)) != len(output) or not set(output) <= set("".join(inputs)):
        raise ValueError(f"einsum: {equation!r}: each output letter must appear once, and in an input")
    return inputs, output


def _check_sizes(inputs, arrays, equation):
    sizes = {}
    for term, array in zip(inputs, arrays):
        if len(term) != array.ndim:
            raise ShapeError(f"einsum: {term!r} names {len(term)} dims, but that operand has shape {array.shape}")
        for letter, size in zip(term, array.shape):
            if sizes.setdefault(letter, size) != size:
                raise ShapeError(f"einsum: {equation!r}: dim {letter!r} is {sizes[letter]} in one place and {size} in another")
    return sizes


class Einsum(Function):
    """y = einsum(equation, x_1, ..., x_n).

    y is linear in each operand, so dL/dx_i = einsum(out, others -> x_i's letters)(g, others): the
    upstream times the other operands, summed over every letter x_i lacks. A letter only x_i has
    (summed away in forward) gets g copied along it; a repeated letter (a trace, "ii") writes the
    result onto that diagonal of zeros.
    """

    @staticmethod
    def forward(ctx, equation, *arrays):
        inputs, output = _parse(equation, len(arrays))
        ctx.meta = inputs, output, _check_sizes(inputs, arrays, equation)
        ctx.save_for_backward(*arrays)
        return np.einsum(",".join(inputs) + "->" + output, *arrays, optimize=len(arrays) > 2)

    @staticmethod
    def backward(ctx, g):
        arrays = ctx.saved_arrays
        inputs, output, sizes = ctx.meta
        grads = [None]
        for i, (term, array) in enumerate(zip(inputs, arrays)):
            if not ctx.needs_input_grad[i + 1]:
                grads.append(None)
                continue
            others = [(t, a) for j, (t, a) in enumerate(zip(inputs, arrays)) if j != i]
            letters = "".join(dict.fromkeys(term))  # term without repeats, in order
            reachable = set(output).union(*(t for t, _ in others))
            present = "".join(c for c in letters if c in reachable)
            part = np.einsum(",".join([output] + [t for t, _ in others]) + "->" + present, g, *(a for _, a in others))
            # letters only this operand has: every one of its entries along them got the same g
            full = np.broadcast_to(np.expand_dims(part, tuple(k for k, c in enumerate(letters) if c not in reachable)),
                                   tuple(sizes[c] for c in letters))
            if len(letters) == len(term):
                grads.append(np.array(full, dtype=array.dtype, order="C"))  # (ascontiguousarray makes 0-d 1-d)
            else:
                grad = np.zeros(array.shape, array.dtype)
                np.einsum(term + "->" + letters, grad)[...] = full  # einsum("ii->i", z) is a view of z's diagonal
                grads.append(grad)
        return tuple(grads)


def einsum(equation, *operands):
    """Sums of products over index letters (numpy's and PyTorch's einsum); operands may also come
    as one list, as torch.einsum("ij,jk", [a, b]) allows. One graph node."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum: the first argument is the equation, a string like 'ij,jk->ik', got {type(equation).__name__}")
    return Einsum.apply(equation, *_tensor.one_dtype("einsum", operands))  # float32 with int64: float32, as PyTorch's rule
