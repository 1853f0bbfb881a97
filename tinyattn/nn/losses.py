"""Binary cross-entropy, as PyTorch's F.binary_cross_entropy and F.binary_cross_entropy_with_logits,
composed from log, exp, abs and ta.maximum (so their gradients are those ops')."""
from ..autograd.compare import maximum
from ..autograd.errors import ShapeError, require_float


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """-weight (t log p + (1 - t) log(1 - p)) for probabilities p = input in [0, 1]; each log is
    clamped at -100, as PyTorch does, so p = 0 or 1 gives a finite loss."""
    _check("binary_cross_entropy", input, target, reduction)
    if ((input.data < 0) | (input.data > 1)).any():
        raise ValueError("binary_cross_entropy: input must be probabilities in [0, 1]; for raw scores use "
                         "F.binary_cross_entropy_with_logits")
    loss = -(target * input.log().clamp(min=-100.0) + (1 - target) * (1 - input).log().clamp(min=-100.0))
    return _reduce(loss if weight is None else loss * weight, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean", pos_weight=None):
    """binary_cross_entropy(sigmoid(input), target) without its overflow: PyTorch's formula
    (1 - t) x + (1 + (pos_weight - 1) t) softplus(-x), with softplus(-x) = max(-x, 0) + log(1 + exp(-|x|))."""
    _check("binary_cross_entropy_with_logits", input, target, reduction)
    softplus_neg = maximum(-input, 0.0) + ((-abs(input)).exp() + 1.0).log()
    scale = 1.0 if pos_weight is None else (pos_weight - 1) * target + 1
    loss = (1 - target) * input + scale * softplus_neg
    return _reduce(loss if weight is None else loss * weight, reduction)


def _check(op, input, target, reduction):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if tuple(getattr(target, "shape", ())) != tuple(input.shape):
        raise ShapeError(f"{op}: input {input.shape} and target {getattr(target, 'shape', ())} must have one shape, "
                         "as PyTorch requires")
    require_float(op, input=input.data)


def _reduce(loss, reduction):
    return loss if reduction == "none" else loss.mean() if reduction == "mean" else loss.sum()
