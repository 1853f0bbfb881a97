"""softmax: hints, worked solution, classic mistakes."""
from . import Mistake

HINTS = [
    "Take one row and write s = sum_k exp(x_k), y_i = exp(x_i) / s. Differentiate y_i with respect "
    "to x_j twice: once for j == i and once for j != i. s depends on every x_j.",
    "You should find dy_i/dx_j = y_i (delta_ij - y_j), where delta_ij is 1 if i == j, else 0. Now "
    "the chain rule: dL/dx_j = sum_i grad_i dy_i/dx_j. Do not stop at the i == j term.",
    "The sum becomes y_j (grad_j - sum_i grad_i y_i): one number per row inside the bracket. Take "
    "it with .sum(axis=-1, keepdims=True) so it broadcasts against y.",
]


def backward(grad, cache):
    """dy_i/dx_j = y_i (delta_ij - y_j), so dL/dx_j = sum_i grad_i y_i (delta_ij - y_j)
    = y_j (grad_j - sum_i grad_i y_i): the Jacobian is never built, one row sum does it."""
    (y,) = cache
    s = (grad * y).sum(axis=-1, keepdims=True)
    return y * (grad - s)


def mistakes(grad, cache, inputs):
    (y,) = cache
    return [
        Mistake("x", y * grad, "yours equals y * grad: the '- sum' term is missing. Each y_i shares the "
                "denominator sum_k exp(x_k) with the whole row, so x_j reaches every y_i, not only y_j: "
                "differentiate y_i with respect to x_j for j != i too, and sum what reaches x_j"),
        Mistake("x", grad * y * (1 - y), "yours equals grad * y * (1 - y): only the diagonal of the Jacobian "
                "(dy_j/dx_j). x_j also changes every other y_i of its row, by -y_i y_j: sum those in too"),
        Mistake("x", y * (grad - (grad * y).sum()), "yours subtracts one sum over the whole array: softmax "
                "normalises each row alone, so the sum is per row: .sum(axis=-1, keepdims=True)"),
        Mistake("x", y * (grad - (grad * y).sum(axis=0, keepdims=True)), "yours sums over axis 0 (down the "
                "columns): softmax normalises along the last axis, so sum along it: axis=-1"),
    ]
