"""The element-wise part of a GRU and an LSTM step (after the matrix products), forward and
backward, as Numba kernels: one pass per row with loops over H that LLVM vectorizes (fast_exp,
fast_tanh; no fastmath; error_model="numpy").

The equations, the meaning of `keep`, and the numpy versions on whole arrays are in
tinyattn/ops/reference_blocks.py; the entry points below take the same arguments.
"""
import numba
import numpy as np

from .fast_activations import fast_sigmoid, fast_tanh


@numba.njit(cache=True, error_model="numpy")
def _gru_forward_kernel(gi, gh, h, keep, out, r, z, n):
    B, H = h.shape
    one = h.dtype.type(1)
    for b in range(B):
        for k in range(H):
            r[b, k] = fast_sigmoid(gi[b, k] + gh[b, k])
            z[b, k] = fast_sigmoid(gi[b, H + k] + gh[b, H + k])
            n[b, k] = fast_tanh(gi[b, 2 * H + k] + r[b, k] * gh[b, 2 * H + k])
        if keep[b]:
            for k in range(H):
                out[b, k] = (one - z[b, k]) * n[b, k] + z[b, k] * h[b, k]
        else:
            out[b] = h[b]


@numba.njit(cache=True, error_model="numpy")
def _gru_backward_kernel(g, h, r, z, n, gh, keep, d_gi, d_gh, dh):
    B, H = h.shape
    one, zero = h.dtype.type(1), h.dtype.type(0)
    for b in range(B):
        if not keep[b]:  # a frozen row: the gradient passes to the old state, none to the gates
            dh[b] = g[b]
            d_gi[b] = zero
            d_gh[b] = zero
            continue
        for k in range(H):
            zk, nk, rk = z[b, k], n[b, k], r[b, k]
            dz = g[b, k] * (h[b, k] - nk) * zk * (one - zk)
            dn_pre = g[b, k] * (one - zk) * (one - nk * nk)
            dr = dn_pre * gh[b, 2 * H + k] * rk * (one - rk)
            d_gi[b, k], d_gi[b, H + k], d_gi[b, 2 * H + k] = dr, dz, dn_pre
            d_gh[b, k], d_gh[b, H + k], d_gh[b, 2 * H + k] = dr, dz, dn_pre * rk
            dh[b, k] = g[b, k] * zk


@numba.njit(cache=True, error_model="numpy")
def _lstm_forward_kernel(gates, c, h, keep, h_out, c_out, i, f, g, o, tanh_c):
    B, H = h.shape
    for b in range(B):
        for k in range(H):
            i[b, k] = fast_sigmoid(gates[b, k])
            f[b, k] = fast_sigmoid(gates[b, H + k])
            g[b, k] = fast_tanh(gates[b, 2 * H + k])
            o[b, k] = fast_sigmoid(gates[b, 3 * H + k])
            c_new = f[b, k] * c[b, k] + i[b, k] * g[b, k]
            tanh_c[b, k] = fast_tanh(c_new)
            c_out[b, k] = c_new if keep[b] else c[b, k]
            h_out[b, k] = o[b, k] * tanh_c[b, k] if keep[b] else h[b, k]


@numba.njit(cache=True, error_model="numpy")
def _lstm_backward_kernel(grad_h, grad_c, c, i, f, g, o, tanh_c, keep, d_gates, dc_prev, dh):
    B, H = c.shape
    one, zero = c.dtype.type(1), c.dtype.type(0)
    for b in range(B):
        if not keep[b]:
            d_gates[b] = zero
            dc_prev[b] = grad_c[b]
            dh[b] = grad_h[b]
            continue
        dh[b] = zero
        for k in range(H):
            ik, fk, gk, ok, tk = i[b, k], f[b, k], g[b, k], o[b, k], tanh_c[b, k]
            dc = grad_c[b, k] + grad_h[b, k] * ok * (one - tk * tk)
            d_gates[b, k] = dc * gk * ik * (one - ik)
            d_gates[b, H + k] = dc * c[b, k] * fk * (one - fk)
            d_gates[b, 2 * H + k] = dc * ik * (one - gk * gk)
            d_gates[b, 3 * H + k] = grad_h[b, k] * tk * ok * (one - ok)
            dc_prev[b, k] = dc * fk


# ----------------------------------------------------------------------------- entry points (same arguments as the references)
def _keep_rows(keep, B):
    """keep as a contiguous bool (B,) for the kernels (all True when there is none)."""
    return np.ones(B, np.bool_) if keep is None else np.ascontiguousarray(keep, np.bool_).reshape(B)


def _c(a):
    """a in C order (a copy only if it is not): the kernels are compiled for C-ordered arrays only,
    so a transposed, sliced or broadcast input costs a copy, not another compiled signature."""
    return np.ascontiguousarray(a)


def _empty(n, like):
    """n fresh C-ordered arrays of like's shape and dtype (not empty_like: that copies like's layout,
    transposed or broadcast, into arrays the kernels then fill)."""
    return [np.empty(like.shape, like.dtype) for _ in range(n)]


def gru_gates(gi, gh, h, keep):
    h = _c(h)
    out, r, z, n = _empty(4, h)
    _gru_forward_kernel(_c(gi), _c(gh), h, _keep_rows(keep, h.shape[0]), out, r, z, n)
    return out, r, z, n


def gru_gates_backward(g, h, r, z, n, gh, keep):
    """gh: the whole hidden projection (B, 3H)."""
    d_gi, d_gh = _empty(2, gh)
    (dh,) = _empty(1, h)
    _gru_backward_kernel(*map(_c, (g, h, r, z, n, gh)), _keep_rows(keep, h.shape[0]), d_gi, d_gh, dh)
    return d_gi, d_gh, dh


def lstm_gates(gates, c, h, keep):
    c, h = _c(c), _c(h)
    h_out, c_out, i, f, g, o, tanh_c = _empty(7, c)
    _lstm_forward_kernel(_c(gates), c, h, _keep_rows(keep, c.shape[0]), h_out, c_out, i, f, g, o, tanh_c)
    return h_out, c_out, i, f, g, o, tanh_c


def lstm_gates_backward(grad_h, grad_c, c, i, f, g, o, tanh_c, keep):
    d_gates = np.empty((c.shape[0], 4 * c.shape[1]), c.dtype)
    dc_prev, dh = _empty(2, c)
    _lstm_backward_kernel(*map(_c, (grad_h, grad_c, c, i, f, g, o, tanh_c)), _keep_rows(keep, c.shape[0]),
                          d_gates, dc_prev, dh)
    return d_gates, dc_prev, (None if keep is None else dh)
