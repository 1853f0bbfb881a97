"""cross_entropy: hints, worked solution, classic mistakes."""
import numpy as np

from . import Mistake

HINTS = [
    "Take one row and one target t: its loss is -log_p_t = -x_t + log(sum_k exp(x_k)). "
    "Differentiate both terms with respect to x_j.",
    "The first term gives -1 at j == t only (a one-hot row); the log-sum gives exp(x_j) / sum_k exp(x_k), "
    "which is softmax(x)_j = exp(log_p_j).",
    "The loss is the mean over B rows, so each row's gradient is divided by B, and the whole thing is "
    "multiplied by grad (the gradient arriving at the loss).",
]


def backward(grad, cache):
    """-log_p_t = -x_t + log sum_k exp(x_k), so d/dx_j = softmax(x)_j - [j == t]: the probabilities
    minus the one-hot target. The mean over B rows divides by B; the chain rule multiplies by grad."""
    log_p, target = cache
    rows = np.arange(len(target))
    d_logits = np.exp(log_p)
    d_logits[rows, target] -= 1
    return grad * d_logits / len(target)


def mistakes(grad, cache, inputs):
    log_p, target = cache
    B = len(target)
    onehot = np.zeros_like(log_p)
    onehot[np.arange(B), target] = 1
    right = (np.exp(log_p) - onehot) / B
    return [
        Mistake("logits", right, "yours is right up to the factor grad: the loss's own incoming gradient. "
                "Multiply by it (it is 1 only when the loss is the last step)"),
        Mistake("logits", grad * right * B, f"yours is B = {B} times too large: the loss is a mean over the "
                "batch, so each row's gradient carries 1/B"),
        Mistake("logits", -grad * onehot / B, "yours is only the one-hot part: the log of the sum, "
                "log(sum_k exp(x_k)), depends on every logit too, and gives softmax(x)"),
    ]
