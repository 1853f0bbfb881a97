"""Softmax and log-softmax along the last axis, forward and backward.

For one row x of length n (every other axis is just "more rows"):

    softmax:      y_i = exp(x_i - m) / s,   m = max_j x_j,   s = sum_j exp(x_j - m)
    log_softmax:  z_i = x_i - m - log(s)

Subtracting the row max m changes nothing mathematically (it cancels in the ratio) but keeps
every exp(x_i - m) in (0, 1], so large inputs (1000) cannot overflow.

Backward, with g = dL/dy the incoming gradient (the Jacobian is dy_i/dx_j = y_i (d_ij - y_j)):

    softmax:      dL/dx = y * (g - sum(g * y))
    log_softmax:  dL/dx = g - exp(z) * sum(g)

Masks (softmax only): `mask` is a bool array broadcastable to x, True = keep (may attend),
False = excluded. Excluded entries get exactly 0 probability and the max and the sum run
over the kept entries only. Conventions for degenerate rows, shared by both versions:

  * a row with every entry excluded gives all zeros (not NaN);
  * a row whose kept entries are all -inf gives all zeros too (softmax), and all -inf
    (log_softmax, i.e. log of those zeros); unmasked -inf entries elsewhere just get 0.

This file is the compiled version: the same arithmetic as an explicit loop per row. The numpy
version to read is tinyattn/ops/reference.py; tinyattn/ops/fast_path.py picks between them.
"""
import concurrent.futures
import math
import os

import numba
import numpy as np

from . import out_array
from .fast_exp import exp_nonpositive, fast_exp


# ----------------------------------------------------------------------------- numba kernels
# Two kernels serve all four functions (a flag picks softmax or log-softmax): 2 kernels x
# (float32, float64) = 4 compiled signatures. Both take C-contiguous 2-D (rows, n) arrays;
# each row is a few passes over n numbers that stay in L1 cache, and each output entry is
# written once. No fastmath but REORDER_SUMS (below) on row sums: full fastmath lets LLVM assume
# there are no infinities, and masks and -inf inputs rely on them. Arithmetic stays in the input dtype.
#
# What makes them fast (benchmarks/RESULTS.md, "Softmax and log-softmax"; the figures measured
# while writing each point are in this file's git history):
#  * exp is fast_exp (fast_exp.py), plain arithmetic that LLVM vectorizes, where math.exp
#    is one libm call per entry; the forward's x - max, once the entries below ln(smallest
#    normal) are set aside, needs none of its edges: exp_nonpositive;
#  * the max uses 8 independent accumulators: without fastmath LLVM may not reorder a single
#    chain, so it runs one compare per latency, not vectorized; eight partial maxima are legal
#    IEEE code with 8x the parallelism. Sums may be reordered (REORDER_SUMS), so LLVM vectorizes them;
#  * every loop is branch-free: a row is either unmasked, fully excluded, or masked by a
#    contiguous row of bools (the mask's last axis is never strided), read as a select.
#
# Two cores: rather than parallel=True (which made the cold compile ~3x longer, ~2 s more per
# signature) the kernels release the GIL and _over_rows runs two halves of the rows on two
# Python threads: no extra compiled code, and at most 2x, like prange on two cores.


@numba.njit(cache=True, nogil=True)
def _max8(x):
    """max(x), -inf for an empty or all -inf x (NaNs are skipped), with 8 partial maxima."""
    n = x.shape[0]
    m0 = m1 = m2 = m3 = m4 = m5 = m6 = m7 = x.dtype.type(-np.inf)
    n8 = n - n % 8
    for j in range(0, n8, 8):
        m0 = x[j] if x[j] > m0 else m0
        m1 = x[j + 1] if x[j + 1] > m1 else m1
        m2 = x[j + 2] if x[j + 2] > m2 else m2
        m3 = x[j + 3] if x[j + 3] > m3 else m3
        m4 = x[j + 4] if x[j + 4] > m4 else m4
        m5 = x[j + 5] if x[j + 5] > m5 else m5
        m6 = x[j + 6] if x[j + 6] > m6 else m6
        m7 = x[j + 7] if x[j + 7] > m7 else m7
    for j in range(n8, n):
        m0 = x[j] if x[j] > m0 else m0
    m0 = m0 if m0 > m1 else m1
    m2 = m2 if m2 > m3 else m3
    m4 = m4 if m4 > m5 else m5
    m6 = m6 if m6 > m7 else m7
    m0 = m0 if m0 > m2 else m2
    m4 = m4 if m4 > m6 else m6
    return m0 if m0 > m4 else m4


