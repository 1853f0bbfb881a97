"""Judge a learner's backward: finite differences say right or wrong, tinyattn's answer says why.

check(name, path) loads forward and backward from the learner's file, then judge():
  1. runs forward on the exercise's fixed float64 inputs (its output must match tinyattn's);
  2. sends a fixed random gradient back through the learner's backward;
  3. compares each input's gradient with central finite differences of the exercise's forward
     (computed once per exercise: the learner's forward was just seen to give the same output);
  4. on a mismatch, names the input, the worst element and the error, and gives ONE hint
     (diagnose.py) found by comparing the learner's gradient with the true one, tinyattn's.
A learner's exception is reported as its last line and where it happened, never a traceback; so is
a sys.exit() in their code (which would otherwise end the checker with its exit code); Ctrl-C stops.
"""
import contextlib
import functools
import importlib.util
import os
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from ..autograd.gradcheck import _numeric_vjps
from ..autograd.tensor import Tensor
from .catalog import EXERCISES, PATH
from .diagnose import diagnose

ATOL, RTOL = 1e-5, 1e-3  # as ta.gradcheck: central differences in float64 are good to ~1e-8 here
WORKING_FOLDER = "exercises"  # where `start` puts a learner's copies, under the current folder


@dataclass(frozen=True)
class Verdict:
    passed: bool
    message: str


class _Stop(Exception):
    """A finished verdict, raised from deep inside a step."""


def default_path(name):
    return os.path.join(WORKING_FOLDER, f"{name}.py")


def check(name, path=None):
    """Verdict on the file at `path` (by default ./exercises/NAME.py) as a solution of exercise `name`."""
    path = default_path(name) if path is None else str(path)
    try:
        if name not in EXERCISES:
            raise _Stop(f"no exercise called {name!r}; the exercises are: {', '.join(EXERCISES)}")
        with _importable(os.path.dirname(os.path.abspath(path))):
            forward, backward = _load(name, path)
            return judge(name, forward, backward, path)
    except _Stop as stop:
        return Verdict(False, str(stop))


def judge(name, forward, backward, path="your file"):
    """Verdict on the pair forward(*inputs, *constants) -> (out, cache), backward(grad, cache) -> gradients."""
    try:
        return _judge(EXERCISES[name], forward, backward, path)
    except _Stop as stop:
        return Verdict(False, str(stop))


def _judge(exercise, forward, backward, path):
    name, arrays, constants = exercise.name, exercise.sample_inputs(), list(exercise.constants.values())
    result = _run(lambda: forward(*(a.copy() for a in arrays.values()), *constants), "your forward", path, name)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise _Stop(f"{name}: forward must return (output, cache); restore it as the template has it "
                    f"({exercise.template.__file__})")
    out, cache = result
    if not _same_outputs(out, _reference(exercise, arrays)):
        raise _Stop(f"{name}: the forward's output differs from tinyattn's; the exercise is the backward, so "
                    f"restore forward as the template has it ({exercise.template.__file__})")

    upstream = _upstream(exercise)
    yours = _run(lambda: backward(_copy(upstream), cache), "your backward", path, name)
    yours = tuple(yours) if isinstance(yours, (tuple, list)) else (yours,)
    if len(yours) != len(arrays):
        raise _Stop(f"{name}: backward returned {len(yours)} gradient(s); forward takes {len(arrays)} input(s) "
                    f"with a gradient ({', '.join(arrays)}): return one for each, in that order")
    numeric, worst = _finite_differences(name), 0.0
    for i, input_name in enumerate(arrays):
        if yours[i] is None:
            raise _Stop(f"{name}: backward returned None for {input_name}; return dL/d{input_name}")
        got, want = np.asarray(yours[i], dtype=np.float64), numeric[i]
        if got.shape != want.shape:
            raise _Stop(f"{name}: dL/d{input_name} has shape {got.shape}, but {input_name} has shape "
                        f"{want.shape}.\nHint: {_hint(exercise, arrays, upstream, got, i)}")
        error = np.nan_to_num(np.abs(got - want), nan=np.inf)  # a NaN is as wrong as can be
        bad = error > ATOL + RTOL * np.abs(want)
        if bad.any():
            at = tuple(int(j) for j in np.unravel_index(int(np.argmax(error)), got.shape))
            raise _Stop(f"{name}: dL/d{input_name} is wrong in {int(bad.sum())} of {got.size} elements. Worst at "
                        f"{input_name}{list(at)}: yours {got[at]:.6g}, finite differences {want[at]:.6g} "
                        f"(off by {got[at] - want[at]:.3g}).\nHint: {_hint(exercise, arrays, upstream, got, i)}")
        worst = max(worst, float(error.max()))
    following = PATH.index(exercise) + 1
    next_step = ("\nThat was the last one: the whole block." if following == len(PATH) else
                 f"\nNext on the path: {PATH[following].name} "
                 f"(python -m tinyattn.exercises start {PATH[following].name})")
    return Verdict(True, f"{name}: correct. Your backward agrees with finite differences for {', '.join(arrays)} "
                         f"(largest difference {worst:.1e}). Compare with tinyattn's own: {exercise.engine}."
                         f"{next_step}")


