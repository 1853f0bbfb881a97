"""Element-wise rules: arithmetic (+ - * / and negation), powers, exp and log, the trigonometric
and hyperbolic functions, lerp, rounded division and the steps, the activations, the cast
between float dtypes, and ta.where. Each backward sits under its forward, with its derivative
in the docstring.

Notation: y is the output, g = dL/dy the gradient arriving from above, and every returned
gradient is dL/d(input). Binary ops broadcast, so their gradients pass through `unbroadcast`.
"""
import numpy as np

from ..ops import arrays
from . import tensor as _tensor
from .dtypes import ShapeError, unbroadcast
from .function import Function


def _broadcast_error(op, symbol, a, b):
    return ShapeError(
        f"{op}: {a.shape} {symbol} {b.shape}: shapes do not broadcast (aligned from the last "
        "axis, each pair of sizes must be equal or 1)"
    )


class Add(Function):
    """y = a + b;  dL/da = g,  dL/db = g  (each summed back over broadcast axes)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = a.shape, b.shape
        try:
            return a + b
        except ValueError:
            raise _broadcast_error("add", "+", a, b) from None

    @staticmethod
    def backward(ctx, g):
        shape_a, shape_b = ctx.shapes
        need_a, need_b = ctx.needs_input_grad
        return (unbroadcast(g, shape_a) if need_a else None,
                unbroadcast(g, shape_b) if need_b else None)


class Sub(Function):
    """y = a - b;  dL/da = g,  dL/db = -g."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = a.shape, b.shape
        try:
            return a - b
        except ValueError:
            raise _broadcast_error("sub", "-", a, b) from None

    @staticmethod
    def backward(ctx, g):
        shape_a, shape_b = ctx.shapes
        need_a, need_b = ctx.needs_input_grad
        return (unbroadcast(g, shape_a) if need_a else None,
                unbroadcast(-g, shape_b) if need_b else None)


class Mul(Function):
    """y = a * b;  dL/da = g * b,  dL/db = g * a  (each summed back over broadcast axes)."""

    @staticmethod
    def forward(ctx, a, b):
        need_a, need_b = ctx.needs_input_grad
        ctx.shapes = a.shape, b.shape
        ctx.save_for_backward(b if need_a else None, a if need_b else None)  # each side's rule needs the other
        try:
            return arrays.multiply(a, b)
        except ValueError:
            raise _broadcast_error("mul", "*", a, b) from None

    @staticmethod
    def backward(ctx, g):
        b, a = ctx.saved_arrays
        shape_a, shape_b = ctx.shapes
        return (unbroadcast(arrays.multiply(g, b), shape_a) if b is not None else None,
                unbroadcast(arrays.multiply(g, a), shape_b) if a is not None else None)


class Div(Function):
    """y = a / b;  dL/da = g / b,  dL/db = -g * a / b^2 = -g * y / b."""

    @staticmethod
    def forward(ctx, a, b):
        try:
            y = a / b
        except ValueError:
            raise _broadcast_error("div", "/", a, b) from None
        ctx.save_for_backward(a, b, y)
        return y

    @staticmethod
    def backward(ctx, g):
        a, b, y = ctx.saved_arrays
        need_a, need_b = ctx.needs_input_grad
        return (unbroadcast(g / b, a.shape) if need_a else None,
                unbroadcast(-g * y / b, b.shape) if need_b else None)


class Neg(Function):
    """y = -x;  dL/dx = -g."""

    @staticmethod
    def forward(ctx, x):
        return -x

    @staticmethod
    def backward(ctx, g):
        return -g


# --------------------------------------------------------------------------------------------------
# Powers, exp, log, sqrt and abs; the trigonometric and hyperbolic functions; lerp; rounded division; and
# the steps (floor, ceil, round, trunc, sign), each backward under its forward.
#
# --------------------------------------------------------------------------------------------------

