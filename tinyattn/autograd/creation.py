"""New tensors, and the one random generator behind initialisation and dropout.

`manual_seed(s)` makes every random draw of tinyattn (ta.randn, layer initialisation,
dropout) repeat from run to run; `get_rng_state` / `set_rng_state` let a checkpoint carry it.
"""
import numpy as np

from .tensor import wrap

_generator = np.random.default_rng()


def manual_seed(seed):
    """Seed tinyattn's generator; returns it."""
    global _generator
    _generator = np.random.default_rng(seed)
    return _generator


def generator():
    """The generator that initialisation and dropout draw from."""
    return _generator


def get_rng_state():
    """The generator's state as a JSON-friendly dict."""
    return _generator.bit_generator.state


def set_rng_state(state):
    """Restore a state from get_rng_state(), so the next draws repeat exactly."""
    _generator.bit_generator.state = state


def _shape(shape):
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape


def _leaf(array, requires_grad):
    out = wrap(array)
    return out.requires_grad_(True) if requires_grad else out


def zeros(*shape, dtype=np.float32, requires_grad=False):
    return _leaf(np.zeros(_shape(shape), dtype), requires_grad)


def ones(*shape, dtype=np.float32, requires_grad=False):
    return _leaf(np.ones(_shape(shape), dtype), requires_grad)


def randn(*shape, dtype=np.float32, requires_grad=False):
    """Standard normal draws from tinyattn's generator."""
    return _leaf(_generator.standard_normal(_shape(shape)).astype(dtype), requires_grad)


def arange(start, end=None, step=1, dtype=None, requires_grad=False):
    """start, start + step, ... below end (PyTorch's torch.arange): int64 from integers, else float32."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        integral = all(float(v).is_integer() and not isinstance(v, float) for v in (start, end, step))
        dtype = np.int64 if integral else np.float32
    return _leaf(np.arange(start, end, step, dtype=dtype), requires_grad)
