"""The exercises: each checker passes a right backward and fails a wrong one with the fitting hint."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tinyattn.exercises import EXERCISES, check

# A right backward for each exercise, as a learner would write it in place of the raise.
SOLUTIONS = {
    "softmax": """
        s = (grad * y).sum(axis=-1, keepdims=True)
        return y * (grad - s)
""",
    "sdpa": """
        scale = ctx.scale
        d_weights = grad @ v.swapaxes(-1, -2)
        d_v = weights.swapaxes(-1, -2) @ grad
        d_scores = weights * (d_weights - (d_weights * weights).sum(axis=-1, keepdims=True))
        d_q = d_scores @ k * scale
        d_k = d_scores.swapaxes(-1, -2) @ q * scale
        return d_q, d_k, d_v
""",
    "additive_score": """
        H = v.shape[0]
        d_hidden = grad[..., None] * v
        d_v = (grad[..., None] * hidden).sum(axis=(0, 1, 2))
        d_pre = d_hidden * (1 - hidden ** 2)
        d_query_part = d_pre.sum(axis=2)
        d_key_part = d_pre.sum(axis=1)
        d_q = d_query_part @ W
        d_k = d_key_part @ U
        d_W = d_query_part.reshape(-1, H).T @ q.reshape(-1, q.shape[-1])
        d_U = d_key_part.reshape(-1, H).T @ k.reshape(-1, k.shape[-1])
        return d_q, d_k, d_W, d_U, d_v
""",
    "gru_step": """
        dz = grad * (h - n) * z * (1 - z)
        dn_pre = grad * (1 - z) * (1 - n ** 2)
        dr = dn_pre * h_n * r * (1 - r)
        d_gi = np.concatenate([dr, dz, dn_pre], axis=1)
        d_gh = np.concatenate([dr, dz, dn_pre * r], axis=1)
        dh = grad * z + d_gh @ w_hh
        dw = d_gh.T @ h
        db = d_gh.sum(axis=0)
        return d_gi, dh, dw, db
""",
    "layer_norm": """
        n = x_hat.shape[-1]
        d_weight = (grad * x_hat).reshape(-1, n).sum(axis=0)
        d_bias = grad.reshape(-1, n).sum(axis=0)
        h = grad * weight
        d_x = (h - h.mean(axis=-1, keepdims=True) - x_hat * (h * x_hat).mean(axis=-1, keepdims=True)) * inv_std
        return d_x, d_weight, d_bias
""",
}

# (exercise, a line of the right answer, its wrong version, what the verdict must say)
MISTAKES = [
    ("layer_norm", "d_bias = grad.reshape(-1, n).sum(axis=0)", "d_bias = grad",
     r"dL/dbias has shape \(2, 3, 5\).*summed over axes \(0, 1\), is right: in the forward bias was broadcast"),
    ("additive_score", "d_q = d_query_part @ W", "d_q = d_pre @ W",
     r"summed over axis 2, is right.*\.sum\(axis=2\)"),
    ("gru_step", "dw = d_gh.T @ h", "dw = h.T @ d_gh", "dL/dw_hh has shape .*Hint: yours is the transpose"),
    ("sdpa", "d_q = d_scores @ k * scale", "d_q = d_scores @ k",
     r"dL/dq is wrong in \d+ of 36 elements\. Worst at q\[.*off by.*Hint: yours is sqrt\(d\) = 2.449 times too large"),
    ("softmax", "return y * (grad - s)", "return y * (s - grad)", "Hint: yours is the negative"),
    ("softmax", "return y * (grad - s)", "return 2 * y * (grad - s)", "Hint: yours is 2 times the right gradient"),
    ("gru_step", "dr = dn_pre * h_n * r * (1 - r)", "dr = dn_pre * r * (1 - r)", "follows no simple pattern"),
]


def _learner_file(tmp_path, name, body):
    template = Path(EXERCISES[name].path).read_text()
    lines = template.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("raise NotImplementedError("))
    path = tmp_path / f"my_{name}.py"
    path.write_text("".join(lines[:at]) + body.lstrip("\n") + "".join(lines[at + 1:]))
    return path


@pytest.mark.parametrize("name", list(EXERCISES))
def test_a_right_backward_passes_and_the_template_does_not(tmp_path, name):
    verdict = check(name, _learner_file(tmp_path, name, SOLUTIONS[name]))
    assert verdict.passed, verdict.message
    assert verdict.message.startswith(f"{name}: correct") and "tinyattn/" in verdict.message
    unsolved = check(name, EXERCISES[name].path)
    assert not unsolved.passed and "not written yet" in unsolved.message


@pytest.mark.parametrize("name, right, wrong, expected", MISTAKES, ids=[f"{m[0]}: {m[2]}" for m in MISTAKES])
def test_a_wrong_backward_fails_with_the_hint_that_fits(tmp_path, name, right, wrong, expected):
    assert right in SOLUTIONS[name]
    verdict = check(name, _learner_file(tmp_path, name, SOLUTIONS[name].replace(right, wrong)))
    assert not verdict.passed
    assert len(verdict.message.split("Hint:")) == 2, verdict.message  # one hint, no more
    assert re.search(expected, verdict.message, flags=re.S), verdict.message


def test_the_command_line_lists_checks_and_reports_a_learners_error_without_a_traceback(tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "tinyattn.exercises", *args], capture_output=True, text=True)

    listing = run()
    assert listing.returncode == 0 and all(name in listing.stdout for name in EXERCISES)
    right = run("check", "softmax", str(_learner_file(tmp_path, "softmax", SOLUTIONS["softmax"])))
    assert right.returncode == 0 and "softmax: correct" in right.stdout
    broken = _learner_file(tmp_path, "softmax", SOLUTIONS["softmax"].replace("axis=-1, keepdims=True", "axis=7"))
    wrong = run("check", "softmax", str(broken))
    assert wrong.returncode == 1 and "Traceback" not in wrong.stdout + wrong.stderr
    assert "your backward raised AxisError" in wrong.stdout and f"{broken}, line " in wrong.stdout
    assert "s = (grad * y).sum(axis=7)" in wrong.stdout


def test_a_file_with_no_or_two_functions_is_named_as_such(tmp_path):
    empty = tmp_path / "empty.py"
    empty.write_text("import tinyattn as ta\n")
    assert "defines 0 subclasses" in check("softmax", empty).message
    two = tmp_path / "two.py"
    two.write_text("import tinyattn as ta\nclass A(ta.autograd.Function): pass\nclass B(ta.autograd.Function): pass\n")
    assert "defines 2 subclasses of ta.autograd.Function: A, B" in check("softmax", two).message
    assert "no exercise called 'soft'" in check("soft", empty).message
