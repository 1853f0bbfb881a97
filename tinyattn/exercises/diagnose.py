"""Name the mistake from the numbers: which simple change turns the true gradient into the learner's?

The exercise's own classic mistakes come first (solutions/NAME.py computes what each wrong
backward returns, from the true gradient's pieces); then the ones any backward can make: a
missing sum over a broadcast axis, a transpose, a sign, a missed or doubled 1/sqrt(d), a
constant factor, gradient where none can flow (a forgotten mask).
"""
import itertools

import numpy as np


def diagnose(got, true, name, exercise, candidates):
    """One hint for a wrong dL/d`name`: `got` is the learner's, `true` tinyattn's."""
    for mistake in candidates:
        if mistake.input == name and _close(got, mistake.gradient):
            return mistake.hint
    if got.shape != true.shape:
        return _shape_hint(got, true, name)
    if not np.isfinite(got).all():
        return (f"yours has {int((~np.isfinite(got)).sum())} entries that are NaN or infinite: look for 0 * inf "
                "(a masked -inf score multiplied instead of dropped), inf - inf, or exp of a large number")
    if got.ndim >= 2 and got.shape[-1] == got.shape[-2] and _close(got.swapaxes(-1, -2), true):
        return (f"yours is the transpose of dL/d{name} (last two axes swapped): a product in the wrong order, "
                "such as a.T @ b where b.T @ a was meant")
    factor = float(np.sum(got * true) / np.sum(true * true)) if np.any(true) else 0.0
    if factor != 0 and _close(got, factor * true):
        return _factor_hint(factor, exercise)
    silent = (np.abs(true) < 1e-12) & (np.abs(got) > 1e-8)
    if silent.any():
        at = tuple(int(i) for i in np.argwhere(silent)[0])
        return (f"yours is nonzero at {int(silent.sum())} elements where the right gradient is exactly 0, "
                f"such as {name}{list(at)}: nothing there can change the output (a masked position, or a value "
                "the forward never used). Is a mask missing, or applied otherwise than in the forward?")
    return ("the error follows no simple pattern (sign, factor, transpose, missing sum): redo the derivation one "
            f"stage at a time, checking each array's shape. Stuck? python -m tinyattn.exercises hint {exercise.name}")


def _shape_hint(got, true, name):
    if got.size == true.size and _close(got.reshape(true.shape), true):
        return (f"the numbers are right but the shape is {got.shape}, not {true.shape}: keep the summed axis "
                "(keepdims=True) or reshape to the input's shape")
    if got.ndim >= 2 and _close(got.swapaxes(-1, -2), true):
        return (f"yours is the transpose of dL/d{name}: a product in the wrong order, such as a.T @ b where "
                f"b.T @ a was meant. dL/d{name} must have {name}'s shape {true.shape}")
    summed = _summed_axes(got, true)
    if summed is not None:
        axes = f"axis {summed[0]}" if len(summed) == 1 else f"axes {summed}"
        return (f"yours, summed over {axes}, is right: {name} was used at every position along "
                f"{'it' if len(summed) == 1 else 'them'} (broadcast, or shared by the batch), so its gradient "
                f"adds up the gradient from every position: .sum(axis={summed if len(summed) > 1 else summed[0]})")
    return f"dL/d{name} must have {name}'s shape {true.shape}, yours is {got.shape}: trace the shape of each step"


def _factor_hint(factor, exercise):
    if abs(factor + 1) < 1e-6:
        return ("yours is the negative of the right gradient: a sign is flipped somewhere (a - b where b - a "
                "was meant, or the derivative of (1 - z) is -1)")
    if exercise.scale is not None and abs(factor * exercise.scale - 1) < 1e-6:
        return (f"yours is sqrt(d) = {1 / exercise.scale:.4g} times too large: the forward multiplies the scores "
                "by 1/sqrt(d), so the chain rule brings that factor into the gradients of q and k too")
    if exercise.scale is not None and abs(factor - exercise.scale) < 1e-6:
        return "yours is 1/sqrt(d) times the right gradient: the scale is applied twice"
    return (f"yours is {factor:.4g} times the right gradient everywhere: a constant factor is off (a 2 from a "
            "square, a 1/n from a mean, a sum where a mean was meant)")


def _close(a, b):
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=1e-8)


def _summed_axes(got, true):
    """The axes of `got` whose sum (kept or dropped) gives `true`, or None."""
    for count in range(1, got.ndim + 1):
        for axes in itertools.combinations(range(got.ndim), count):
            summed = got.sum(axis=axes)
            if summed.size == true.size and _close(summed.reshape(true.shape), true):
                return axes
    return None
