"""Arithmetic: + - * / and negation. Each backward sits under its forward, with its derivative in
the docstring.

Notation: y is the output, g = dL/dy the gradient arriving from above, and every returned
gradient is dL/d(input). Binary ops broadcast, so their gradients pass through `unbroadcast`.
"""
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
