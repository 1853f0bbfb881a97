"""Element-wise ops. Each backward sits under its forward, with its derivative in the docstring.

Notation: y is the output, g = dL/dy the gradient arriving from above, and every returned
gradient is dL/d(input). Binary ops broadcast, so their gradients pass through `unbroadcast`.
"""
import numpy as np

from ..ops import arrays
from .broadcast import unbroadcast
from .function import Function
from .errors import ShapeError


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
        b, a = ctx.saved_tensors
        shape_a, shape_b = ctx.shapes
        if shape_a == shape_b:  # nothing was broadcast: plain products, nothing to sum back
            return (g * b if b is not None else None), (g * a if a is not None else None)
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
        a, b, y = ctx.saved_tensors
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


class Tanh(Function):
    """y = tanh(x);  dL/dx = g * (1 - y^2)."""

    @staticmethod
    def forward(ctx, x):
        y = np.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
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
        (y,) = ctx.saved_tensors
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
        (positive,) = ctx.saved_tensors
        return g * positive  # a product with the bool mask: ~20x numpy's where on a random mask


class Cast(Function):
    """y = x in another float dtype;  dL/dx = g in x's dtype (a cast is the identity map)."""

    @staticmethod
    def forward(ctx, x, dtype):
        ctx.dtype = x.dtype
        return x.astype(dtype)

    @staticmethod
    def backward(ctx, g):
        return g.astype(ctx.dtype), None
