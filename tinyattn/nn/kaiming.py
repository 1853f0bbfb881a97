"""He et al.'s initialisation (2015) and the gains it scales by, as PyTorch's torch.nn.init: a
layer followed by a ReLU (or another nonlinearity) keeps its activations' variance when its
weights are drawn with variance gain^2 / fan. nn.init names these with the other initialisers.
"""
import math


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


from .init import _fans, normal_, uniform_  # noqa: E402  (init.py imports this module at its end)
