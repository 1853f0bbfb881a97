"""Initialisers that fill a tensor in place, as PyTorch's torch.nn.init (same names, same rules).

Each draws from tinyattn's generator (ta.manual_seed makes it repeat), keeps the tensor's shape
and dtype, records nothing in the graph, and returns the tensor:

    nn.init.xavier_uniform_(layer.weight)          U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out))
    nn.init.kaiming_uniform_(layer.weight, a=0)    U(-b, b), b = gain * sqrt(3 / fan)   (kaiming.py)

fan_in and fan_out of a weight (out, in, *k) are in * prod(k) and out * prod(k), as PyTorch
counts them (Linear.weight is (out, in)).
"""
import math

import numpy as np

from ..autograd.creation import generator


def _fill(tensor, values):
    tensor.data[...] = values  # in place: a Parameter an optimiser holds stays the same object
    return tensor


def uniform_(tensor, a=0.0, b=1.0):
    """Fill with draws from U(a, b)."""
    if not a <= b:
        raise ValueError(f"uniform_: the low end a={a} must not exceed the high end b={b}")
    return _fill(tensor, generator().uniform(a, b, tensor.shape))


def normal_(tensor, mean=0.0, std=1.0):
    """Fill with draws from N(mean, std^2)."""
    if std < 0:
        raise ValueError(f"normal_: std must be >= 0, got {std}")
    return _fill(tensor, generator().normal(mean, std, tensor.shape))


def constant_(tensor, val):
    """Fill with one number."""
    return _fill(tensor, val)


def zeros_(tensor):
    """Fill with 0."""
    return _fill(tensor, 0)


def ones_(tensor):
    """Fill with 1."""
    return _fill(tensor, 1)


def _fans(tensor, op):
    if tensor.ndim < 2:
        raise ValueError(f"{op}: fan in and fan out need a tensor of at least 2 dims, got shape {tensor.shape}")
    receptive = int(np.prod(tensor.shape[2:]))
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def xavier_uniform_(tensor, gain=1.0):
    """U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio 2010)."""
    fan_in, fan_out = _fans(tensor, "xavier_uniform_")
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor, gain=1.0):
    """N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out)) (Glorot and Bengio 2010)."""
    fan_in, fan_out = _fans(tensor, "xavier_normal_")
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


from .kaiming import calculate_gain, kaiming_normal_, kaiming_uniform_  # noqa: E402,F401  (He et al.'s, with the gains)
