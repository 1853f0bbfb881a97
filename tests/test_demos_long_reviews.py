"""demos/long_reviews.py: the reviews' label is the vote of their opinions, and a short run learns and draws."""
import runpy
from pathlib import Path

import numpy as np

from tinyattn.data import PAD
from tinyattn.data.long_reviews import NEGATIVE, POSITIVE, LongReviews
from tinyattn.models import SequenceClassifier

DEMO = Path(__file__).resolve().parents[1] / "demos" / "long_reviews.py"


def vote(words):
    """The label by the rule, read independently: each opinion word, flipped by a "not" before it."""
    score = 0
    for i, word in enumerate(words):
        if word in POSITIVE + NEGATIVE:
            side = 1 if word in POSITIVE else -1
            score += -side if i and words[i - 1] == "not" else side
    return int(score > 0)


def test_the_label_is_the_majority_of_the_opinions_with_negation_and_words_alone_do_not_tell():
    data = LongReviews(seed=2)
    for length in (10, 57, 200):
        for _ in range(100):
            words, label = data.review(length)
            assert len(words) == length and vote(words) == label
    tokens, lengths, labels = data.batch(8)
    assert lengths.max() - lengths.min() <= 10 and (tokens[np.arange(8), lengths - 1] != 0).all()
    # the same words, opposite meanings: only the order of "not" decides
    assert vote("x not good y bad".split()) != vote("x good y not bad".split())


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
              for name, (options, _) in demo["MODELS"].items()}
    words, label = demo["draw_one_review"](models, data, tmp_path / "one.png")
    assert len(words) == 180 and label == vote(words)
    assert (tmp_path / "one.png").stat().st_size > 5000
