"""One Adam update of one parameter, in place, every number in the parameter's dtype.

    m = b1 m + (1 - b1) g,   v = b2 v + (1 - b2) g^2
    p -= step_size * m / (sqrt(v) / sqrt(1 - b2^t) + eps),   step_size = lr / (1 - b1^t)

(with g + weight_decay * p for g when weight_decay is not 0). The reference is numpy, one pass
over the arrays per operation (about ten); the Numba kernel does the same operations in the
same order, rounding for rounding, in one pass, so both give the same bits.
"""
import numba
import numpy as np



@numba.njit(cache=True, error_model="numpy")
def _adam_kernel(p, g, m, v, b1, b2, step_size, bias2_sqrt, eps, weight_decay):
    (b1, one_minus_b1), (b2, one_minus_b2) = b1, b2
    for j in range(p.shape[0]):
        gj = g[j] + weight_decay * p[j] if weight_decay else g[j]
        m[j] = m[j] * b1 + one_minus_b1 * gj
        v[j] = v[j] * b2 + one_minus_b2 * gj * gj
        p[j] -= step_size * (m[j] / (np.sqrt(v[j]) / bias2_sqrt + eps))


def adam_update(p, g, m, v, b1, b2, step_size, bias2_sqrt, eps, weight_decay):
    """Update p, m and v in place (see the top). The kernel writes through flat views, so p, m and
    v must be C-contiguous (a reshape of any other array is a copy, and the update would be lost);
    arrays.adam_update sends other layouts to the reference."""
    if not (p.flags.c_contiguous and m.flags.c_contiguous and v.flags.c_contiguous and p.shape == m.shape == v.shape):
        raise ValueError(f"adam_update's kernel updates p, m, v in place: they need one shape and C order, "
                         f"got shapes {p.shape}, {m.shape}, {v.shape}; the door sends other arrays to the reference")
    if g.shape != p.shape:  # a gradient that broadcasts, as the reference allows
        g = np.broadcast_to(g, p.shape)
    _adam_kernel(p.reshape(-1), np.ascontiguousarray(g).reshape(-1), m.reshape(-1), v.reshape(-1),
                 b1, b2, step_size, bias2_sqrt, eps, weight_decay)
