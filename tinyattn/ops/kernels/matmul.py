"""Batched matrix products, C = A @ B with numpy's broadcasting rules: BLAS through np.matmul.

Every product of tinyattn comes here. A Numba GEMM kernel was measured against OpenBLAS and
lost on every shape tried (commit 9a66814 and git history keep it, figures included). One case
is faster without BLAS: an inner size of 1, where each c_ij is the single product a_i1 b_1j, so C is an outer product per batch entry (the gradient of the values in an
attention step that reads one query, (B, S, 1) @ (B, 1, D)). np.matmul runs a batched loop for
it and the broadcast product A * B pays numpy's per-row loop overhead; `_outer_kernel` writes it
in one pass (benchmarks/RESULTS.md, "outer product (64, 14, 1) @ (64, 1, 128) against a * b").
"""
import numba
import numpy as np



@numba.njit(cache=True)
def _outer_kernel(a, b, out):
    """out[r, i, j] = a[r, i] * b[r, j]: one outer product per batch entry r."""
    for r in range(a.shape[0]):
        for i in range(a.shape[1]):
            scale, row = a[r, i], out[r, i]
            for j in range(b.shape[1]):
                row[j] = scale * b[r, j]


def _outer_products(a, b):
    """(..., n, 1) @ (..., 1, m) with the same batch axes, as (..., n, m) products."""
    out = np.empty(a.shape[:-1] + (b.shape[-1],), a.dtype)
    if out.size == 0:  # no rows, columns or batch entries: nothing to write (and no (-1, 0) reshape)
        return out
    n, m = a.shape[-2], b.shape[-1]
    _outer_kernel(np.ascontiguousarray(a).reshape(-1, n), np.ascontiguousarray(b).reshape(-1, m),
                  out.reshape(-1, n, m))
    return out


def matmul(a, b):
    """(..., n, k) @ (..., k, m) with numpy semantics (ndim >= 2), as a fresh C-contiguous array."""
    if a.shape[-1] == 1 and b.shape[-2] == 1 and a.dtype == b.dtype:  # outer products: no sum to do
        if a.shape[:-2] == b.shape[:-2]:
            return _outer_products(a, b)
        return a * b  # batch axes that broadcast: numpy's product broadcasts them as matmul would
    return np.ascontiguousarray(np.matmul(a, b))
