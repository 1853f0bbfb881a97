"""Binary cross-entropy and mean squared error, as PyTorch's F.binary_cross_entropy,
F.binary_cross_entropy_with_logits and F.mse_loss (one argument check and one reduction for all three).

The one on logits is composed from log, exp, abs and ta.maximum (so its gradient is theirs); the
one on probabilities is one node, because its gradient at p = 0 or 1 needs PyTorch's guard."""
import numpy as np

from ..autograd.rules_reduce import maximum
from ..autograd.dtypes import ShapeError, require_float
from ..autograd.function import Function
from ..autograd.tensor import pair


class BinaryCrossEntropy(Function):
    """l = -(t log p + (1 - t) log(1 - p)), each log clamped at -100 (PyTorch's), element-wise.

    dl/dp = (p - t) / (p (1 - p)), with the denominator kept >= 1e-12 as PyTorch's backward keeps
    it, so a saturated p (exactly 0 or 1, common in float32) gives a finite gradient, not 0/0;
    dl/dt = log(1 - p) - log(p) (clamped logs)."""

    @staticmethod
    def forward(ctx, p, t):
        with np.errstate(divide="ignore"):
            log_p, log_not_p = np.maximum(np.log(p), -100), np.maximum(np.log1p(-p), -100)
        ctx.save_for_backward(p, t, log_p, log_not_p)
        return -(t * log_p + (1 - t) * log_not_p)

    @staticmethod
    def backward(ctx, g):
        p, t, log_p, log_not_p = ctx.saved_arrays
        need_p, need_t = ctx.needs_input_grad
        return (g * (p - t) / np.maximum(p * (1 - p), p.dtype.type(1e-12)) if need_p else None,
                g * (log_not_p - log_p) if need_t else None)


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """-weight (t log p + (1 - t) log(1 - p)) for probabilities p = input in [0, 1]; each log is
    clamped at -100, as PyTorch does, so p = 0 or 1 gives a finite loss."""
    _check("binary_cross_entropy", input, target, reduction)
    if ((input.data < 0) | (input.data > 1)).any():
        raise ValueError("binary_cross_entropy: input must be probabilities in [0, 1]; for raw scores use "
                         "F.binary_cross_entropy_with_logits")
    loss = BinaryCrossEntropy.apply(*pair(input, target))
    return _reduce(loss if weight is None else loss * weight, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean", pos_weight=None):
    """binary_cross_entropy(sigmoid(input), target) without its overflow: PyTorch's formula
    (1 - t) x + (1 + (pos_weight - 1) t) softplus(-x), with softplus(-x) = max(-x, 0) + log(1 + exp(-|x|))."""
    _check("binary_cross_entropy_with_logits", input, target, reduction)
    softplus_neg = stable_softplus(-input)
    scale = 1.0 if pos_weight is None else (pos_weight - 1) * target + 1
    loss = (1 - target) * input + scale * softplus_neg
    return _reduce(loss if weight is None else loss * weight, reduction)


def mse_loss(input, target, reduction="mean"):
    """Mean (or sum, or none) of (input - target)^2, as PyTorch's F.mse_loss; composed, so autograd
    differentiates it. A target of another shape is refused (PyTorch broadcasts it with a warning)."""
    _check("mse_loss", input, target, reduction)
    return _reduce((input - target) ** 2, reduction)


def stable_softplus(z):
    """log(1 + exp(z)) = max(z, 0) + log(1 + exp(-|z|)): exp never overflows, and ta.maximum
    splits its gradient at z = 0, giving the true slope 1/2 there."""
    return maximum(z, 0.0) + ((-abs(z)).exp() + 1.0).log()


def _check(op, input, target, reduction):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if tuple(getattr(target, "shape", ())) != tuple(input.shape):
        raise ShapeError(f"{op}: input {input.shape} and target {getattr(target, 'shape', ())} must have one shape")
    require_float(op, input=input.data)


def _reduce(loss, reduction):
    return loss if reduction == "none" else loss.mean() if reduction == "mean" else loss.sum()
