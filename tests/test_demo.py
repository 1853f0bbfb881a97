"""The README's demo must learn what it says it learns."""
import runpy
from pathlib import Path

import numpy as np

DEMO = Path(__file__).resolve().parents[1] / "demos" / "attention_descent.py"


def test_attention_descent_demo_learns_to_attend_to_the_target(capsys):
    demo = runpy.run_path(str(DEMO))
    weights = demo["main"]()
    assert int(np.argmax(weights)) == demo["TARGET"]
    assert weights.max() > 0.6
    assert "gradcheck" in capsys.readouterr().out


def test_self_attention_by_hand_demo_prints_the_seed_numbers_and_draws_the_heatmap(tmp_path, capsys):
    demo = runpy.run_path(str(DEMO.parent / "self_attention_by_hand.py"))
    out = tmp_path / "weights.png"
    demo["main"](str(out))
    text = capsys.readouterr().out
    assert "1.937,    6.683,    1.595" in text
    assert "agrees with central finite differences" in text
    assert out.stat().st_size > 5000 and out.read_bytes()[:4] == b"\x89PNG"
