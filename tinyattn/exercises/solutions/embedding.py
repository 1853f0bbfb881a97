"""embedding: hints, worked solution, classic mistakes."""
import numpy as np

from . import Mistake

HINTS = [
    "y[b, t] depends on one row of the table, row tokens[b, t], times sqrt(d). So dL/dtable is zero "
    "except in the rows of words that occur. What does a row get when its word occurs twice?",
    "A row gets the sum of the gradients of every place its word was used. Plain indexed assignment "
    "(d[tokens] = ...) keeps only the last one when a word repeats; np.add.at adds them all.",
    "positions[t] is added at time t in every sentence of the batch: sum grad over the batch. "
    "Rows t >= T were not used: their gradient is 0, and dL/dpositions still has all max_len rows.",
]


def backward(grad, cache):
    """A lookup's backward is a scatter-add: each grad[b, t] (times sqrt(d)) goes to the row its word
    came from, repeated words adding up (np.add.at; plain indexed assignment keeps one). positions[t]
    served every sentence: sum over the batch; the rows past T get 0."""
    tokens, table_shape, positions_shape = cache
    d = table_shape[1]
    d_table = np.zeros(table_shape)
    np.add.at(d_table, tokens, grad * np.sqrt(d))
    d_positions = np.zeros(positions_shape)
    d_positions[:tokens.shape[1]] = grad.sum(axis=0)
    return d_table, d_positions


def mistakes(grad, cache, inputs):
    tokens, table_shape, positions_shape = cache
    d = table_shape[1]
    assigned = np.zeros(table_shape)
    assigned[tokens] = grad * np.sqrt(d)
    unscaled = np.zeros(table_shape)
    np.add.at(unscaled, tokens, grad)
    return [
        Mistake("table", assigned, "yours is right for words that occur once and wrong for repeated ones: "
                "d[tokens] = ... keeps only the last occurrence. A repeated word's row sums every use: np.add.at"),
        Mistake("table", unscaled, f"yours is sqrt(d) = {np.sqrt(d):.4g} times too small: forward multiplies "
                "every embedding by sqrt(d), so its gradient carries that factor too"),
        Mistake("positions", grad.sum(axis=0), f"yours has T = {tokens.shape[1]} rows, the right ones: "
                f"dL/dpositions needs all max_len = {positions_shape[0]} rows, zeros where no position was used"),
        Mistake("positions", grad, "yours has one row per sentence and position: positions[t] served every "
                "sentence, so sum over the batch (axis 0), and give all max_len rows"),
    ]
