"""GELU forward and backward, each one pass over x (ops/gelu.py is the numpy reference they equal).

The standard normal CDF Phi(x) = (1 + erf(x / sqrt 2)) / 2 is the costly part. In float64 it is
ops/erf.py's erf (W. J. Cody's rationals on three ranges of |x| / sqrt 2) with fast_exp,
branch-free, and Phi = (1 + erf) / 2 as the reference writes it, so that far left 1 + erf
cancels alike: float64 is the dtype of gradient checks, where matching the reference matters
more than the last digits of a tiny Phi. math.erf, a libm call per element, was 4x torch's time.
In float32 it is W. J. Cody's erfc rational (the coefficients C, D of ops/erf.py) evaluated in float32 with
fused multiply-adds and fast_exp, branch-free so LLVM vectorizes the loop: with a = |x|,

    erfc(a / sqrt 2) = exp(-a^2 / 2) C(a / sqrt 2) / D(a / sqrt 2),   Phi = 1 - erfc / 2 (x >= 0), erfc / 2 (x < 0)

Cody fits C / D on (0.46875, 4]; it stays within 4e-10 relative of erfc on [0, 10] (5e-12
below 0.5), so one rational serves every x (one divide, no erf range) and x < 0 gets erfc
itself (no 1 - erf cancellation). exp(-a^2 / 2) takes a^2 / 2 split exactly in two: rounding
a^2, or a / sqrt 2, before the exp would be amplified a^2 times (1e-5 relative at x = -13). a is clamped at 14,
where Phi is below float32's smallest number; NaN stays NaN. Error: GELU within 1e-6 relative
of the exact value for every float32 x with a normal result (9.1e-7 at most, 5e-7 for |x| < 12;
tests/test_kernel_table.py). The tanh form uses fast_tanh in float32, math.tanh in float64.
"""
import math

import numba
import numpy as np
from numba import types
from numba.extending import overload

from . import out_array
from .fast_activations import fast_tanh
from .fast_exp import (LN2_HI32, LN2_LO32, LOG2E32, ROUND32, _P0, _P1, _P2, _P3, _P4, _P5, _TINY32, _fma,
                       _int_bits_as_float, fast_exp)
from ..erf import _A, _B, _C, _D, _ONE_OVER_SQRT_PI, _P, _Q
from ..gelu import CUBIC, SQRT_2_OVER_PI


