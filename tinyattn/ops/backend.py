"""Which implementation an array function runs: a compiled kernel or its plain numpy reference.

`TINYATTN_BACKEND=numpy` in the environment makes every array function use its reference, which
is handy for reading a traceback, for checking that a bug is in a kernel, and for machines where
Numba will not compile. Tests switch the backend in-process with `use_backend("numpy")`.
"""
import contextlib
import os

import numpy as np

BACKENDS = ("numba", "numpy")

_backend = os.environ.get("TINYATTN_BACKEND", "numba").strip().lower() or "numba"
if _backend not in BACKENDS:
    raise ValueError(
        f"TINYATTN_BACKEND={_backend!r} is not a backend; use one of {', '.join(BACKENDS)}"
    )

KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))  # what the compiled kernels take


def kernel_takes(*args, contiguous=False):
    """The one rule that lets a compiled kernel run: the backend is "numba", and every floating
    array among `args` is float32 or float64, all of one dtype (and C-contiguous where the kernel
    reads memory in order), with at least one. Otherwise the numpy reference runs: float16, an
    integer input or a mixed call never reaches Numba. Other arguments (numbers, None) and
    non-float arrays (indices, bool masks) do not vote: each kernel converts them itself."""
    if _backend == "numpy":
        return False
    dtype = None
    for array in args:
        if array.__class__ is not np.ndarray:
            continue
        this = array.dtype
        if this.kind == "f":
            if dtype is None:
                if this not in KERNEL_DTYPES:
                    return False
                dtype = this
            elif this is not dtype and this != dtype:
                return False
        if contiguous and not array.flags.c_contiguous:
            return False
    return dtype is not None


def get_backend():
    """The backend in force: "numba" (the default) or "numpy"."""
    return _backend


def set_backend(name):
    """Switch every array function to `name` ("numba" or "numpy") for the rest of the process."""
    global _backend
    if name not in BACKENDS:
        raise ValueError(f"backend {name!r} is not one of {', '.join(BACKENDS)}")
    _backend = name


@contextlib.contextmanager
def use_backend(name):
    """Run the block with backend `name`, then restore the previous one."""
    previous = _backend
    set_backend(name)
    try:
        yield
    finally:
        set_backend(previous)
