"""Sum rows into a table by index: out[indices[i]] += rows[i] (the backward of a table lookup).

A repeated index adds up, so out = zeros, then one addition per row. The reference is numpy's
unbuffered np.add.at (which handles repeats but runs a slow generic loop); the Numba kernel is
the loop itself, each row added with a vectorized loop over the columns.
"""
import numba
import numpy as np



@numba.njit(cache=True)
def _scatter_kernel(indices, rows, out):
    for i in range(indices.shape[0]):
        target = out[indices[i]]
        source = rows[i]
        for d in range(rows.shape[1]):
            target[d] += source[d]


def scatter_rows(indices, rows, num_rows):
    """indices (N,) ints in [0, num_rows), rows (N, D) -> (num_rows, D) with each row added at its index."""
    indices = np.ascontiguousarray(indices, np.int64)
    # Numba does not check bounds: an index outside the table would write outside `out`
    if indices.size and not (-num_rows <= indices.min() and indices.max() < num_rows):
        raise IndexError(f"scatter_rows: indices run from {indices.min()} to {indices.max()}, "
                         f"outside a table of {num_rows} rows")
    out = np.zeros((num_rows, rows.shape[1]), rows.dtype)
    _scatter_kernel(indices, np.ascontiguousarray(rows), out)
    return out
