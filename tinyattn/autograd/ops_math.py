"""Powers, exp, log, sqrt, abs and rounded division, each backward under its forward.

Notation as in ops_arithmetic.py: y is the output, g = dL/dy, each return is dL/dx.
"""
import numpy as np

from .errors import ShapeError
from .function import Function


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
        (x,) = ctx.saved_tensors
        if ctx.p == 0:  # x ** 0 = 1 everywhere: zero gradient (p * x ** -1 would be 0 * inf at x = 0)
            return np.zeros_like(g), None
        p = x.dtype.type(ctx.p)
        return g * p * np.power(x, p - 1), None


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
        x, y = ctx.saved_tensors
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
        (x,) = ctx.saved_tensors
        return g * np.sign(x)


class Exp(Function):
    """y = exp(x);  dL/dx = g * y."""

    @staticmethod
    def forward(ctx, x):
        y = np.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class Log(Function):
    """y = log(x);  dL/dx = g / x."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.log(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
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
        (y,) = ctx.saved_tensors
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
