"""Sums over some axes of an array, as a product with a vector of ones where BLAS can do it.

A sum over axes is a matrix product in disguise. With the summed axes one run of axes in the
middle of a C-contiguous array, view it as (A, N, C): A the axes before, N the summed ones,
C the axes after. Then

    sum over N  =  x (A, N) @ ones(N)              if C == 1   (the last axes: a gemv)
                =  ones(N) @ x (N, C)              if A == 1   (the first axes)
                =  ones(1, N) @ x (A, N, C)        otherwise   (one small product per a)

numpy's own sum walks a short axis element by element, per row: on this project's shapes
(summing 12 attention scores, 64 hidden units) the products are faster over a last or middle
axis; over the first axes numpy adds whole rows and wins up to 128 rows, so the door
(ops/fast_path.py) keeps numpy's sum there; from 256 rows the product wins (benchmarks/RESULTS.md,
"Small kernels, page faults, attribute reads": the rows "sum ... over (0,)";
benchmarks/bench_first_axis_sums.py). BLAS adds in float32 with several accumulators rather than
numpy's pairwise order, so the last bits can differ; a sum over more than 2^16 numbers, or over
every axis (a loss), stays numpy's, whose pairwise order loses less.
"""
import math

import numpy as np


_LONGEST_BLAS_SUM = 2 ** 16


def sum_over(x, axes, keepdims=False):
    """x summed over `axes` (a tuple of non-negative ints, or None for all), as numpy's sum."""
    if axes is None:
        return np.sum(x, axis=axes, keepdims=keepdims)
    first, last = min(axes, default=0), max(axes, default=-1)
    shape = x.shape
    summed = math.prod(shape[first:last + 1])
    if (len(axes) == x.ndim or last - first + 1 != len(axes) or not axes
            or x.size == 0 or summed > _LONGEST_BLAS_SUM):
        return np.sum(x, axis=axes, keepdims=keepdims)
    before, after = math.prod(shape[:first]), math.prod(shape[last + 1:])
    ones = np.ones(summed, x.dtype)
    if after == 1:
        total = x.reshape(before, summed) @ ones
    elif before == 1:
        total = ones @ x.reshape(summed, after)
    else:
        total = ones.reshape(1, summed) @ x.reshape(before, summed, after)
    if keepdims:
        return total.reshape(shape[:first] + (1,) * len(axes) + shape[last + 1:])
    return total.reshape(shape[:first] + shape[last + 1:])