class Pow(Function):
    """y = x ** p for a number p;  dL/dx = g * p * x ** (p - 1)."""

    @staticmethod
    def forward(ctx, x, p):
        ctx.save_for_backward(x)
        ctx.p = p
        # Keep x's dtype: a Python float exponent must not turn float32 into float64.
        return np.power(x, x.dtype.type(p))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_arrays
        if ctx.p == 0:  # x ** 0 = 1 everywhere: zero gradient (p * x ** -1 would be 0 * inf at x = 0)
            return np.zeros_like(g), None
        p = x.dtype.type(ctx.p)
        return g * p * np.power(x, p - 1), None


class PowTensor(Function):
    """y = a ** b, both tensors (broadcast);  dL/da = g * b * a ** (b - 1),  dL/db = g * y * log(a).

    As PyTorch: dL/da is 0 where b = 0 (not 0 * 0 ** -1 = NaN at a = 0), and dL/db is 0 where
    a = 0 and b >= 0 (the limit of a ** b log a as a -> 0+, as PowOfNumber takes it)."""

    @staticmethod
    def forward(ctx, a, b):
        try:
            with np.errstate(divide="ignore", invalid="ignore"):  # 0 ** -1 = inf, (-2) ** 0.5 = NaN, as in PyTorch
                y = np.power(a, b)
        except ValueError:
            raise ShapeError(f"pow: {a.shape} ** {b.shape}: shapes do not broadcast (aligned from the last "
                             "axis, each pair of sizes must be equal or 1)") from None
        ctx.save_for_backward(a, b, y)
        return y

    @staticmethod
    def backward(ctx, g):
        a, b, y = ctx.saved_arrays
        need_a, need_b = ctx.needs_input_grad
        with np.errstate(divide="ignore", invalid="ignore"):  # the NaN and inf PyTorch gives too (log of a < 0)
            grad_a = unbroadcast(np.where(b == 0, 0, g * b * np.power(a, b - 1)), a.shape) if need_a else None
            grad_b = unbroadcast(np.where((a == 0) & (b >= 0), 0, g * y * np.log(a)), b.shape) if need_b else None
        return grad_a, grad_b


class PowOfNumber(Function):
    """y = c ** x for a number c;  dL/dx = g * y * log(c).

    At c = 0 the rule reads 0 * log(0) = 0 * -inf; PyTorch takes the limit of c ** x log c as
    c -> 0+, which is 0 for x > 0, and gives 0 wherever x >= 0: so does this."""

    @staticmethod
    def forward(ctx, x, base):
        with np.errstate(divide="ignore", invalid="ignore"):  # 0 ** -1 = inf, (-2) ** 0.5 = NaN, as in PyTorch
            y = np.power(x.dtype.type(base), x)
        ctx.save_for_backward(x, y)
        ctx.base = base
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_arrays
        with np.errstate(invalid="ignore"):  # inf * 0 and log of a negative base: NaN, as in PyTorch
            if ctx.base == 0:
                return np.where(x >= 0, 0, g * y * x.dtype.type(-np.inf)).astype(g.dtype, copy=False), None
            return g * y * x.dtype.type(np.log(ctx.base) if ctx.base > 0 else np.nan), None


class Abs(Function):
    """y = |x|;  dL/dx = g * sign(x) (0 at the kink x = 0, as PyTorch)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.abs(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_arrays
        return g * sign_zero_at_nan(x)  # 0 at NaN too, as PyTorch's sgn


class Exp(Function):
    """y = exp(x);  dL/dx = g * y."""

    @staticmethod
    def forward(ctx, x):
        y = np.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_arrays
        return g * y


class Log(Function):
    """y = log(x);  dL/dx = g / x."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.log(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_arrays
        return g / x