def normal_cdf(x):
    """Phi(x) for a float32 or float64 scalar, in Numba code (in Python: math.erf)."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


_f = np.float32
_C0, _C1, _C2, _C3, _C4, _C5, _C6, _C7, _C8 = (_f(c) for c in _C)
_D1, _D2, _D3, _D4, _D5, _D6, _D7, _D8 = (_f(c) for c in _D[1:])
_RSQRT2, _CLAMP = _f(1 / math.sqrt(2)), _f(14.0)
_HALF, _ONE, _ZERO = _f(0.5), _f(1.0), _f(0.0)


@numba.njit(error_model="numpy")
def _exp_of_minus_half_square_f32(a):
    """exp(-a^2 / 2) for 0 <= a <= 14 (so the argument is finite, in [-98, 0]): fast_exp's float32
    steps (its reduction, polynomial and subnormal scaling) without the clamps, NaN and overflow
    selects its full range needs, 17 % of the whole forward; a^2 / 2 is split exactly, hi + lo
    (hi = a a / 2 rounded, lo from a fused multiply-add), and exp(-hi - lo) = exp(-hi) (1 - lo)."""
    hi = _HALF * (a * a)
    nf = (-hi * LOG2E32 + ROUND32) - ROUND32  # round(-hi / ln 2)
    r = _fma(-nf, LN2_LO32, _fma(-nf, LN2_HI32, -hi))
    p = _fma(_fma(_fma(_fma(_fma(_P0, r, _P1), r, _P2), r, _P3), r, _P4), r, _P5)
    p = _fma(p, r * r, r) + _ONE
    n = np.int32(nf)
    subnormal = n < -125
    p = p * _TINY32 if subnormal else p
    e = p * _int_bits_as_float(np.int32(((n + 64 if subnormal else n) + 127) << 23))
    return _fma(-_HALF * _fma(a, a, -(a * a)), e, e)


def _cdf_f32(x):
    a = abs(x)
    a = a if a < _CLAMP else _CLAMP
    w = a * _RSQRT2
    c = _fma(_fma(_fma(_fma(_fma(_fma(_fma(_fma(_C0, w, _C1), w, _C2), w, _C3), w, _C4), w, _C5), w, _C6), w, _C7),
             w, _C8)
    d = _fma(_fma(_fma(_fma(_fma(_fma(_fma(_fma(w, _ONE, _D1), w, _D2), w, _D3), w, _D4), w, _D5), w, _D6), w, _D7),
             w, _D8)
    half_erfc = _HALF * _exp_of_minus_half_square_f32(a) * c / d
    cdf = _ONE - half_erfc if x >= _ZERO else half_erfc
    # At +-inf the clamp above would leave a tiny tail; the reference's Phi is exactly 1 or 0 there,
    # so gelu(-inf) = -inf * 0 is NaN in both (as PyTorch's).
    cdf = cdf if abs(x) < np.inf else (_ONE if x > _ZERO else _ZERO)
    return cdf if x == x else x


_A0_64, _A1_64, _A2_64, _A3_64, _A4_64 = _A
_B1_64, _B2_64, _B3_64, _B4_64 = _B[1:]
_C0_64, _C1_64, _C2_64, _C3_64, _C4_64, _C5_64, _C6_64, _C7_64, _C8_64 = _C
_D1_64, _D2_64, _D3_64, _D4_64, _D5_64, _D6_64, _D7_64, _D8_64 = _D[1:]
_P0_64, _P1_64, _P2_64, _P3_64, _P4_64, _P5_64 = _P
_Q1_64, _Q2_64, _Q3_64, _Q4_64, _Q5_64 = _Q[1:]
_RSQRT2_64 = 1 / math.sqrt(2)


def _cdf_f64(x):
    # ops/erf.py's three ranges of w = |x| / sqrt 2, each a numerator and a denominator; selects
    # pick the range's pair before the divide, so the loop stays branch-free and vectorizes
    a = abs(x)
    a = a if a < 40.0 else 40.0  # Phi(-40) is below float64's smallest number
    w = a * _RSQRT2_64
    z = w * w
    small, large = w <= 0.46875, w > 4.0
    r = 1.0 / (z if large else 16.0)
    if small:  # erf(w) = w A(z) / B(z)
        num = w * _fma(_fma(_fma(_fma(_A0_64, z, _A1_64), z, _A2_64), z, _A3_64), z, _A4_64)
        den = _fma(_fma(_fma(_fma(z, 1.0, _B1_64), z, _B2_64), z, _B3_64), z, _B4_64)
    elif large:  # erfc(w) = exp(-w^2) (1 / sqrt(pi) - r P(r) / Q(r)) / w, r = 1 / w^2
        num = r * _fma(_fma(_fma(_fma(_fma(_P0_64, r, _P1_64), r, _P2_64), r, _P3_64), r, _P4_64), r, _P5_64)
        den = _fma(_fma(_fma(_fma(_fma(r, 1.0, _Q1_64), r, _Q2_64), r, _Q3_64), r, _Q4_64), r, _Q5_64)
    else:  # erfc(w) = exp(-w^2) C(w) / D(w)
        num = _fma(_fma(_fma(_fma(_fma(_fma(_fma(_fma(_C0_64, w, _C1_64), w, _C2_64), w, _C3_64), w, _C4_64), w,
                                   _C5_64), w, _C6_64), w, _C7_64), w, _C8_64)
        den = _fma(_fma(_fma(_fma(_fma(_fma(_fma(_fma(w, 1.0, _D1_64), w, _D2_64), w, _D3_64), w, _D4_64), w, _D5_64),
                             w, _D6_64), w, _D7_64), w, _D8_64)
    q = num / den
    e = fast_exp(-0.5 * (a * a))  # exp(-w^2), w^2 = a^2 / 2 split exactly as in _exp_of_minus_half_square_f32
    e = _fma(-0.5 * _fma(a, a, -(a * a)), e, e)
    erf = q if small else 1.0 - e * ((_ONE_OVER_SQRT_PI - q) / w if large else q)
    cdf = 0.5 * (1.0 + (erf if x >= 0.0 else -erf))  # as the reference: far left, 1 + erf cancels alike
    return cdf if x == x else x


def tanh(x):
    """tanh for a float32 (fast_tanh, vectorized) or float64 (math.tanh, as np.tanh) scalar, in Numba code."""
    return np.tanh(x)


def cube(x):
    """x^3: x * x * x in float32 (vectorized), math.pow in float64 (as numpy's x ** 3)."""
    return x ** 3


def _by_dtype(function, for_float32, for_float64):
    # inlined (so LLVM can vectorize the loop around it), with numpy's error model: a division
    # that may raise ZeroDivisionError would keep it a call
    @overload(function, jit_options={"error_model": "numpy"}, inline="always")
    def _choose(x):
        return {types.float32: for_float32, types.float64: for_float64}.get(x)


_by_dtype(normal_cdf, _cdf_f32, _cdf_f64)
_by_dtype(tanh, lambda x: fast_tanh(x), lambda x: math.tanh(x))
_by_dtype(cube, lambda x: x * x * x, lambda x: math.pow(x, 3.0))


@numba.njit(cache=True, error_model="numpy")
def _forward_kernel(x, tanh_form, k, y, saved):
    half, one, root, cubic = k[0], k[1], k[2], k[3]
    if tanh_form:
        for j in range(x.shape[0]):
            t = tanh(root * (x[j] + cubic * cube(x[j])))
            y[j] = half * x[j] * (one + t)
            saved[j] = t
    else:
        for j in range(x.shape[0]):
            cdf = normal_cdf(x[j])
            y[j] = x[j] * cdf
            saved[j] = cdf


@numba.njit(cache=True, error_model="numpy")
def _backward_kernel(x, saved, grad, tanh_form, k, out):
    half, one, root, three_cubic, minus_half, pdf_scale = k[0], k[1], k[2], k[4], k[5], k[6]
    if tanh_form:
        for j in range(x.shape[0]):
            t = saved[j]
            du_dx = root * (one + three_cubic * x[j] * x[j])
            out[j] = grad[j] * (half * (one + t) + half * x[j] * (one - t * t) * du_dx)
    else:
        for j in range(x.shape[0]):
            pdf = fast_exp(minus_half * x[j] * x[j]) * pdf_scale
            out[j] = grad[j] * (saved[j] + x[j] * pdf)


def _constants(dtype):
    return np.array([0.5, 1.0, SQRT_2_OVER_PI, CUBIC, 3 * CUBIC, -0.5, 1 / math.sqrt(2 * math.pi)], dtype)


def _flat(a, shape, dtype):
    """A C-ordered 1-D copy or view of a (broadcast to `shape`) in `dtype`."""
    return np.ascontiguousarray(np.broadcast_to(a, shape), dtype).reshape(-1)


def gelu(x, approximate, out=None):
    """(y, saved), as the reference; out=(y, saved) arrays to write them into."""
    # outputs are made C-ordered from x's shape: np.ascontiguousarray would turn a 0-d x into (1,)
    y, saved = (None, None) if out is None else out
    y, saved = out_array(y, x.shape, x.dtype), out_array(saved, x.shape, x.dtype)
    _forward_kernel(_flat(x, x.shape, x.dtype), approximate == "tanh", _constants(x.dtype), y.reshape(-1),
                    saved.reshape(-1))
    return y, saved


def gelu_backward(x, saved, grad, approximate, out=None):
    out = out_array(out, x.shape, x.dtype)
    _backward_kernel(_flat(x, x.shape, x.dtype), _flat(saved, x.shape, x.dtype), _flat(grad, x.shape, x.dtype),
                     approximate == "tanh", _constants(x.dtype), out.reshape(-1))
    return out
