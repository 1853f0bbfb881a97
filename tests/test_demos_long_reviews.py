"""demos/long_reviews.py: the reviews' label is their first opinion, and a short run learns and draws."""
import json
import runpy
from pathlib import Path

import numpy as np

from tinyattn.data import PAD
from tinyattn.data.long_reviews import NEGATIVE, POSITIVE, LongReviews
from tinyattn.models import SequenceClassifier

DEMO = Path(__file__).resolve().parents[1] / "demos" / "long_reviews.py"


def opinions(words):
    """[(place, side)] of every opinion, read independently: each opinion word, flipped by a "not" before it."""
    found = []
    for i, word in enumerate(words):
        if word in POSITIVE + NEGATIVE:
            side = int(word in POSITIVE)
            found.append((i, 1 - side if i and words[i - 1] == "not" else side))
    return found


def verdict(words):
    return opinions(words)[0][1]


def test_the_label_is_the_first_opinion_with_negation_and_later_remarks_do_not_count():
    data = LongReviews(seed=2)
    remarks_disagree = 0
    for length, remarks in ((10, 0), (57, 7), (200, 25)):  # one remark per 8 words, after the first 15
        for _ in range(100):
            words, label = data.review(length)
            found = opinions(words)
            assert len(words) == length and verdict(words) == label
            assert found[0][0] <= 15 and len(found) == 1 + remarks and all(i > 16 for i, _ in found[1:])
            remarks_disagree += any(side != label for _, side in found[1:])
    assert remarks_disagree > 150  # the remarks are not a second copy of the verdict
    tokens, lengths, labels = data.batch(8)
    assert lengths.max() - lengths.min() <= 10 and (tokens[np.arange(8), lengths - 1] != 0).all()
    # the same words, opposite meanings: only the order of "not" decides
    assert verdict("x not good y bad".split()) != verdict("x good y not bad".split())


def test_a_short_run_learns_with_pooling(tmp_path, capsys):
    demo = runpy.run_path(str(DEMO))
    results = demo["main"](["--steps", "100", "--batch", "16", "--test-reviews", "100", "--out-dir", str(tmp_path),
                            "--only", "LSTM + pooling"])
    assert set(results) == {"LSTM + pooling"} and results["LSTM + pooling"][(10, 30)] >= 0.65  # chance: 0.5 +- 0.05
    assert (tmp_path / "accuracy_by_length.png").stat().st_size > 5000
    assert "chance is 50%" in capsys.readouterr().out


def test_the_long_review_picture_shows_every_pooling_and_the_lstmn(tmp_path):
    demo = runpy.run_path(str(DEMO))
    data = LongReviews(seed=4)
    models = {name: SequenceClassifier(len(data.vocab), 2, pad_id=PAD, **options)
              for name, (options, _) in demo["MODELS"].items() if name in demo["MAIN"]}
    words, label = demo["draw_one_review"](models, data, tmp_path / "one.png")
    assert len(words) == 180 and label == verdict(words)
    assert (tmp_path / "one.png").stat().st_size > 5000


def test_positions_compares_the_transformer_with_sinusoidal_alibi_rope_and_none(tmp_path, capsys):
    demo = runpy.run_path(str(DEMO))
    # eagerly: 150 steps over reviews of many lengths make many compiled signatures, each captured
    # before it pays (tests/test_demos_compiled.py trains this demo compiled)
    results = demo["main"](["--positions", "--steps", "150", "--test-reviews", "50", "--eager", "--out-dir", str(tmp_path)])
    assert set(results) == set(demo["TRANSFORMERS"]) and len(results) == 8
    written = json.loads((tmp_path / "results.json").read_text())
    assert written["positions"] == demo["POSITIONS"] and set(written["models"]) == set(results)
    assert written["models"]["causal + RoPE"]["by_length"]["150-200"] == results["causal + RoPE"][(150, 200)]
    # 150 steps: both learn something on the lengths they train on (chance: 0.5 +- 0.07)
    assert results["Transformer + pooling"][(10, 30)] >= 0.7 and results["Transformer + RoPE"][(10, 30)] >= 0.65
    out = capsys.readouterr().out
    titles = [line for line in out.splitlines() if line.startswith("Transformer, ") and line.endswith(":")]
    assert len(titles) == 2 and "causal" in titles[1] and "train s" in out
    assert all(f"{100 * results[name][(150, 200)]:22.1f}%" in out for name in results)
    assert (tmp_path / "positions_by_length.png").stat().st_size > 5000
    assert not (tmp_path / "accuracy_by_length.png").exists()
