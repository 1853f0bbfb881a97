"""Compiled (Numba, or BLAS for sums) versions of some array functions of tinyattn/ops/reference.py.

Nothing here is imported until the fast path (tinyattn/ops/fast_path.py) runs a kernel for the first time.
"""
