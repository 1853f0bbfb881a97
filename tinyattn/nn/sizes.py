"""The check every layer constructor makes of its sizes, so that nn.Linear(3, -2) says what is wrong
instead of failing inside numpy (or, worse, building a layer with no units)."""
import numpy as np


def check_sizes(layer, **sizes):
    """Refuse any size that is not a whole number >= 1, naming the layer, the argument and the value."""
    for name, value in sizes.items():
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{layer}: {name} must be a whole number >= 1, got {value!r}")
