"""matmul: hints, worked solution, classic mistakes."""
from . import Mistake

HINTS = [
    "Write one element: y[b, t, m] = sum_n x[b, t, n] w[n, m]. Differentiate it with respect to "
    "x[b, t, n] and with respect to w[n, m].",
    "dL/dx[b, t, n] = sum_m grad[b, t, m] w[n, m]: which product of grad and w is that? Check that "
    "its shape is x's.",
    "w is shared by every b and t: dL/dw[n, m] sums x[b, t, n] grad[b, t, m] over both. Flatten "
    "(B, T) into one axis, then it is one product of x^T and grad.",
]


def backward(grad, cache):
    """dL/dx = grad w^T (shape (B, T, M) (M, N) -> x's). dL/dw = sum over b, t of x^T grad: with the
    batch and time axes flattened into rows, one product x_rows^T grad_rows, (N, M) as w."""
    x, w = cache
    N, M = w.shape
    return grad @ w.T, x.reshape(-1, N).T @ grad.reshape(-1, M)


def mistakes(grad, cache, inputs):
    x, w = cache
    return [
        Mistake("w", x[-1].T @ grad[-1], "yours is the last batch element's x^T grad alone. w is used by every "
                "batch element, so its gradient adds up all of theirs"),
    ]
