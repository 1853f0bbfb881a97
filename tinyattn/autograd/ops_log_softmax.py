"""Log-softmax as an op of its own (x.log_softmax(dim)): log-probabilities without the exp and
log of a softmax in between, which would turn a tiny probability into log(0) = -inf.
Like ops_nn.py's ops it calls array functions (ops/reference.py) along the last axis.
"""
from ..ops import arrays
from .errors import require_float
from .function import Function
from .ops_nn import _along


class LogSoftmax(Function):
    """y = x - log(sum(exp(x))) along `axis`;  dL/dx = g - arrays.softmax(x) * sum(g) = g - exp(y) * sum(g)."""

    @staticmethod
    def forward(ctx, x, axis):
        require_float("log_softmax", x=x)
        y = _along(axis, arrays.log_softmax, x)
        ctx.save_for_backward(y)
        ctx.axis = axis
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return _along(ctx.axis, arrays.log_softmax_backward, y, g), None
