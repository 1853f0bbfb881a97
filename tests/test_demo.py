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
