"""Judge a learner's backward: finite differences say right or wrong, tinyattn's answer says why.

check(name, path):
  1. load the one ta.autograd.Function subclass defined in the file at `path`;
  2. run its forward on the exercise's fixed float64 inputs (it must match tinyattn's);
  3. send a fixed random gradient back through the learner's backward;
  4. compare each input's gradient with central finite differences of the forward;
  5. on a mismatch, name the input, the worst element and the error, and give ONE hint found by
     comparing the learner's gradient with the true one (tinyattn's): a missing sum over a
     broadcast axis, a transposed product, a forgotten 1/sqrt(d), a sign, a constant factor.
A learner's exception is reported as its last line and where it happened, never a traceback.
"""
import importlib.util
import itertools
import os
import traceback
from dataclasses import dataclass

import numpy as np

from ..autograd.function import Function
from ..autograd.gradcheck import _numeric_vjps
from ..autograd.tensor import Tensor
from .catalog import EXERCISES

ATOL, RTOL = 1e-5, 1e-3  # as ta.gradcheck: finite differences are good to ~1e-8 here


@dataclass(frozen=True)
class Verdict:
    passed: bool
    message: str


class _Stop(Exception):
    """A finished verdict, raised from deep inside a step."""


def check(name, path):
    """Verdict on the Function in the file at `path` as a solution of exercise `name`."""
    try:
        return _check(name, path)
    except _Stop as stop:
        return Verdict(False, str(stop))


def _check(name, path):
    exercise = EXERCISES.get(name)
    if exercise is None:
        raise _Stop(f"no exercise called {name!r}; the exercises are: {', '.join(EXERCISES)}")
    function = _load_function(path)
    arrays = exercise.sample_inputs()
    names = list(arrays)

    inputs = [Tensor(a, requires_grad=True) for a in arrays.values()]
    out = _run(lambda: function.apply(*inputs), "your forward", path)
    expected = exercise.reference(*[Tensor(a) for a in arrays.values()])
    if not isinstance(out, Tensor) or out.shape != expected.shape or not np.allclose(out.data, expected.data,
                                                                                     rtol=1e-7, atol=1e-9):
        raise _Stop(f"{name}: the forward's output differs from tinyattn's; the exercise is the backward, so "
                    f"restore forward from {exercise.path}")

    upstream = np.random.default_rng(7).standard_normal(out.shape)
    yours = _run(lambda: function.backward(out._ctx, upstream.copy()), "your backward", path)
    yours = yours if isinstance(yours, (tuple, list)) else (yours,)
    if len(yours) != len(names):
        raise _Stop(f"{name}: backward returned {len(yours)} gradient(s); forward takes {len(names)} inputs "
                    f"({', '.join(names)}): return one gradient per input, in that order")

    true = _true_gradients(exercise, arrays, upstream)
    picks = [list(np.ndindex(a.shape)) for a in arrays.values()]
    numeric = _numeric_vjps(lambda *t: function.apply(*t), inputs, list(enumerate(inputs)), picks, [upstream],
                            eps=1e-6)[0]
    worst = 0.0
    for i, input_name in enumerate(names):
        want = numeric[i].reshape(arrays[input_name].shape)
        got = yours[i]
        if got is None:
            raise _Stop(f"{name}: backward returned None for {input_name}; return dL/d{input_name}")
        got = np.asarray(got, dtype=np.float64)
        if got.shape != want.shape:
            raise _Stop(f"{name}: dL/d{input_name} has shape {got.shape}, but {input_name} has shape {want.shape}.\n"
                        f"Hint: {_hint(got, true[i], input_name, exercise)}")
        error = np.abs(got - want)
        bad = error > ATOL + RTOL * np.abs(want)
        if bad.any() or not np.isfinite(got).all():
            at = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.where(np.isfinite(error), error, np.inf))),
                                                         got.shape))
            raise _Stop(f"{name}: dL/d{input_name} is wrong in {int(bad.sum())} of {got.size} elements. Worst at "
                        f"{input_name}{list(at)}: yours {got[at]:.6g}, finite differences {want[at]:.6g} "
                        f"(off by {got[at] - want[at]:.3g}).\nHint: {_hint(got, true[i], input_name, exercise)}")
        worst = max(worst, float(error.max()))
    return Verdict(True, f"{name}: correct. Your backward agrees with finite differences for {', '.join(names)} "
                         f"(largest difference {worst:.1e}). Compare with tinyattn's own: {exercise.solution}.")


