"""demos/induction_heads.py: the output contract, the scores, and a short run that learns to copy."""
import json
import math
import re
import runpy
from pathlib import Path

import numpy as np

DEMO = Path(__file__).resolve().parents[1] / "demos" / "induction_heads.py"


def test_scores_read_the_previous_token_and_the_shifted_diagonal():
    demo = runpy.run_path(str(DEMO))
    L, T = 4, 9                                   # BOS, 4 tokens, the same 4 again
    previous = np.zeros((1, 1, T, T))
    previous[0, 0, np.arange(1, T), np.arange(T - 1)] = 1
    induction = np.zeros((1, 1, T, T))
    induction[0, 0, np.arange(L + 1, T), np.arange(2, L + 2)] = 1
    scores = demo["head_scores"](previous, induction, L)
    assert scores == {"0.0": {"previous_token": 1.0, "prefix_matching": 0.0},
                      "1.0": {"previous_token": 0.0, "prefix_matching": 1.0}}
    assert demo["phase_change_step"]([0, 10, 20], [4.0, 2.5, 1.0], 64) == 20   # ln 64 / 2 = 2.08
    tokens = demo["Sequences"](10, seed=0).batch(3, L)
    assert (tokens[:, 0] == 10).all() and (tokens[:, 1:L + 1] == tokens[:, L + 1:]).all()
    assert all(len(set(row[1:L + 1])) == L for row in tokens)


def test_a_short_run_writes_the_contract_and_copies_the_repeated_half(tmp_path, capsys):
    demo = runpy.run_path(str(DEMO))
    demo["main"](["--steps", "300", "--vocab", "32", "--half", "8", "--d-model", "32", "--lr", "0.01",
                  "--eval-every", "50", "--out-dir", str(tmp_path)])
    results = json.loads((tmp_path / "results.json").read_text())
    assert {"steps", "train_seconds", "eval_steps", "loss_first_half", "loss_repeated_half", "phase_change_step",
            "heads"} <= set(results)
    assert results["steps"] == 300 and results["train_seconds"] > 0
    assert results["eval_steps"] == [0, 50, 100, 150, 200, 250, 300]
    assert len(results["loss_first_half"]) == len(results["loss_repeated_half"]) == 7
    assert set(results["heads"]) == {"0.0", "0.1", "1.0", "1.1"}
    assert all(0 <= value <= 1 for head in results["heads"].values() for value in head.values())
    # learned: the repeated half is copied, the first half stays unpredictable
    first, repeated = results["loss_first_half"][-1], results["loss_repeated_half"][-1]
    assert repeated < 0.25 * first and first > 0.8 * math.log(32)
    assert results["phase_change_step"] in results["eval_steps"][1:]
    assert max(head["prefix_matching"] for name, head in results["heads"].items() if name[0] == "1") > 0.6
    assert max(head["previous_token"] for name, head in results["heads"].items() if name[0] == "0") > 0.6
    for picture in ("phase_change.png", "head_scores.png", "heads.png", "gradient_before_weights.png"):
        assert (tmp_path / picture).stat().st_size > 5000
    assert "K-composition" in capsys.readouterr().out
    page = (tmp_path / "heads.html").read_text()  # every evaluation is a checkpoint of the head view
    assert [int(step) for step in re.findall(r'"label":"step (\d+)"', page)] == results["eval_steps"]
