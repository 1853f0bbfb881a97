"""dtypes, broadcasting and axes: what every rule asks of its operands before any arithmetic.

dtype names as PyTorch spells them (ta.float32 is numpy's float32); the errors tinyattn raises on
purpose (ShapeError, AxisError); `unbroadcast`, the one place a gradient is summed back to its
input's shape; and axis arguments in numpy's or PyTorch's spelling, checked and made non-negative.
"""
import functools
import inspect
import numbers

import numpy as np

from ..ops import arrays


float16, float32, float64 = np.float16, np.float32, np.float64
int32, int64 = np.int32, np.int64
bool = np.bool_  # noqa: A001  (shadows the builtin only inside this module, as torch.bool does)


# --------------------------------------------------------------------------------------------------
# The errors tinyattn raises on purpose, so a caller can catch them by name.
# --------------------------------------------------------------------------------------------------

class ShapeError(ValueError):
    """Operand shapes that do not fit the op; the message names the op and both shapes."""


class AxisError(ShapeError, IndexError):
    """A dim out of range for the tensor: an IndexError, as PyTorch's (and a ShapeError, as before)."""


def require_float(op, **arrays):
    """Refuse integer and bool arrays where an op is only defined on real numbers (softmax, attention)."""
    for name, array in arrays.items():
        if array.dtype.kind != "f":
            raise TypeError(f"{op}: {name} is {array.dtype}, but {op} needs a floating tensor; "
                            f"convert it with .float() (or build it from floats)")


# --------------------------------------------------------------------------------------------------
# Broadcasting: the one place where a gradient is summed back to its input's shape.
#
# If forward broadcast an input of shape (3, 1) against (2, 3, 4), each input element was used
# once per copy, so its gradient is the sum over the copies: over the new leading axes and over
# every axis where the input had size 1.
# --------------------------------------------------------------------------------------------------

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


# --------------------------------------------------------------------------------------------------
# Axis arguments: numpy's axis=/keepdims= or PyTorch's dim=/keepdim=, checked and made non-negative.
#
# Every op that takes an axis goes through here (dim_or_axis for the spelling, axes / one_axis for
# the value), so an out-of-range axis is the same clear error everywhere ("sum: axis 2 is out of
# range for a tensor with 2 dims"); so does every count or size an op takes (whole_number, at the end).
# --------------------------------------------------------------------------------------------------

# Each spelling of an axis argument and the other one it may be given as (numpy's, PyTorch's).
_OTHER_SPELLING = {"axis": "dim", "dim": "axis", "dims": "axis", "keepdims": "keepdim", "keepdim": "keepdims"}


def dim_or_axis(fn):
    """`fn` taking the other spelling of its axis arguments too: dim= for an axis parameter,
    axis= for dim (or dims), keepdim= for keepdims and keepdims= for keepdim. Both spellings of
    one argument in one call (x.sum(0, dim=1)) is a TypeError naming both.

    Decorate each function and method that takes an axis; its body sees its own spelling only:
        @dim_or_axis
        def cumsum(x, dim): ..."""
    params = list(inspect.signature(fn).parameters)
    other_to_own = {_OTHER_SPELLING[p]: p for p in params if p in _OTHER_SPELLING and _OTHER_SPELLING[p] not in params}
    position = {own: params.index(own) for own in other_to_own.values()}
    op = fn.__name__

    @functools.wraps(fn)
    def either_spelling(*args, **kwargs):
        if kwargs and not other_to_own.keys().isdisjoint(kwargs):  # most calls pay this one test
            for other, own in other_to_own.items():
                if other in kwargs:
                    if own in kwargs or len(args) > position[own]:
                        given = kwargs[own] if own in kwargs else args[position[own]]
                        raise TypeError(f"{op}: got both {own}={given!r} and {other}={kwargs[other]!r}; "
                                        "they are one argument (pass one)")
                    kwargs[own] = kwargs.pop(other)
        return fn(*args, **kwargs)

    return either_spelling


def one_axis(axis, ndim, op):
    """One axis as a non-negative int (None stays None); a 0-d tensor has none to work along."""
    if axis is None:
        return None
    if ndim == 0:
        raise ShapeError(f"{op}: a 0-d tensor has no axis to work along; reshape it to (1,) first")
    return axes(axis, ndim, op)[0]


def reduced_axes(axis, ndim, op):
    """The axes a reduction sums over: None, and PyTorch's empty dim list (x.sum(dim=())), mean all."""
    return tuple(range(ndim)) if axis is None or (isinstance(axis, (tuple, list)) and not axis) else axes(axis, ndim, op)


def axes(axis, ndim, op):
    """Normalise an axis (or tuple of axes, or None) to a tuple of non-negative ints."""
    if axis is None:
        return tuple(range(ndim))
    given = axis if isinstance(axis, (tuple, list)) else (axis,)
    if ndim == 0 and all(a in (0, -1) for a in given):
        return ()  # a scalar has one (implicit) axis, as in PyTorch: nothing to reduce
    result = []
    for a in given:
        if not isinstance(a, numbers.Integral) or isinstance(a, bool):
            raise TypeError(f"{op}: axis must be an int or a tuple of ints, got {a!r}")
        if not -ndim <= a < ndim:
            raise AxisError(f"{op}: axis {a} is out of range for a tensor with {ndim} dims"
                            + (" (a 0-d tensor takes 0 or -1)" if ndim == 0 else ""))
        result.append(a % ndim)
    if len(set(result)) != len(result):
        raise ValueError(f"{op}: axis {tuple(given)} names an axis twice")
    return tuple(result)


def whole_number(value, op, name, low=0):
    """`value` as an int >= low (a count or a size: topk's k, split's size, repeat's copies, ...);
    a float, a bool or a smaller number is a clear error naming op, as PyTorch refuses them."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        if value >= low:
            return int(value)
        raise ValueError(f"{op}: {name} must be at least {low}, got {value}")
    raise TypeError(f"{op}: {name} must be a whole number (an int), got {value!r} ({type(value).__name__})")
