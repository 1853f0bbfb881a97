"""A scalar exp that LLVM can vectorize: `fast_exp(x)` inside a Numba loop runs on 8 float32
(or 4 float64) at once, where math.exp is a call into libm per element.

The textbook method (Cody-Waite reduction, Cephes polynomial):

    exp(x) = 2^n * exp(r),   n = round(x / ln2),   r = x - n ln2  in [-ln2/2, ln2/2]

  * n is rounded with the 1.5 * 2^23 (float64: 2^52) trick: adding it leaves no fraction bits;
  * r is computed with ln2 split in two, LN2_HI + LN2_LO, where LN2_HI has so few significant
    bits that n * LN2_HI is exact, so the subtraction loses nothing;
  * exp(r) = 1 + r + r^2 P(r): Cephes' minimax P of degree 5 for float32, the Taylor series
    (1/k!, k = 2..13) for float64, whose truncation error r^14/14! ~ 4e-18 is far below
    float64's 1.1e-16. Horner steps are fused multiply-adds (one rounding each);
  * 2^n is built from bits, (n + bias) << mantissa_bits, reinterpreted as a float.

Edges, without branches (each `if` becomes a vector select): x is clamped to [LO, HI] first,
where exp(LO) rounds to 0 and exp(HI) overflows, so -inf -> 0, +inf -> inf and the integer
conversion never sees an out-of-range value; NaN is computed as exp(0) and put back at the
end. A subnormal result needs n below the smallest exponent: then 2^n = 2^(n+64) * 2^-64,
and p * 2^-64 is exact, so the result is still rounded only once. Error: <= 1 ulp from the
correctly rounded exp in float32 (numpy's float32 exp is up to 2 ulp from it; we are up to 3
from numpy's) and <= 1 ulp from np.exp in float64; tests/test_ops_softmax.py checks it.

Caching note: Numba's on-disk cache of a kernel that calls this does not notice edits to
this file; clear tinyattn/ops/__pycache__ after changing it.
"""
import numpy as np
from numba import types
from numba.extending import intrinsic, overload


@intrinsic
def _fma(typingctx, x, y, z):
    """x * y + z rounded once (llvm.fma). All three share one float type."""
    if not (x == y == z and isinstance(x, types.Float)):
        return None

    def codegen(context, builder, signature, args):
        return builder.call(builder.module.declare_intrinsic("llvm.fma", [args[0].type] * 3), args)

    return x(x, x, x), codegen


@intrinsic
def _int_bits_as_float(typingctx, i):
    """The float whose bit pattern is the int32 (-> float32) or int64 (-> float64) i."""
    ret = {types.int32: types.float32, types.int64: types.float64}.get(i)
    if ret is None:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(ret))

    return ret(i), codegen


@intrinsic
def _float_bits_as_int(typingctx, x):
    """The int64 with the bit pattern of the float64 x."""
    if x != types.float64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.int64))

    return types.int64(x), codegen


def fast_exp(x):
    """exp(x) for a float32 or float64 scalar, in Numba code (in Python: numpy)."""
    return np.exp(x)


# float32 constants are numpy float32 scalars: a Python float would make Numba promote every
# operation to float64.
_f = np.float32
LO32, HI32, LOG2E32, ROUND32 = _f(-104.0), _f(89.0), _f(1.4426950408889634), _f(1.5 * 2**23)
LN2_HI32, LN2_LO32 = _f(0.693359375), _f(-2.12194440e-4)  # LN2_HI32 has 9 significant bits
P32 = [_f(c) for c in [1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
                       1.6666665459e-1, 5.0000001201e-1]]
_P0, _P1, _P2, _P3, _P4, _P5 = P32
_ZERO32, _ONE32, _TWO32, _TINY32 = _f(0.0), _f(1.0), _f(2.0), _f(2.0**-64)


def _exp_f32(x):
    tc = x
    if tc < LO32:
        tc = LO32
    if tc > HI32:
        tc = HI32
    if tc != tc:  # NaN: compute exp(0), return the NaN at the end
        tc = _ZERO32
    nf = (tc * LOG2E32 + ROUND32) - ROUND32  # round(x / ln2), still a float
    r = _fma(-nf, LN2_LO32, _fma(-nf, LN2_HI32, tc))
    p = _fma(_fma(_fma(_fma(_fma(_P0, r, _P1), r, _P2), r, _P3), r, _P4), r, _P5)
    p = _fma(p, r * r, r) + _ONE32
    n = np.int32(nf)
    if n < -125:  # subnormal result: scale by 2^-64 first (exact)
        n = n + 64
        p = p * _TINY32
    if n > 127:  # 2^128 is not a float32: use 2 * 2^127 (the product overflows to inf)
        n = n - 1
        p = p * _TWO32
    # (Numba widens int32 arithmetic to int64; LLVM narrows it back after the cast)
    e = p * _int_bits_as_float(np.int32((n + 127) << 23))
    return e if x == x else x


