"""The logistic sigmoid 1 / (1 + exp(-x)) on an array, without overflow for any x.

With e = exp(-|x|) <= 1 it is 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, so exp never
sees a large positive number. The reference is that formula in numpy (three passes over x);
the Numba kernel applies fast_sigmoid (fast_activations.py) in one vectorized pass.
"""
import numba
import numpy as np

from .backend import kernel_takes
from .fast_activations import fast_sigmoid


def sigmoid_reference(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1, e) / (1 + e)


@numba.njit(cache=True, error_model="numpy")
def _sigmoid_kernel(x, out):
    for j in range(x.shape[0]):
        out[j] = fast_sigmoid(x[j])


def sigmoid_numba(x):
    x = np.ascontiguousarray(x)
    out = np.empty_like(x)
    _sigmoid_kernel(x.reshape(-1), out.reshape(-1))
    return out


def sigmoid(x):
    """Element-wise sigmoid of a float array (Numba unless the backend is "numpy")."""
    x = np.asarray(x)
    if not kernel_takes(x):
        return sigmoid_reference(x)
    return sigmoid_numba(x)
