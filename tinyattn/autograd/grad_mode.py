"""Grad mode: whether ops record the graph. `with ta.no_grad():` turns it off for a block.

It is kept per thread, as in PyTorch: a `no_grad()` block in one thread leaves the others
recording, and every new thread starts with grad mode on.
"""
import functools
import threading


class _GradMode(threading.local):
    enabled = True  # each thread starts here; an assignment holds for its own thread only


_grad_mode = _GradMode()


def is_grad_enabled():
    """True unless inside `no_grad()` (in this thread)."""
    return _grad_mode.enabled


class no_grad:
    """Build no graph inside this block or decorated function: for inference and updates.

    `with ta.no_grad():`, `@ta.no_grad()` and `@ta.no_grad` all work, nested or recursive:
    each entry remembers the state it found on a stack and each exit restores it. A decorated
    function enters a fresh block per call, as PyTorch's: threads calling it at once each get
    their own saved state back.
    """

    enabled = False  # what the block sets

    def __init__(self, function=None):
        self._previous = []
        self._function = function
        if function is not None:
            functools.update_wrapper(self, function)

    def __enter__(self):
        self._previous.append(_grad_mode.enabled)
        _grad_mode.enabled = self.enabled
        return self

    def __exit__(self, *exc):
        _grad_mode.enabled = self._previous.pop()
        return False

    def __call__(self, *args, **kwargs):
        if self._function is not None:  # used bare: @ta.no_grad
            with type(self)():
                return self._function(*args, **kwargs)
        (function,) = args  # used with parentheses: @ta.no_grad()
        return type(self)(function)

    def __get__(self, instance, owner=None):
        """On a method, bind like a function does: model.predict(x) passes model as self."""
        if instance is None or self._function is None:
            return self
        return functools.partial(self.__call__, instance)


class enable_grad(no_grad):
    """Build the graph again inside a `no_grad()` block."""

    enabled = True
