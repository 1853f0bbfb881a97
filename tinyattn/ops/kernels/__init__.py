"""Compiled (Numba, or BLAS for sums) versions of some array functions of tinyattn/ops/reference.py.

Nothing here is imported until tinyattn/ops/arrays.py runs a kernel for the first time.
"""
