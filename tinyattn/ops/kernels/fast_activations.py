"""tanh and the logistic sigmoid as scalar functions that LLVM can vectorize inside a Numba loop
(built on fast_exp, like it: plain arithmetic and selects, no call into libm per element).

    tanh(x)    = sign(x) * (1 - e) / (1 + e),   e = exp(-2|x|)                 for |x| >= 0.625
               = x + x z P(z) / Q(z),           z = x^2                        for |x| <  0.625
    sigmoid(x) = 1 / (1 + e) if x >= 0 else e / (1 + e),   e = exp(-|x|)     (never overflows)

Near 0, 1 - e loses the leading bits of tanh(x) ~ x to cancellation, so small |x| take the
odd rational approximation of Cephes' tanh (Moshier, Cephes Math Library, tanh.c / tanhf.c:
a polynomial of degree 5 in x for float32, P/Q of degrees 2/3 in z for float64). Both
branches are computed and one is selected, so the loop stays branch-free. Error against
np.tanh: a few ulp (tests/test_ops_fused.py). NaN stays NaN, +-inf give +-1.

Caching note (as for fast_exp): clear tinyattn/ops/__pycache__ after editing this file.
"""
import numpy as np

from .fast_exp import fast_exp, overload_by_dtype


def fast_tanh(x):
    """tanh(x) for a float32 or float64 scalar, in Numba code (in Python: numpy)."""
    return np.tanh(x)


def fast_sigmoid(x):
    """1 / (1 + exp(-x)) for a float32 or float64 scalar, in Numba code (in Python: numpy)."""
    return 1 / (1 + np.exp(-x))


_f = np.float32
_T32 = [_f(c) for c in (-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1,
                        -3.33332819422e-1)]
_A0, _A1, _A2, _A3, _A4 = _T32
_SMALL32, _ONE32, _MTWO32, _ZERO32 = _f(0.625), _f(1.0), _f(-2.0), _f(0.0)


def _tanh_f32(x):
    a = abs(x)
    e = fast_exp(_MTWO32 * a)
    big = (_ONE32 - e) / (_ONE32 + e)
    big = big if x >= _ZERO32 else -big
    z = x * x
    small = ((((_A0 * z + _A1) * z + _A2) * z + _A3) * z + _A4) * z * x + x
    return small if a < _SMALL32 else (big if x == x else x)


_P0, _P1, _P2 = -9.64399179425052238628e-1, -9.92877231001918586564e1, -1.61468768441708447952e3
_Q0, _Q1, _Q2 = 1.12811678491632931402e2, 2.23548839060100448583e3, 4.84406305325125486048e3


def _tanh_f64(x):
    a = abs(x)
    e = fast_exp(-2.0 * a)
    big = (1.0 - e) / (1.0 + e)
    big = big if x >= 0.0 else -big
    z = x * x
    small = x + x * z * (((_P0 * z + _P1) * z + _P2) / (((z + _Q0) * z + _Q1) * z + _Q2))
    return small if a < 0.625 else (big if x == x else x)


def _sigmoid_f32(x):
    e = fast_exp(-abs(x))
    return (_ONE32 if x >= _ZERO32 else e) / (_ONE32 + e)


def _sigmoid_f64(x):
    e = fast_exp(-abs(x))
    return (1.0 if x >= 0.0 else e) / (1.0 + e)


overload_by_dtype(fast_tanh, _tanh_f32, _tanh_f64)
overload_by_dtype(fast_sigmoid, _sigmoid_f32, _sigmoid_f64)
