"""Layers as plain functions (PyTorch's torch.nn.functional), for when no weights are kept."""

import numpy as np

from ..autograd.dtypes import dim_or_axis
from ..autograd.dtypes import require_float
from ..autograd.rules_elementwise import Hardswish, Hardtanh, Mish
from ..autograd.rules_shape import pad  # noqa: F401
from ..autograd.rules_elementwise import where
from ..autograd.rules_nn import cross_entropy_classes_on_axis_1 as cross_entropy  # noqa: F401
from ..autograd.spellings import module_getattr
from ..autograd.tensor import Tensor, wrap
from .gelu import gelu  # noqa: F401
from .masks import dropout_mask
from .losses import binary_cross_entropy, binary_cross_entropy_with_logits, mse_loss, stable_softplus  # noqa: F401
from .scaled_dot_product_attention import scaled_dot_product_attention, scaled_dot_product_attention_reference  # noqa: F401

__all__ = ["cross_entropy", "mse_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "softmax",
           "log_softmax", "relu", "gelu", "leaky_relu", "softplus", "elu", "celu", "hardtanh", "relu6", "softsign", "hardswish", "mish", "dropout", "pad", "one_hot",
           "scaled_dot_product_attention"]


@dim_or_axis
def softmax(x, axis=-1, mask=None):
    """softmax along `axis` (or PyTorch's `dim`); mask True = may attend."""
    return x.softmax(axis, mask=mask)


@dim_or_axis
def log_softmax(x, axis=-1):
    """x - log(sum(exp(x))) along `axis` (or PyTorch's `dim`), same shape."""
    return x.log_softmax(axis)


def relu(x):
    """max(x, 0) element-wise, same shape."""
    return x.relu()


def dropout(x, p=0.5, training=True):
    """Zero each element with probability p and scale the rest by 1/(1-p), so the mean is kept.

    Inactive (x itself) when not training or p = 0. The mask comes from tinyattn's generator,
    so ta.manual_seed makes it repeat.
    """
    if not 0 <= p <= 1:
        raise ValueError(f"dropout: p must be in [0, 1], got {p}")
    if not training or p == 0:
        return x
    require_float("dropout", x=x.data)  # the kept values are scaled by 1/(1-p): not an integer
    return x * wrap(dropout_mask(x.shape, p, x.dtype))


def leaky_relu(x, negative_slope=0.01):
    """x where x > 0, else negative_slope * x (PyTorch's leaky_relu; at 0 the slope is negative_slope, as there)."""
    return where((x > 0).data, x, x * negative_slope)


def softplus(x, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (PyTorch's softplus),
    the log written without overflow (losses.stable_softplus)."""
    z = x * beta
    return where((z > threshold).data, x, stable_softplus(z) / beta)


def elu(x, alpha=1.0):
    """x where x > 0, else alpha (exp(x) - 1) (PyTorch's elu); exp sees min(x, 0), so a large x
    cannot overflow the branch that is not taken (its inf would make a NaN gradient). A NaN takes
    the x branch, gradient 1, as PyTorch's (its elu tests x <= 0 for the other)."""
    return where(~(x <= 0).data, x, (x.clamp(max=0.0).exp() - 1.0) * alpha)


def celu(input, alpha=1.0, inplace=False):
    """x where x > 0, else alpha (exp(x / alpha) - 1) (PyTorch's celu: elu with its slope 1 at 0
    for every alpha); exp sees min(x, 0), as in elu."""
    _out_of_place("celu", inplace)
    if alpha == 0:
        raise ValueError("celu: alpha must not be 0 (x / alpha); PyTorch refuses it too")
    require_float("celu", input=input.data)
    return where((input > 0).data, input, ((input.clamp(max=0.0) / alpha).exp() - 1.0) * alpha)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """input clipped to [min_val, max_val] (PyTorch's hardtanh); gradient 1 strictly between, else 0."""
    _out_of_place("hardtanh", inplace)
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val {min_val} is above max_val {max_val}")
    return Hardtanh.apply(input, min_val, max_val)


def relu6(input, inplace=False):
    """min(max(x, 0), 6): hardtanh(x, 0, 6), as PyTorch's relu6 (gradient 0 at 0 and at 6)."""
    _out_of_place("relu6", inplace)
    return Hardtanh.apply(input, 0.0, 6.0)


def softsign(input):
    """x / (1 + |x|) (PyTorch's softsign, composed the same way)."""
    require_float("softsign", input=input.data)
    return input / (abs(input) + 1.0)


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6 (PyTorch's hardswish, MobileNetV3's); one node, ops_activations.Hardswish."""
    _out_of_place("hardswish", inplace)
    require_float("hardswish", input=input.data)
    return Hardswish.apply(input)


def mish(input, inplace=False):
    """x * tanh(softplus(x)) (PyTorch's mish); one node, ops_activations.Mish."""
    _out_of_place("mish", inplace)
    require_float("mish", input=input.data)
    return Mish.apply(input)


def _out_of_place(op, inplace):
    if inplace:
        raise ValueError(f"{op}: inplace=True is not supported; write y = F.{op}(x) (the same values, a new tensor)")


def one_hot(tensor, num_classes=-1):
    """int64 (..., num_classes) with a 1 at each class index (PyTorch's one_hot); num_classes=-1
    takes the largest index + 1."""
    ids = np.asarray(tensor.data if isinstance(tensor, Tensor) else tensor)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"one_hot: class indices must be integers, got {ids.dtype}")
    if num_classes == -1:
        if ids.size == 0:
            raise ValueError("one_hot: cannot infer num_classes from an empty tensor; pass num_classes=")
        num_classes = int(ids.max()) + 1
    if ids.size and (ids.min() < 0 or ids.max() >= num_classes):
        raise ValueError(f"one_hot: class indices must lie in [0, {num_classes}), got {ids.min()}..{ids.max()}")
    return wrap((ids[..., None] == np.arange(num_classes)).astype(np.int64))


__getattr__ = module_getattr(__name__, globals())
