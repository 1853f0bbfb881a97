"""Compiled (Numba, or BLAS for sums) versions of some array functions of tinyattn/ops/reference.py.

Nothing here is imported until the fast path (tinyattn/ops/fast_path.py) runs a kernel for the first time.
"""
import numpy as np


def out_array(out, shape, dtype):
    """The array a kernel writes its result into: `out=` if given, which must be C-contiguous and of
    that shape and dtype (the kernel writes through a flat view), else a new one."""
    if out is None:
        return np.empty(shape, dtype)
    if out.shape != shape or out.dtype != dtype or not out.flags.c_contiguous:
        raise ValueError(f"out= must be a C-contiguous {np.dtype(dtype)} array of shape {shape}, got {out.dtype}"
                         f"{out.shape}{'' if out.flags.c_contiguous else ' not C-contiguous'}: pass such an array or none")
    return out