def _hint(exercise, arrays, upstream, got, i):
    """The hint for input i: the exercise's classic mistakes are computed from a fresh forward's cache."""
    _, cache = exercise.template.forward(*arrays.values(), *exercise.constants.values())
    candidates = exercise.solution.mistakes(_copy(upstream), cache, arrays)
    return diagnose(got, _true_gradients(exercise.name)[i], list(arrays)[i], exercise, candidates)


def _reference(exercise, arrays, requires_grad=False):
    tensors = [Tensor(a, requires_grad=requires_grad) for a in arrays.values()]
    return tensors, exercise.reference(*tensors, *exercise.constants.values())


def _same_outputs(out, reference):
    outs = out if isinstance(out, tuple) else (out,)
    wanted = reference[1] if isinstance(reference[1], tuple) else (reference[1],)
    return len(outs) == len(wanted) and all(
        np.shape(o) == w.shape and np.allclose(o, w.data, rtol=1e-7, atol=1e-9) for o, w in zip(outs, wanted))


def _upstream(exercise):
    """The fixed dL/dout sent back: one random array per output (the LSTM step has two), each entry
    0.5 to 1.5 in size with a random sign, so that no part of the gradient is too small to judge."""
    rng = np.random.default_rng(7)
    out, _ = exercise.template.forward(*exercise.sample_inputs().values(), *exercise.constants.values())
    outs = out if isinstance(out, tuple) else (out,)
    grads = tuple(np.asarray(rng.uniform(0.5, 1.5, np.shape(o)) * rng.choice([-1.0, 1.0], np.shape(o))) for o in outs)
    return grads if isinstance(out, tuple) else grads[0]


def _copy(upstream):
    return tuple(g.copy() for g in upstream) if isinstance(upstream, tuple) else upstream.copy()


@functools.lru_cache(maxsize=None)
def _true_gradients(name):
    """tinyattn's gradients of sum(out * upstream) for each input."""
    exercise = EXERCISES[name]
    tensors, out = _reference(exercise, exercise.sample_inputs(), requires_grad=True)
    upstream = _upstream(exercise)
    outs, grads = (out, upstream) if isinstance(out, tuple) else ((out,), (upstream,))
    total = None
    for o, g in zip(outs, grads):
        term = (o * Tensor(g)).sum()
        total = term if total is None else total + term
    total.backward()
    return [t.grad for t in tensors]