def _load_function(path):
    """The one Function subclass defined in the file at `path` (not imported into it)."""
    if not os.path.isfile(path):
        raise _Stop(f"no file at {path}: copy an exercise first (python -m tinyattn.exercises lists them)")
    module_name = "learner_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    _run(lambda: spec.loader.exec_module(module), f"loading {path}", path)
    found = [v for v in vars(module).values()
             if isinstance(v, type) and issubclass(v, Function) and v.__module__ == module_name]
    if len(found) != 1:
        listed = f": {', '.join(f.__name__ for f in found)}" if found else ""
        raise _Stop(f"{path} defines {len(found)} subclasses of ta.autograd.Function{listed}; "
                    "the checker needs exactly one (the exercise's)")
    return found[0]


def _run(step, what, path):
    """step(), or a _Stop naming the learner's error and the line of their file it came from."""
    try:
        return step()
    except NotImplementedError:
        raise _Stop(f"{what} is not written yet: replace the `raise NotImplementedError` in {path} "
                    "with your code (the comments above it give the steps)") from None
    except Exception as error:  # the learner's bug: report it plainly, without a traceback
        where = _where(error, path)
        raise _Stop(f"{what} raised {type(error).__name__}: {error}{where}") from None


def _where(error, path):
    if isinstance(error, SyntaxError) and error.lineno:
        return f"\n  at {error.filename}, line {error.lineno}: {(error.text or '').strip()}"
    frames = traceback.extract_tb(error.__traceback__)
    mine = [f for f in frames if os.path.abspath(f.filename) == os.path.abspath(path)] or frames[-1:]
    if not mine:
        return ""
    frame = mine[-1]
    return f"\n  at {frame.filename}, line {frame.lineno}: {frame.line}"


def _true_gradients(exercise, arrays, upstream):
    tensors = [Tensor(a, requires_grad=True) for a in arrays.values()]
    exercise.reference(*tensors).backward(upstream)
    return [t.grad for t in tensors]


# --- hints: which simple mistake turns the true gradient into the learner's? ------------------

def _hint(got, true, name, exercise):
    if got.ndim >= 2 and _close(got.swapaxes(-1, -2), true):
        return (f"yours is the transpose of dL/d{name} (last two axes swapped): a product in the wrong order "
                f"or a missing transpose, such as a.T @ b where b.T @ a was meant. dL/d{name} must have "
                f"{name}'s shape {true.shape}: check the shape of each factor")
    summed = _summed_to(got, true)
    if summed is not None:
        axes = f"axis {summed[0]}" if len(summed) == 1 else f"axes {summed}"
        return (f"yours, summed over {axes}, is right: in the forward {name} was broadcast (the same values "
                f"used at every position along {'it' if len(summed) == 1 else 'them'}), so its gradient adds up "
                f"the contributions from every position: .sum(axis={summed if len(summed) > 1 else summed[0]})")
    if got.shape != true.shape:
        return f"dL/d{name} must have the shape of {name}, {true.shape}; trace the shape of each step"
    factor = float(np.sum(got * true) / np.sum(true * true)) if np.any(true) else 0.0
    if _close(got, factor * true) and factor != 0:
        if abs(factor + 1) < 1e-6:
            return ("yours is the negative of the right gradient: a sign is flipped somewhere (a - b where "
                    "b - a was meant, or the derivative of (1 - z) is -1)")
        if exercise.scale is not None and abs(factor * exercise.scale - 1) < 1e-6:
            return (f"yours is sqrt(d) = {1 / exercise.scale:.4g} times too large: the forward multiplies the scores "
                    f"by 1/sqrt(d), so the chain rule brings that factor into dL/dq and dL/dk too")
        if exercise.scale is not None and abs(factor - exercise.scale) < 1e-6:
            return "yours is 1/sqrt(d) times the right gradient: the scale is applied once too often"
        return (f"yours is {factor:.4g} times the right gradient everywhere: a constant factor is off "
                "(a missing 2 from a square, a 1/n from a mean, a sum where a mean was meant)")
    return ("the error follows no simple pattern (sign, factor, transpose, missing sum): redo the derivation "
            f"step by step and compare the shapes of dL/d{name} and {name} at each step")


def _close(a, b):
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=1e-8)


def _summed_to(got, true):
    """The axes of `got` whose sum (keeping or dropping them) gives `true`, or None."""
    for count in range(1, got.ndim + 1):
        for axes in itertools.combinations(range(got.ndim), count):
            for keepdims in (False, True):
                summed = got.sum(axis=axes, keepdims=keepdims)
                if summed.shape == true.shape and _close(summed, true):
                    return axes
                if summed.size == true.size and summed.ndim != true.ndim and _close(summed.reshape(true.shape), true):
                    return axes
    return None
