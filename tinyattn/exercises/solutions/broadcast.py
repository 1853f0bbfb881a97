"""broadcast: hints, worked solution, classic mistakes."""
from . import Mistake

HINTS = [
    "Start with dL/dx: y = x * w + b element by element, so dy[i, j]/dx[i, j] is the factor that "
    "multiplies x[i, j]. Which element of w is it?",
    "w[j] was used in every row i. A value used in many places gets the sum of the gradients from "
    "each place (the multivariate chain rule). Which axis of grad * x runs over those places?",
    "b[i, 0] was used in every column j of row i: sum over that axis, and keep it (keepdims=True) "
    "so dL/db has b's shape (B, 1).",
]


def backward(grad, cache):
    """dL/dx = grad * w (broadcast back the way the forward did). w served every row, so
    dL/dw = sum over rows of grad * x; b served every column, dL/db = row sums of grad, kept as (B, 1).
    Undoing a broadcast is always this: sum over the axes the forward broadcast, to the input's shape."""
    x, w = cache
    return grad * w, (grad * x).sum(axis=0), grad.sum(axis=1, keepdims=True)


def mistakes(grad, cache, inputs):
    x, w = cache
    return [
        Mistake("x", grad, "yours is grad itself: the factor w is missing. y = x * w + b, so dy/dx = w"),
        Mistake("w", (grad * x).sum(axis=1), "yours sums grad * x over axis 1 (each row's columns). w has one "
                "entry per column, used in every row: sum over the rows, axis 0"),
        Mistake("b", grad.sum(axis=0), "yours sums grad over axis 0 (the rows). b has one entry per row, "
                "used in every column: sum over the columns, axis 1, keepdims=True"),
    ]
