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


# What the article does, worked out from its numbers: its scores [2, 4, 4] are Q K^T unscaled, and
# its output 1, [2.0, 7.0, 1.5] = 0.5 [2, 8, 0] + 0.5 [2, 6, 3], needs the weights [0.0, 0.5, 0.5]
# exactly (weights [w, (1 - w) / 2, (1 - w) / 2] give a first entry of 2 - w; rounding the output or
# the weights to one decimal would give 1.9 or, from [0.1, 0.5, 0.5], 2.1).
ARTICLE = ("The article leaves out the 1/sqrt(d_k) scale and takes the softmax of input 1's scores [2, 4, 4] as "
           "[0.0, 0.5, 0.5] (exactly [0.063, 0.468, 0.468]); weighting the values by those gives its output 1, "
           "[2.0, 7.0, 1.5]; with the exact weights it is [1.937, 6.683, 1.595].")


def test_the_worked_example_says_what_the_article_rounds(capsys):
    demo = runpy.run_path(str(DEMO.parent / "self_attention_by_hand.py"))
    demo["walk_through"](scale=False)
    printed = capsys.readouterr().out
    assert "the article takes these weights of input 1 as [0.0, 0.5, 0.5]: output 1 = [2.0, 7.0, 1.5]" in printed
    readme = (DEMO.parents[1] / "README.md").read_text()
    for where, text in (("README.md", readme), ("the demo's docstring", demo["__doc__"])):
        assert ARTICLE in " ".join(text.split()), where
