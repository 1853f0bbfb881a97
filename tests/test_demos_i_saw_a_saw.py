"""demos/i_saw_a_saw.py: the tagging data follows its rule, and a short run shows what the demo claims."""
import runpy
from pathlib import Path

import numpy as np

from tinyattn.data.ambiguous_words import TAG_PAD, TAGS, AmbiguousWords, majority_tag_ceiling

DEMO = Path(__file__).resolve().parents[1] / "demos" / "i_saw_a_saw.py"


def test_an_ambiguous_word_is_a_noun_after_a_determiner_or_adjective_and_a_verb_otherwise():
    data = AmbiguousWords(seed=3)
    seen = set()
    for _ in range(300):
        words, tags = data.sentence()
        for i, (word, tag) in enumerate(zip(words, tags)):
            if data.vocab.ids[word] in data.ambiguous_ids:
                expected = "NOUN" if tags[i - 1] in ("DET", "ADJ") else "VERB"
                assert tag == expected, (words, tags)
                seen.add((word, tag))
    assert len(seen) == 16  # every ambiguous word met in both roles
    tokens, tags, lengths = data.batch(4)
    assert (tags[np.arange(4), lengths - 1] != TAG_PAD).all() and (tags[tokens == 0] == TAG_PAD).all()


def test_the_majority_ceiling_is_what_one_tag_per_word_can_reach():
    tokens = np.array([[5, 5, 6, 6, 6]])
    tags = np.array([[TAGS.index("NOUN"), TAGS.index("VERB"), 1, 1, 2]])
    assert majority_tag_ceiling(tokens, tags, np.ones_like(tokens, bool)) == 3 / 5


def test_a_short_run_beats_the_per_word_ceiling_with_positions_only_and_resumes(tmp_path, capsys):
    demo = runpy.run_path(str(DEMO))
    args = ["--steps", "150", "--batch", "32", "--test-sentences", "300", "--out-dir", str(tmp_path)]
    result = demo["main"](args)
    accuracy, ceiling = result["accuracy"], result["ceiling"]
    assert 0.45 < ceiling < 0.65
    assert accuracy["per-word MLP"][0] <= ceiling + 1e-9            # one word at a time cannot do better
    assert accuracy["attention + positions"][0] > ceiling + 0.2
    assert accuracy["attention + positions"][0] > accuracy["attention, no positions"][0]
    assert (tmp_path / "heads.png").stat().st_size > 5000
    assert "most frequent tag" in capsys.readouterr().out
    again = demo["main"](args + ["--resume"])                        # nothing left to train: same models
    assert "resumed from" in capsys.readouterr().out and again["accuracy"] == accuracy
