"""gru_step: hints, worked solution, classic mistakes."""
import numpy as np

from . import Mistake

HINTS = [
    "Start at h' = (1 - z) n + z h: it gives dL/dn, dL/dz and a first, direct part of dL/dh. Keep "
    "that part: h also reaches h' through gh.",
    "Through the nonlinearities to the pre-activations: sigmoid' = s (1 - s), tanh' = 1 - tanh^2, "
    "written with the outputs r, z, n that forward kept.",
    "n's pre-activation is gi_n + r * gh_n: it sends gradient to r (times gh_n) and to gh_n (times r). "
    "gi_n gets it unchanged.",
    "Stack the pre-activation gradients as [r | z | n] for gi and for gh (they differ in the n block). "
    "Then two Linear backwards, as in the RNN step; dL/dh adds the direct part from the first hint.",
]


def backward(grad, cache):
    """dz = grad (h - n) z(1-z), dn_pre = grad (1-z)(1-n^2), dr = dn_pre gh_n r(1-r) (r scales gh_n).
    dgi = [dr | dz | dn_pre], dgh = [dr | dz | dn_pre r]. Linear backwards for both projections;
    h also reaches h' directly (z h), which adds grad * z."""
    x, h, w_ih, w_hh, r, z, n, h_n = cache
    d_z = grad * (h - n) * z * (1 - z)
    d_n = grad * (1 - z) * (1 - n ** 2)
    d_r = d_n * h_n * r * (1 - r)
    d_gi = np.concatenate([d_r, d_z, d_n], axis=1)
    d_gh = np.concatenate([d_r, d_z, d_n * r], axis=1)
    d_h = grad * z + d_gh @ w_hh
    return d_gi @ w_ih, d_h, d_gi.T @ x, d_gh.T @ h, d_gi.sum(axis=0), d_gh.sum(axis=0)


def mistakes(grad, cache, inputs):
    x, h, w_ih, w_hh, r, z, n, h_n = cache
    d_z = grad * (h - n) * z * (1 - z)
    d_n = grad * (1 - z) * (1 - n ** 2)
    d_r = d_n * h_n * r * (1 - r)
    d_gh = np.concatenate([d_r, d_z, d_n * r], axis=1)
    return [
        Mistake("x", np.concatenate([d_n * r * (1 - r), d_z, d_n], axis=1) @ w_ih, "the reset gate's block is "
                "off: r multiplies gh_n = h W_hn^T + b_hn, so its gradient carries gh_n as a factor"),
        Mistake("x", np.concatenate([d_r, -d_z, d_n], axis=1) @ w_ih, "the update gate's block has the wrong "
                "sign: h' = (1 - z) n + z h, so dh'/dz = h - n"),
        Mistake("h", d_gh @ w_hh, "yours misses the direct path: h' = ... + z * h uses h itself, which adds "
                "grad * z to dL/dh"),
        Mistake("h", grad * z + np.concatenate([d_r, d_z, d_n], axis=1) @ w_hh, "the n block of the gradient "
                "reaching gh misses r: n = tanh(gi_n + r * gh_n), so gh_n's gradient is dn_pre * r"),
    ]
