"""The logistic sigmoid 1 / (1 + exp(-x)) on an array, without overflow for any x.

With e = exp(-|x|) <= 1 it is 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, so exp never
sees a large positive number. The reference is that formula in numpy (three passes over x);
the Numba kernel applies fast_sigmoid (fast_activations.py) in one vectorized pass.
"""
import numba
import numpy as np

from .fast_activations import fast_sigmoid


@numba.njit(cache=True, error_model="numpy")
def _sigmoid_kernel(x, out):
    for j in range(x.shape[0]):
        out[j] = fast_sigmoid(x[j])


def sigmoid(x):
    # out is made C-ordered from x's shape: np.ascontiguousarray would turn a 0-d x into shape (1,)
    out = np.empty(x.shape, x.dtype)
    _sigmoid_kernel(np.ascontiguousarray(x).reshape(-1), out.reshape(-1))
    return out