# A row sum may be reordered and its multiply-adds fused: fastmath with only "reassoc" and
# "contract", never "nnan" or "ninf", so infinities and NaNs still propagate as IEEE says while
# LLVM vectorizes the sum itself. Sums are in the input dtype, as numpy's reference: faster than
# float64 sums over 8 partial sums on rows of 64 when measured (this file's git history). The
# forward reorders only its sum of exponentials (each in [0, 1], or NaN); its masks and -inf
# entries pass through strict code.
REORDER_SUMS = {"reassoc", "contract"}


@numba.njit(cache=True, nogil=True, fastmath=REORDER_SUMS)
def _sum_reordered(a):
    s = a.dtype.type(0.0)
    for j in range(a.shape[0]):
        s += a[j]
    return s


@numba.njit(cache=True, nogil=True)
def _forward_kernel(x, log, mask, lead_shape, mask_strides, row0, out, bufs):
    """Softmax (log=False) or log-softmax (log=True) of each row of x into out.

    The mask is never copied to x's shape: `mask` is the flat, un-broadcast bool mask and
    `mask_strides` its element strides in x's shape (0 along broadcast axes; the last one,
    for the columns, is 1 or 0), `lead_shape` x's shape without the last axis, and x[r] is
    row row0 + r of the whole input. No mask: an empty `mask`. `bufs` is (2, n) scratch.
    """
    rows, n = x.shape
    T = x.dtype.type
    buf, masked_row = bufs[0], bufs[1]  # two separate rows, so that LLVM sees no overlap
    lowest, zero = T(np.log(np.finfo(x.dtype).tiny)), T(0.0)  # exp(lowest) is the smallest normal number
    minus_inf = T(-np.inf)
    for r in range(rows):
        xr = x[r]
        if mask.shape[0] > 0:
            # where this row starts in the flat mask: unravel its index over the leading axes
            mr = 0
            rest = row0 + r
            for d in range(lead_shape.shape[0] - 1, -1, -1):
                mr += (rest % lead_shape[d]) * mask_strides[d]
                rest //= lead_shape[d]
            if mask_strides[-1] == 1:
                # excluded entries become -inf (a vector select), then the row is unmasked
                # (x's dtype for -inf and a slice for the row: written as mask[mr + j] and a float64
                # -inf, this loop did not vectorize and cost 6x as much)
                keep = mask[mr:mr + n]
                for j in range(n):
                    masked_row[j] = xr[j] if keep[j] else minus_inf
                xr = masked_row
            elif not mask[mr]:  # one bool for the whole row: all excluded
                for j in range(n):
                    out[r, j] = -np.inf if log else 0.0
                continue
        m = _max8(xr)
        if m == -np.inf:  # nothing finite kept: zeros (log: -inf) by convention ...
            fill = -np.inf if log else 0.0
            for j in range(n):
                if xr[j] != xr[j]:  # ... unless a kept entry is NaN: a NaN must show, not hide as 0
                    fill = np.nan
            for j in range(n):
                out[r, j] = fill
            continue
        # the exponentials, each in [0, 1]; exactly 0 for -inf (so for excluded entries).
        # log-softmax needs only their sum and reads x again below (never masked).
        # Below ln(smallest normal) an exponential is subnormal or 0, and making one (every masked
        # -inf entry does) costs the CPU a slow microcode assist: a masked causal softmax took over
        # twice an unmasked one (this file's git history). Those entries are 0 to within 1e-38 of a
        # sum >= 1: write 0.
        for j in range(n):
            d = xr[j] - m
            e = exp_nonpositive(zero if d < lowest else d)  # (a NaN d is not < lowest: it stays NaN)
            buf[j] = zero if d < lowest else e
        s = _sum_reordered(buf)
        if log:
            log_s = T(math.log(s))
            for j in range(n):
                out[r, j] = (xr[j] - m) - log_s
        else:
            inv = T(1.0 / s)  # one multiply per entry instead of a divide
            for j in range(n):
                out[r, j] = buf[j] * inv


