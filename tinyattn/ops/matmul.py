"""Batched matrix products, C = A @ B with numpy's broadcasting rules: BLAS through np.matmul.

Every product of tinyattn comes here. A Numba GEMM kernel was measured against OpenBLAS and
lost on every shape tried (benchmarks/RESULTS.md, "Matmul"); it now lives, with its tests, in
benchmarks/experiments/matmul_numba.py. One case is faster without BLAS: an inner size of 1,
where each c_ij is the single product a_i1 b_1j, so C is the broadcast product A * B
(3-4x faster than np.matmul's batched loop for (64, 14, 1) @ (64, 1, 128), same bits).
"""
import numpy as np

from .backend import get_backend


def matmul_reference(a, b):
    """The numpy/BLAS reference: (..., n, k) @ (..., k, m) -> (..., n, m)."""
    return np.matmul(a, b)


def matmul(a, b):
    """(..., n, k) @ (..., k, m) with numpy semantics (ndim >= 2), as a fresh C-contiguous array."""
    if get_backend() == "numpy":
        return matmul_reference(a, b)
    if a.shape[-1] == 1 and a.dtype == b.dtype:  # outer products: no sum to do
        return a * b
    return np.ascontiguousarray(np.matmul(a, b))
