"""Gradcheck every Function of tinyattn on its registry samples (float64, random upstream)."""
import importlib
import pkgutil

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import tinyattn
import tinyattn as ta
from tinyattn.autograd import Function

from .registry import CASES, NON_CONTIGUOUS_CASES, has_non_contiguous_input, leaf

SAMPLES = CASES + NON_CONTIGUOUS_CASES
IDS = [f"{fn.__name__}: {name}" for fn, name, _, _ in SAMPLES]


@pytest.mark.parametrize("function, name, fn, make_inputs", SAMPLES, ids=IDS)
def test_function_gradchecks(function, name, fn, make_inputs):
    inputs = make_inputs(np.random.default_rng(7))
    # The sample must really go through the Function it is listed under.
    out = fn(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    assert any(o.grad_fn == function.__name__ for o in outs), f"{name} does not call {function.__name__}"
    assert ta.gradcheck(fn, inputs)


HEAVY = [c for c in CASES if c[0].__module__.endswith("rules_nn")]


@pytest.mark.numpy_backend
@pytest.mark.parametrize("function, name, fn, make_inputs", HEAVY, ids=[f"{c[0].__name__}: {c[1]}" for c in HEAVY])
def test_heavy_functions_gradcheck_on_numpy_references(function, name, fn, make_inputs):
    assert ta.gradcheck(fn, make_inputs(np.random.default_rng(8)))


def _all_functions():
    for info in pkgutil.walk_packages(tinyattn.__path__, prefix="tinyattn."):
        # Exercises hold unfinished Functions on purpose (the learner writes backward); their
        # solutions are tinyattn's own Functions, listed here, and test_exercises.py checks them.
        if not info.name.startswith(("tinyattn.viz", "tinyattn.exercises")):
            importlib.import_module(info.name)
    found, todo = set(), [Function]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("tinyattn."):
                found.add(sub)
    return found


def test_every_function_has_a_registry_case():
    listed = {fn for fn, *_ in CASES}
    missing = sorted(f"{f.__module__}.{f.__name__}" for f in _all_functions() - listed)
    assert not missing, f"Functions without a gradcheck case in tests/registry.py: {missing}"


def test_every_function_has_a_non_contiguous_sample():
    rng = np.random.default_rng(0)
    covered = {fn for fn, _, _, make_inputs in SAMPLES if has_non_contiguous_input(make_inputs(rng))}
    missing = sorted(f"{f.__module__}.{f.__name__}" for f in _all_functions() - covered)
    assert not missing, f"Functions without a non-contiguous sample in tests/registry.py: {missing}"


@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3),
       op=st.sampled_from(["add", "sub", "mul", "div"]))
def test_binary_ops_gradcheck_on_any_broadcast(shapes, op):
    rng = np.random.default_rng(0)
    a = leaf(rng.standard_normal(shapes.input_shapes[0]))
    b = leaf(rng.uniform(0.5, 2.0, shapes.input_shapes[1]))
    fn = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b,
          "mul": lambda a, b: a * b, "div": lambda a, b: a / b}[op]
    assert fn(a, b).shape == shapes.result_shape
    assert ta.gradcheck(fn, (a, b))