_Q = [1.0 / np.prod(np.arange(1.0, k + 1)) for k in range(13, 1, -1)]  # 1/13!, ..., 1/2!
_Q0, _Q1, _Q2, _Q3, _Q4, _Q5, _Q6, _Q7, _Q8, _Q9, _Q10, _Q11 = _Q
LN2_HI64, LN2_LO64 = 6.93147180369123816490e-01, 1.90821492927058770002e-10  # fdlibm's split


def _exp_f64(x):
    tc = x
    if tc < -746.0:
        tc = -746.0
    if tc > 710.0:
        tc = 710.0
    if tc != tc:
        tc = 0.0
    k = tc * 1.4426950408889634 + 1.5 * 2.0**52
    nf = k - 1.5 * 2.0**52
    r = _fma(-nf, LN2_LO64, _fma(-nf, LN2_HI64, tc))
    p = _fma(_fma(_fma(_fma(_fma(_fma(_Q0, r, _Q1), r, _Q2), r, _Q3), r, _Q4), r, _Q5), r, _Q6)
    p = _fma(_fma(_fma(_fma(_fma(p, r, _Q7), r, _Q8), r, _Q9), r, _Q10), r, _Q11)
    p = _fma(p, r * r, r) + 1.0
    # n from k's low bits: AVX2 cannot convert float64 to int64 in vectors, this stays vector
    n = _float_bits_as_int(k) - 0x4338000000000000  # the bits of 1.5 * 2^52
    if n < -1021:
        n = n + 64
        p = p * 2.0**-64
    if n > 1023:
        n = n - 1
        p = p * 2.0
    e = p * _int_bits_as_float((n + 1023) << 52)
    return e if x == x else x


def exp_nonpositive(x):
    """exp(x) for x in [ln(smallest normal number), 0] or NaN, in Numba code: fast_exp's steps
    without its edges (clamps, subnormal and overflow scaling), as a softmax's x - max is once
    the entries below the smallest normal number are set aside (in Python: numpy)."""
    return np.exp(x)


def _exp_nonpositive_f32(x):
    # a NaN x makes r, and so the result, NaN (whatever bits its exponent gets)
    nf = (x * LOG2E32 + ROUND32) - ROUND32
    r = _fma(-nf, LN2_LO32, _fma(-nf, LN2_HI32, x))
    p = _fma(_fma(_fma(_fma(_fma(_P0, r, _P1), r, _P2), r, _P3), r, _P4), r, _P5)
    p = _fma(p, r * r, r) + _ONE32
    return p * _int_bits_as_float(np.int32((np.int32(nf) + 127) << 23))


def _exp_nonpositive_f64(x):
    k = x * 1.4426950408889634 + 1.5 * 2.0**52
    nf = k - 1.5 * 2.0**52
    r = _fma(-nf, LN2_LO64, _fma(-nf, LN2_HI64, x))
    p = _fma(_fma(_fma(_fma(_fma(_fma(_Q0, r, _Q1), r, _Q2), r, _Q3), r, _Q4), r, _Q5), r, _Q6)
    p = _fma(_fma(_fma(_fma(_fma(p, r, _Q7), r, _Q8), r, _Q9), r, _Q10), r, _Q11)
    p = _fma(p, r * r, r) + 1.0
    return p * _int_bits_as_float((_float_bits_as_int(k) - 0x4338000000000000 + 1023) << 52)


def overload_by_dtype(function, for_float32, for_float64):
    """Make `function`, called in compiled code, run for_float32 or for_float64 by its argument's type."""
    @overload(function)
    def _by_dtype(x):
        if x == types.float32:
            return for_float32
        if x == types.float64:
            return for_float64


overload_by_dtype(fast_exp, _exp_f32, _exp_f64)
overload_by_dtype(exp_nonpositive, _exp_nonpositive_f32, _exp_nonpositive_f64)