@numba.njit(cache=True, nogil=True, fastmath=REORDER_SUMS)
def _backward_kernel(y, g, log, out):
    """Backward of softmax (log=False, y = softmax output) or log-softmax (log=True, y = its
    output): a reduction pass over the row, then one write pass."""
    rows, n = y.shape
    T = y.dtype.type
    for r in range(rows):
        s = T(0.0)
        if log:  # sum(g)
            for j in range(n):
                s += g[r, j]
            for j in range(n):
                out[r, j] = g[r, j] - fast_exp(y[r, j]) * s
        else:  # sum(g * y)
            for j in range(n):
                s += g[r, j] * y[r, j]
            for j in range(n):
                out[r, j] = y[r, j] * (g[r, j] - s)


# ----------------------------------------------------------------------------- wrappers
_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=1)  # the second of two threads
_SPLIT_MIN = 1 << 20  # entries. Waking the pool thread has a fixed cost, and the second thread
# pays only while the other core is idle: quiet, two threads won from 2^18 entries; with load
# average 2 on 2 cores they lost at 2^19 (a GPT step's attention) and won at 2^21 (the timings
# are in this file's git history).
# The threads Numba may use (NUMBA_NUM_THREADS, every core by default): NUMBA_NUM_THREADS=1, as
# the one-thread benchmarks set, keeps softmax on one. Read once: os.cpu_count() asks the system each time.
_THREADS = min(numba.config.NUMBA_NUM_THREADS, os.cpu_count() or 1)


def _over_rows(run, rows, size):
    """Call run(a, b) for row ranges covering range(rows): in two halves on two threads when
    the array is big enough and two threads are allowed, else in one call."""
    if size < _SPLIT_MIN or rows < 2 or _THREADS < 2:
        run(0, rows)
        return
    half = rows // 2
    other = _POOL.submit(run, half, rows)
    run(0, half)
    other.result()


def _rows(a):
    """A C-contiguous (rows, n) view of `a` (a copy only if `a` is not contiguous)."""
    a = np.ascontiguousarray(a)
    return a.reshape(-1, a.shape[-1])


_NO_MASK = np.zeros(0, np.bool_)


def _forward_numba(x, log, mask):
    x = np.asarray(x)
    if x.ndim == 0:
        raise ValueError("softmax needs at least one axis")
    out = np.empty(x.shape, x.dtype)
    if x.size == 0:
        return out
    x2, out2 = _rows(x), out.reshape(-1, x.shape[-1])
    if mask is None:
        flat, strides = _NO_MASK, np.zeros(x.ndim, np.int64)
    else:
        m = np.ascontiguousarray(mask, np.bool_)
        strides = np.array(np.broadcast_to(m, x.shape).strides, np.int64)  # bytes = entries
        flat = m.reshape(-1)
    lead = np.array(x.shape[:-1], np.int64)

    def run(a, b):
        bufs = np.empty((2, x.shape[-1]), x.dtype)
        _forward_kernel(x2[a:b], log, flat, lead, strides, a, out2[a:b], bufs)

    _over_rows(run, x2.shape[0], x.size)
    return out


def _backward_numba(y, grad, log, out):
    y = np.asarray(y)
    grad = np.asarray(grad, y.dtype)
    if y.shape != grad.shape:
        raise ValueError(f"output and gradient shapes differ: {y.shape} vs {grad.shape}")
    out = out_array(out, y.shape, y.dtype)
    if y.size:
        y2, g2, out2 = _rows(y), _rows(grad), out.reshape(-1, y.shape[-1])
        _over_rows(lambda a, b: _backward_kernel(y2[a:b], g2[a:b], log, out2[a:b]),
                   y2.shape[0], y.size)
    return out


def softmax(x, mask=None):
    return _forward_numba(x, False, mask)


def log_softmax(x):
    return _forward_numba(x, True, None)


def softmax_backward(y, grad, out=None):
    return _backward_numba(y, grad, False, out)


def log_softmax_backward(log_y, grad, out=None):
    return _backward_numba(log_y, grad, True, out)
