"""tinyattn's one random generator, behind initialisation, dropout and ta.randn.

`manual_seed(s)` makes every random draw of tinyattn (ta.randn, layer initialisation,
dropout) repeat from run to run; `get_rng_state` / `set_rng_state` let a checkpoint carry it.
"""
import numpy as np

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