@functools.lru_cache(maxsize=None)
def _finite_differences(name, eps=1e-6):
    """Central differences of sum(forward(...) * upstream), element by element, for each input:
    ta.gradcheck's own differences, run on the exercise's numpy forward."""
    exercise = EXERCISES[name]
    arrays, constants, upstream = exercise.sample_inputs(), list(exercise.constants.values()), _upstream(exercise)

    def forward(*tensors):  # the exercise's forward, its outputs as tensors
        out, _ = exercise.template.forward(*(t.data for t in tensors), *constants)
        return tuple(Tensor(o) for o in (out if isinstance(out, tuple) else (out,)))

    inputs = [Tensor(array) for array in arrays.values()]
    picks = [list(np.ndindex(array.shape)) for array in arrays.values()]
    upstream = list(upstream) if isinstance(upstream, tuple) else [upstream]
    per_output = _numeric_vjps(forward, inputs, list(enumerate(inputs)), picks, upstream, eps)
    return [sum(numeric[k] for numeric in per_output).reshape(array.shape) for k, array in enumerate(arrays.values())]


@contextlib.contextmanager
def _importable(folder):
    """The learner's folder first on sys.path, so that a file can import its neighbours (`from
    layer_norm import backward`), each read afresh: a neighbour edited since the last check counts."""
    def forget():
        for module_name, module in list(sys.modules.items()):
            if os.path.dirname(os.path.abspath(getattr(module, "__file__", None) or "/")) == folder:
                del sys.modules[module_name]
    forget()
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        sys.path.remove(folder)
        forget()


def _load(name, path):
    """forward and backward from the learner's file."""
    if not os.path.isfile(path):
        raise _Stop(f"no file at {path}: python -m tinyattn.exercises start {name} makes it")
    module_name = f"tinyattn_exercise_{name}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    _run(lambda: spec.loader.exec_module(module), f"loading {path}", path, name)
    missing = [f for f in ("forward", "backward") if not callable(getattr(module, f, None))]
    if missing:
        raise _Stop(f"{path} defines no {' and no '.join(missing)} function at its top level: the checker calls "
                    f"forward and backward as the template names them (start {name} --force makes a fresh copy)")
    return module.forward, module.backward


def _run(step, what, path, name):
    """step(), or a _Stop naming the learner's error and the line of their file it came from."""
    try:
        return step()
    except NotImplementedError as error:
        frame = traceback.extract_tb(error.__traceback__)[-1]
        raise _Stop(f"{name}: not written yet: replace the `raise NotImplementedError` in {frame.filename} "
                    f"(line {frame.lineno}) with your code.\nStuck? python -m tinyattn.exercises hint {name} "
                    "gives a first step") from None
    except ModuleNotFoundError as error:
        if error.name not in EXERCISES:
            raise _Stop(f"{what} raised ModuleNotFoundError: {error}{_where(error, path)}") from None
        raise _Stop(f"{name} imports your {error.name}, which is not beside it in {os.path.dirname(path) or '.'} "
                    f"yet: python -m tinyattn.exercises start {error.name}") from None
    except KeyboardInterrupt:  # Ctrl-C is the learner stopping the checker, not a wrong answer
        raise
    except SystemExit as error:  # sys.exit(0) must not pass for "right": the checker's exit code is the verdict
        raise _Stop(f"{what} called sys.exit({error.code!r}) (or exit()), which would end the checker before "
                    f"it judged anything: return the result instead{_where(error, path)}") from None
    except BaseException as error:  # the learner's bug: report it plainly, without a traceback
        raise _Stop(f"{what} raised {type(error).__name__}: {error}{_where(error, path)}") from None


def _where(error, path):
    if isinstance(error, SyntaxError) and error.lineno:
        return f"\n  at {error.filename}, line {error.lineno}: {(error.text or '').strip()}"
    frames = traceback.extract_tb(error.__traceback__)
    mine = [f for f in frames if os.path.abspath(f.filename) == os.path.abspath(path)] or frames[-1:]
    return f"\n  at {mine[-1].filename}, line {mine[-1].lineno}: {mine[-1].line}" if mine else ""
