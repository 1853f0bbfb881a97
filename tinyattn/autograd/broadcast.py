"""Broadcasting: the one place where a gradient is summed back to its input's shape.

If forward broadcast an input of shape (3, 1) against (2, 3, 4), each input element was used
once per copy, so its gradient is the sum over the copies: over the new leading axes and over
every axis where the input had size 1.
"""
from ..ops import arrays


def unbroadcast(grad, shape):
    """Sum `grad` down to `shape`, the shape the input had before numpy broadcast it."""
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    summed = tuple(range(extra)) + tuple(extra + axis for axis, size in enumerate(shape)
                                         if size == 1 and grad.shape[extra + axis] != 1)
    return arrays.sum_over(grad, summed).reshape(shape) if summed else grad.reshape(shape)


def broadcasts_to(shape, target):
    """True if an array of `shape` broadcasts to exactly `target` (numpy's rules, right-aligned)."""
    return len(shape) <= len(target) and all(a in (1, b) for a, b in zip(reversed(shape), reversed(target)))
