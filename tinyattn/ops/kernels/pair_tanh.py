"""The backward pass through additive attention's hidden layer, as one Numba pass.

The math (dpre = dscore v (1 - hidden^2), summed over the keys for dwq and over the queries for
duk) and the numpy version are in tinyattn/ops/reference_blocks.py, the whole step in
tinyattn/ops/additive_attention_arrays.py. Measured against the numpy reference for the translation
model, (64, 1, 14) scores with h = 64: benchmarks/RESULTS.md, "through_pair_tanh (attention backward pass)".
"""
import numba
import numpy as np



# ----------------------------------------------------------------------------- the two passes
@numba.njit(cache=True, error_model="numpy")
def _through_pair_tanh_kernel(d_score, v, hidden, d_wq, d_uk):
    B, Tq, Tk, h = hidden.shape
    one = v.dtype.type(1)
    d_wq[:] = 0
    d_uk[:] = 0
    for b in range(B):
        for i in range(Tq):
            dq = d_wq[b, i]
            for j in range(Tk):
                ds, row, dk = d_score[b, i, j], hidden[b, i, j], d_uk[b, j]
                for k in range(h):
                    d_pre = ds * v[k] * (one - row[k] * row[k])
                    dq[k] += d_pre
                    dk[k] += d_pre


def through_pair_tanh(d_score, v, hidden):
    B, Tq, Tk, h = hidden.shape
    d_wq, d_uk = np.empty((B, Tq, h), hidden.dtype), np.empty((B, Tk, h), hidden.dtype)
    _through_pair_tanh_kernel(*map(np.ascontiguousarray, (d_score, v, hidden)), d_wq, d_uk)
    return d_wq, d_uk
