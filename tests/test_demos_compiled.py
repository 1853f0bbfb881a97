"""The demos train compiled by default (ta.compile through ta.train.fit(batches=, compile=True));
--eager trains the same steps eagerly. A short run each way must give the same results, and the
compiled run must not fall back to eager with a warning."""
import pathlib
import runpy
import warnings

import pytest

import tinyattn.train.learning_step as learning_step

DEMOS = pathlib.Path(__file__).parent.parent / "demos"

SHORT_RUNS = {
    "i_saw_a_saw": ["--steps", "12", "--batch", "16", "--test-sentences", "50"],
    "what_is_it": ["--steps", "12", "--batch", "16", "--test-sentences", "50"],
    "long_reviews": ["--only", "Transformer + RoPE", "--steps", "12", "--batch", "8", "--test-reviews", "20"],
    "induction_heads": ["--steps", "30", "--vocab", "16", "--half", "4", "--d-model", "16", "--eval-every", "6"],
}


def _without_timing(results):
    """The demo's results less what a clock measured (seconds differ between any two runs)."""
    if isinstance(results, dict):
        return {k: _without_timing(v) for k, v in results.items() if "seconds" not in str(k)}
    return results


@pytest.mark.parametrize("name", sorted(SHORT_RUNS))
def test_a_demo_trains_the_same_compiled_and_eager(name, tmp_path, monkeypatch):
    main = runpy.run_path(str(DEMOS / f"{name}.py"))["main"]
    steps, compile_step = [], learning_step.compile_step  # the compiled steps fit made, to see them replay

    def compile_and_keep(fn):
        steps.append(compile_step(fn))
        return steps[-1]
    monkeypatch.setattr(learning_step, "compile_step", compile_and_keep)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*ta.compile.*")  # a fallback to eager is a failure here
        warnings.filterwarnings("error", message=".*compile=True.*")
        compiled = main(SHORT_RUNS[name] + ["--out-dir", str(tmp_path / "compiled")])
    assert steps and sum(entry.replays for step in steps for entry in step.entries.values()) > 0
    steps.clear()
    eager = main(SHORT_RUNS[name] + ["--out-dir", str(tmp_path / "eager"), "--eager"])
    assert not steps  # --eager made no compiled step
    assert _without_timing(compiled) == _without_timing(eager)
