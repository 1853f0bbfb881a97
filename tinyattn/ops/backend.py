"""Which implementation an array function runs: a compiled kernel or its plain numpy reference.

`TINYATTN_BACKEND=numpy` in the environment makes every array function use its reference, which
is handy for reading a traceback, for checking that a bug is in a kernel, and for machines where
Numba will not compile. Tests switch the backend in-process with `use_backend("numpy")`.
"""
import contextlib
import os

BACKENDS = ("numba", "numpy")

_backend = os.environ.get("TINYATTN_BACKEND", "numba").strip().lower() or "numba"
if _backend not in BACKENDS:
    raise ValueError(
        f"TINYATTN_BACKEND={_backend!r} is not a backend; use one of {', '.join(BACKENDS)}"
    )
_fast_path = None  # ops/fast_path.py, once the fast path has been turned on


def get_backend():
    """The backend in force: "numba" (the default) or "numpy"."""
    return _backend


def set_backend(name):
    """Switch every array function to `name` ("numba" or "numpy") for the rest of the process:
    "numba" swaps the fast path's doors into ops/arrays.py, "numpy" leaves the references there."""
    global _backend, _fast_path
    if name not in BACKENDS:
        raise ValueError(f"backend {name!r} is not one of {', '.join(BACKENDS)}")
    _backend = name
    if name == "numba":
        from . import fast_path  # imported only when the fast path is turned on
        _fast_path = fast_path
        fast_path.install()
    elif _fast_path is not None:
        _fast_path.remove()


@contextlib.contextmanager
def use_backend(name):
    """Run the block with backend `name`, then restore the previous one."""
    previous = _backend
    set_backend(name)
    try:
        yield
    finally:
        set_backend(previous)


set_backend(_backend)  # the process's backend from TINYATTN_BACKEND, in force from import on