class Sqrt(Function):
    """y = sqrt(x);  dL/dx = g / (2 y)."""

    @staticmethod
    def forward(ctx, x):
        y = np.sqrt(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_arrays
        return g / (2 * y)


class RoundedDiv(Function):
    """y = a / b rounded toward zero ("trunc") or down ("floor"), in the operands' dtype (integers
    divided exactly);  dL/da = dL/db = 0, the slope of a step almost everywhere (PyTorch's too)."""

    @staticmethod
    def forward(ctx, a, b, mode):
        ctx.shapes = a.shape, b.shape
        try:
            np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            raise ShapeError(f"div: {a.shape} / {b.shape}: shapes do not broadcast") from None
        if a.dtype.kind == "f":
            with np.errstate(divide="ignore", invalid="ignore"):  # x / 0 = +-inf or NaN, as PyTorch
                return (np.trunc if mode == "trunc" else np.floor)(a / b)
        if (b == 0).any():
            raise ZeroDivisionError(f"div: integer division by zero (rounding_mode={mode!r}, {a.dtype} tensors)")
        down = np.floor_divide(a, b)
        if mode == "floor":
            return down
        # trunc: one up from floor where the exact quotient is negative and not whole
        return (down + ((down * b != a) & (down < 0))).astype(down.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        shape_a, shape_b = ctx.shapes
        return np.zeros(shape_a, g.dtype), np.zeros(shape_b, g.dtype), None
class Rsqrt(Function):
    """y = 1 / sqrt(x) = x ** -1/2;  dL/dx = g * -1/2 x ** -3/2 = -g * y^3 / 2."""

    @staticmethod
    def forward(ctx, x):
        with np.errstate(divide="ignore"):  # rsqrt(0) = inf, as PyTorch
            y = 1 / np.sqrt(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_arrays
        return g * y * y * y * -0.5


class Log2(Function):
    """y = log2(x) = log(x) / log(2);  dL/dx = g / (x log 2)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.log2(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_arrays
        return g / (x * x.dtype.type(np.log(2)))


class Exp2(Function):
    """y = 2 ** x = exp(x log 2);  dL/dx = g * y * log 2."""

    @staticmethod
    def forward(ctx, x):
        y = np.exp2(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_arrays
        return g * y * y.dtype.type(np.log(2))


# --- trigonometric and hyperbolic --------------------------------------------------------------
class Sin(Function):
    """y = sin(x);  dL/dx = g * cos(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_arrays
        return g * np.cos(x)


class Cos(Function):
    """y = cos(x);  dL/dx = -g * sin(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.cos(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_arrays
        return -g * np.sin(x)


class Tan(Function):
    """y = tan(x) = sin(x) / cos(x);  dL/dx = g / cos(x)^2 = g * (1 + y^2)."""

    @staticmethod
    def forward(ctx, x):
        y = np.tan(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_arrays
        return g * (1 + y * y)


class Sinh(Function):
    """y = sinh(x) = (e^x - e^-x) / 2;  dL/dx = g * cosh(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.sinh(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_arrays
        return g * np.cosh(x)


class Cosh(Function):
    """y = cosh(x) = (e^x + e^-x) / 2;  dL/dx = g * sinh(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.cosh(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_arrays
        return g * np.sinh(x)


class Asinh(Function):
    """y = asinh(x), so x = sinh(y) and dx/dy = cosh(y) = sqrt(1 + x^2);  dL/dx = g / sqrt(x^2 + 1)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.arcsinh(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_arrays
        return g / np.sqrt(x * x + 1)


class Acosh(Function):
    """y = acosh(x) (x >= 1), so x = cosh(y) and dx/dy = sinh(y) = sqrt(x^2 - 1);  dL/dx = g / sqrt(x^2 - 1)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(invalid="ignore"):  # acosh(x < 1) = NaN, as PyTorch
            return np.arccosh(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_arrays
        with np.errstate(divide="ignore", invalid="ignore"):  # inf at x = 1, NaN below: PyTorch's too
            return g / np.sqrt(x * x - 1)


class Atanh(Function):
    """y = atanh(x) (|x| < 1), so x = tanh(y) and dx/dy = 1 - x^2;  dL/dx = g / (1 - x^2)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore"):  # +-inf at +-1, NaN beyond, as PyTorch
            return np.arctanh(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_arrays
        with np.errstate(divide="ignore"):
            return g / (1 - x * x)


# --- steps and blends ------------------------------------------------------------------------
def sign_zero_at_nan(a):
    """numpy's sign, but 0 at NaN, as PyTorch's sign (and abs's slope), in a's dtype."""
    return np.where(np.isnan(a), 0, np.sign(a)).astype(a.dtype, copy=False)


class Step(Function):
    """y = floor(x), ceil(x), round(x), trunc(x) or sign(x), whichever `step` is: constant between
    its jumps;  dL/dx = 0 (PyTorch's choice at the jumps too, where there is no slope)."""

    @staticmethod
    def forward(ctx, x, step):
        return step(x)

    @staticmethod
    def backward(ctx, g):
        return np.zeros_like(g), None


class Lerp(Function):
    """y = a + w (b - a) (from a at w = 0 to b at w = 1; w a number or a tensor, all broadcast);
    dL/da = g (1 - w),  dL/db = g w,  dL/dw = g (b - a).

    Computed as PyTorch does, b - (b - a)(1 - w) where |w| >= 0.5, so that w = 1 gives b exactly."""

    @staticmethod
    def forward(ctx, a, b, w):
        w = np.asarray(w, a.dtype)
        try:
            y = np.where(np.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))
        except ValueError:
            raise ShapeError(f"lerp: input {a.shape}, end {b.shape} and weight {w.shape} do not broadcast "
                             "(aligned from the last axis, each size equal or 1)") from None
        ctx.save_for_backward(a, b, w)
        return y

    @staticmethod
    def backward(ctx, g):
        a, b, w = ctx.saved_arrays
        need_a, need_b, need_w = ctx.needs_input_grad
        return (unbroadcast(g * (1 - w), a.shape) if need_a else None,
                unbroadcast(g * w, b.shape) if need_b else None,
                unbroadcast(g * (b - a), w.shape) if need_w else None)


# --------------------------------------------------------------------------------------------------
# The squashing functions: tanh, sigmoid and relu, then hardtanh (relu6), hardswish and mish;
# each backward under its forward.
#
# tanh's and
# sigmoid's rules are written with y, the output they kept, so backward computes no exp again.
# --------------------------------------------------------------------------------------------------

class Tanh(Function):
    """y = tanh(x);  dL/dx = g * (1 - y^2)."""

    @staticmethod
    def forward(ctx, x):
        y = np.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_arrays
        return g * (1 - y * y)


class Sigmoid(Function):
    """y = 1 / (1 + exp(-x)) (stable for x = +-1000, see ops/reference.py's sigmoid);  dL/dx = g * y * (1 - y)."""

    @staticmethod
    def forward(ctx, x):
        y = arrays.sigmoid(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_arrays
        return g * y * (1 - y)


class Relu(Function):
    """y = max(x, 0);  dL/dx = g where x > 0, else 0 (the kink at 0 takes 0, as PyTorch).

    A NaN stays NaN (np.maximum passes NaNs through) and passes g on, as PyTorch's relu does."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(~(x <= 0))  # NaN passes its gradient on, as PyTorch's relu does
        return np.maximum(x, x.dtype.type(0))

    @staticmethod
    def backward(ctx, g):
        (positive,) = ctx.saved_arrays
        return grad_where(positive, g)


class Hardtanh(Function):
    """y = x clipped to [lo, hi] (F.hardtanh; F.relu6 is lo = 0, hi = 6);  dL/dx = g where lo < x < hi,
    else 0 (0 at lo and hi too, and g at NaN, as PyTorch)."""

    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(~((x <= lo) | (x >= hi)))
        return np.clip(x, x.dtype.type(lo), x.dtype.type(hi))

    @staticmethod
    def backward(ctx, g):
        (inside,) = ctx.saved_arrays
        return g * inside, None, None


class Hardswish(Function):
    """y = x * relu6(x + 3) / 6: 0 below -3, x above 3, x (x + 3) / 6 between;
    dL/dx = 0 for x <= -3, g (2x + 3) / 6 for -3 < x < 3, g for x >= 3 (PyTorch's choice at -3 and 3)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * np.clip(x + 3, 0, 6) / 6

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_arrays
        return g * np.where(x <= -3, 0, np.where(x < 3, (2 * x + 3) / 6, 1))


class Mish(Function):
    """y = x tanh(softplus(x)), softplus(x) = log(1 + e^x);  with t = tanh(softplus(x)) and
    softplus' = sigmoid:  dL/dx = g * (t + x * sigmoid(x) * (1 - t^2))."""

    @staticmethod
    def forward(ctx, x):
        t = np.tanh(np.logaddexp(x.dtype.type(0), x))  # logaddexp(0, x) = log(1 + e^x) without overflow
        ctx.save_for_backward(x, t)
        return x * t

    @staticmethod
    def backward(ctx, g):
        x, t = ctx.saved_arrays
        return g * (t + x * arrays.sigmoid(x) * (1 - t * t))


# --------------------------------------------------------------------------------------------------
# A change of float dtype as a graph node, so gradients flow through .float() and .double().
# --------------------------------------------------------------------------------------------------

class Cast(Function):
    """y = x in another float dtype;  dL/dx = g in x's dtype (a cast is the identity map)."""

    @staticmethod
    def forward(ctx, x, dtype):
        ctx.dtype = x.dtype
        return x.astype(dtype)

    @staticmethod
    def backward(ctx, g):
        return g.astype(ctx.dtype), None


# --------------------------------------------------------------------------------------------------
# Choosing per element between two tensors by a condition: ta.where (PyTorch's torch.where).
# MaskedFill, which chooses between a tensor and a number, is in rules_shape.py.
# --------------------------------------------------------------------------------------------------

def grad_where(keep, g):
    """g where `keep`, else 0 exactly, even where g is inf or NaN (PyTorch's where(keep, g, 0)): the
    gradient of a branch that was not chosen, a filled place or a clamped entry. A NaN or inf
    upstream (from exp(-inf) * -inf, say) must not turn into NaN through 0 * inf there.

    The product with the bool mask, NaN check included, is faster than numpy's where
    (benchmarks/RESULTS.md, "grad_where (64, 256, 256) against np.where"), so numpy's where runs
    only when the product holds a NaN."""
    with np.errstate(invalid="ignore"):
        kept = g * keep
    if np.isnan(kept.sum()):  # one pass, no allocation: NaN if any entry is (rarely, inf - inf)
        return np.where(keep, g, g.dtype.type(0))
    return kept


class Where(Function):
    """y = a where cond else b;  dL/da = g where cond else 0,  dL/db = g where not cond else 0."""

    @staticmethod
    def forward(ctx, cond, a, b):
        ctx.meta = cond, a.shape, b.shape
        try:
            return np.where(cond, a, b)
        except ValueError:
            raise ShapeError(f"where: cond {cond.shape}, a {a.shape}, b {b.shape} do not broadcast") from None

    @staticmethod
    def backward(ctx, g):
        cond, shape_a, shape_b = ctx.meta
        _, need_a, need_b = ctx.needs_input_grad
        return (None,
                unbroadcast(grad_where(cond, g), shape_a) if need_a else None,
                unbroadcast(grad_where(~cond, g), shape_b) if need_b else None)


def where(cond, a, b):
    """a where cond is True, else b (a or b may be numbers)."""

    cond = np.asarray(cond.data if isinstance(cond, _tensor.Tensor) else cond)
    if cond.dtype != np.bool_:
        raise TypeError(f"where: cond must be bool, got {cond.dtype}")
    if not isinstance(a, _tensor.Tensor) and not isinstance(b, _tensor.Tensor):
        a = _tensor.Tensor(a)  # two numbers: the first sets the dtype (a Python float: float32)
    return Where.apply(cond, *_tensor.pair(a, b))
