"""The one switch for every fused node: `with ta.fused(False):` builds each layer from primitive ops.

A fused node (this package) is one graph node for a whole block: an attention step, a GRU
sequence, a decoder loop. It is fast, but it hides what it computes: no scores, no softmax, no
recurrent step exists as a tensor that retain_grad, a hook, ta.autograd.trace or
ta.viz.draw_graph could see. With the switch off, every layer builds instead the composed graph
its fused node equals, with the same outputs and gradients (tests/test_fused_switch.py: 1e-10
in float64).

    with ta.fused(False):        # composed graphs inside the block; the state before comes back on exit
        out, weights = mha(x, x, x)
    ta.is_fused()                # True (the default) or False
    ta.fused(False)              # a plain call switches for the rest of the thread (as torch.set_grad_enabled)
    TINYATTN_FUSED=0 python ...  # off for a whole run (read once, on import)

The state is per thread, as PyTorch's grad mode: a block in one thread does not switch the layers
another thread is running, and every new thread starts from TINYATTN_FUSED (default on).

Layers read the switch when they build their graph (forward), not in backward: a graph built
inside the block keeps its primitive ops after the block ends.
"""
import os
import threading

_ON, _OFF = ("1", "true"), ("0", "false")


def _from_environment():
    value = os.environ.get("TINYATTN_FUSED", "1").strip().lower() or "1"
    if value not in _ON + _OFF:
        raise ValueError(f"TINYATTN_FUSED={value!r}: use 1 (fused nodes, the default) or 0 (every layer "
                         "as its composed graph)")
    return value in _ON


class _Switch(threading.local):
    on = _from_environment()  # each thread starts here; an assignment holds for its own thread only


_switch = _Switch()


def is_fused():
    """True when layers use their fused nodes (the default); False under `ta.fused(False)` or TINYATTN_FUSED=0."""
    return _switch.on


class fused:
    """`with ta.fused(flag):` runs the block with fused nodes on (True) or off (False), then
    restores the state it found; blocks nest. Called alone, the state stays switched (in this thread)."""

    def __init__(self, flag):
        if not isinstance(flag, bool):
            raise TypeError(f"ta.fused: flag must be True or False, got {flag!r}; "
                            "ta.is_fused() tells the current state")
        self._previous, _switch.on = _switch.on, flag

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _switch.on = self._previous
        return False
