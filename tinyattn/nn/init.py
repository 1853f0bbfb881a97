"""Initialisers that fill a tensor in place, as PyTorch's torch.nn.init (same names, same rules).

Each draws from tinyattn's generator (ta.manual_seed makes it repeat), keeps the tensor's shape
and dtype, records nothing in the graph, and returns the tensor:

    nn.init.xavier_uniform_(layer.weight)          U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out))
    nn.init.kaiming_uniform_(layer.weight, a=0)    U(-b, b), b = gain * sqrt(3 / fan)

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


# He et al.'s initialisation (2015) and the gains it scales by: a layer followed by a ReLU (or
# another nonlinearity) keeps its activations' variance when its weights are drawn with
# variance gain^2 / fan.
def calculate_gain(nonlinearity, param=None):
    """The factor that keeps activations' variance through a layer followed by `nonlinearity`."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unknown nonlinearity {nonlinearity!r}; use one of "
                     f"{', '.join(linear + ('tanh', 'relu', 'leaky_relu', 'selu'))}")


def _fan(tensor, mode, op):
    """fan_in or fan_out of `tensor`, as `mode` says."""
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"{op}: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _fans(tensor, op)
    return fan_in if mode == "fan_in" else fan_out


def kaiming_uniform_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu"):
    """U(-b, b), b = gain * sqrt(3 / fan) (He et al. 2015); fan is fan_in or fan_out as `mode` says."""
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / _fan(tensor, mode, "kaiming_uniform_"))
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu"):
    """N(0, std^2), std = gain / sqrt(fan) (He et al. 2015)."""
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode, "kaiming_normal_")))
