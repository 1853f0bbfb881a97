"""The exercises: every worked solution passes, every blank exercise fails saying what to do, and
every classic mistake gets the hint that names it (the cases are in test_exercises_mistakes.py)."""
import ast
import inspect

import numpy as np
import pytest

from tinyattn.exercises import EXERCISES, PATH, check, judge
from tinyattn.exercises.checker import _finite_differences, _true_gradients, _upstream

NAMES = [exercise.name for exercise in PATH]


def test_the_path_has_every_step_from_broadcasting_to_the_whole_block():
    assert NAMES == ["broadcast", "matmul", "softmax", "cross_entropy", "layer_norm", "attention", "multi_head",
                     "additive_score", "embedding", "rnn_step", "gru_step", "lstm_step", "encoder_layer"]


@pytest.mark.parametrize("name", NAMES)
def test_tinyattn_and_finite_differences_agree_on_the_true_gradient(name):
    # The checker judges by finite differences and hints by tinyattn's gradient: they must be one answer.
    for numeric, engine in zip(_finite_differences(name), _true_gradients(name)):
        assert engine.dtype == np.float64 and numeric.shape == engine.shape
        np.testing.assert_allclose(numeric, engine, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", NAMES)
def test_the_worked_solution_passes(name):
    exercise = EXERCISES[name]
    verdict = judge(name, exercise.template.forward, exercise.solution.backward)
    assert verdict.passed, verdict.message
    assert verdict.message.startswith(f"{name}: correct") and exercise.engine in verdict.message


@pytest.mark.parametrize("name", NAMES)
def test_the_blank_exercise_fails_saying_where_to_write_and_how_to_get_a_hint(name):
    verdict = check(name, EXERCISES[name].template.__file__)
    assert not verdict.passed
    assert "not written yet" in verdict.message and f"templates/{name}.py (line " in verdict.message
    assert f"hint {name}" in verdict.message


@pytest.mark.parametrize("name", NAMES)
def test_the_blank_exercise_gives_no_formula_only_the_cache_and_a_raise(name):
    """backward's body in the learner's file: a docstring, unpacking of grad and cache, the raise."""
    source = inspect.getsource(EXERCISES[name].template)
    backward = next(node for node in ast.parse(source).body
                    if isinstance(node, ast.FunctionDef) and node.name == "backward")
    docstring, *statements, last = backward.body
    assert isinstance(docstring, ast.Expr) and isinstance(last, ast.Raise)
    for statement in statements:
        assert isinstance(statement, ast.Assign) and ast.unparse(statement.value) in ("cache", "grad"), \
            ast.unparse(statement)
    assert "Step" not in source and "delta_ij" not in source


@pytest.mark.parametrize("name", NAMES)
def test_each_exercise_has_hints_and_classic_mistakes_that_differ_from_the_right_answer(name):
    exercise = EXERCISES[name]
    assert 3 <= len(exercise.solution.HINTS) <= 5
    arrays = exercise.sample_inputs()
    _, cache = exercise.template.forward(*arrays.values(), *exercise.constants.values())
    mistakes = exercise.solution.mistakes(_upstream(exercise), cache, arrays)
    assert mistakes
    for mistake in mistakes:
        right = _true_gradients(name)[list(arrays).index(mistake.input)]
        # a candidate equal to the right answer could never be reported
        assert mistake.gradient.shape != right.shape or not np.allclose(mistake.gradient, right), mistake.hint
