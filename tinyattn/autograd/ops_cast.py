"""A change of float dtype as a graph node, so gradients flow through .float() and .double()."""
from .function import Function


class Cast(Function):
    """y = x in another float dtype;  dL/dx = g in x's dtype (a cast is the identity map)."""

    @staticmethod
    def forward(ctx, x, dtype):
        ctx.dtype = x.dtype
        return x.astype(dtype)

    @staticmethod
    def backward(ctx, g):
        return g.astype(ctx.dtype), None
