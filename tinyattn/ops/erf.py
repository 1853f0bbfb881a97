"""The error function erf(x) = 2/sqrt(pi) * integral from 0 to x of exp(-t^2) dt, on whole arrays.

numpy has no erf (math.erf takes one number at a time, scipy is not a dependency), and the
exact GELU needs it: GELU(x) = x * Phi(x) with Phi(x) = (1 + erf(x / sqrt 2)) / 2.

The rational approximations are W. J. Cody's, "Rational Chebyshev approximations for the
error function", Mathematics of Computation 23 (1969), pp. 631-637, with the coefficients of
his CALERF routine in SPECFUN (netlib.org/specfun/erf). On three ranges of y = |x|:

    y <= 0.46875      erf(y)  = y * A(y^2) / B(y^2)
    0.46875 < y <= 4  erfc(y) = exp(-y^2) * C(y) / D(y)
    y > 4             erfc(y) = exp(-y^2) / y * (1/sqrt(pi) - z * P(z) / Q(z)),  z = 1/y^2

with erf = 1 - erfc and erf(-x) = -erf(x). Relative error about 1e-16 in float64
(tests/test_gelu.py compares with math.erf on many points).
"""
import numpy as np

# Highest power first, as np.polyval reads them; B, D and Q have a leading 1.
_A = (1.85777706184603153e-1, 3.16112374387056560e00, 1.13864154151050156e02,
      3.77485237685302021e02, 3.20937758913846947e03)
_B = (1.0, 2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
      2.84423683343917062e03)
_C = (2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e00,
      6.61191906371416295e01, 2.98635138197400131e02, 8.81952221241769090e02,
      1.71204761263407058e03, 2.05107837782607147e03, 1.23033935479799725e03)
_D = (1.0, 1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
      1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
      3.43936767414372164e03, 1.23033935480374942e03)
_P = (1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1,
      1.25781726111229246e-1, 1.60837851487422766e-2, 6.58749161529837803e-4)
_Q = (1.0, 2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
      6.05183413124413191e-2, 2.33520497626869185e-3)
_ONE_OVER_SQRT_PI = 5.6418958354775628695e-1


def erf(x):
    """erf of every element of x, in x's floating dtype (computed in float64)."""
    x = np.asarray(x)
    y = np.abs(x.astype(np.float64))
    result = np.ones_like(y)  # erf(y) for y past every range: 1 to double precision
    small = y <= 0.46875
    middle = ~small & (y <= 4.0)
    large = y > 4.0  # NaN is in no range and stays NaN below

    ys = y[small]
    result[small] = ys * np.polyval(_A, ys * ys) / np.polyval(_B, ys * ys)
    ym = y[middle]
    result[middle] = 1.0 - np.exp(-ym * ym) * np.polyval(_C, ym) / np.polyval(_D, ym)
    yl = y[large]
    z = 1.0 / (yl * yl)
    tail = (_ONE_OVER_SQRT_PI - z * np.polyval(_P, z) / np.polyval(_Q, z)) / yl
    result[large] = 1.0 - np.exp(-yl * yl) * tail
    result[np.isnan(y)] = np.nan
    return (np.sign(x) * result).astype(x.dtype if x.dtype.kind == "f" else np.float64)
