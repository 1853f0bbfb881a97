"""demos/what_is_it.py: the sentences say what "it" is only through the adjective, and a short run learns it."""
import runpy
from pathlib import Path

from tinyattn.data.what_is_it import KINDS, WhatIsIt

DEMO = Path(__file__).resolve().parents[1] / "demos" / "what_is_it.py"


def test_it_means_the_one_noun_its_adjective_fits_and_neither_order_nor_distance_gives_it_away():
    data = WhatIsIt(seed=5)
    first_noun_meant, gaps = [], set()
    for _ in range(400):
        words, it, noun, kind = data.sentence()
        nouns_here = [i for i, w in enumerate(words) if any(w in nouns for nouns, _ in KINDS.values())]
        assert words[it] == "it" and noun in nouns_here and words[noun] in KINDS[kind][0]
        fitting = [k for k, (_, adjectives) in KINDS.items() if words[-1] in adjectives]
        assert fitting == [kind] and len(nouns_here) >= 2
        first_noun_meant.append(noun == nouns_here[0])
        gaps.add(it - noun)
    assert 0.3 < sum(first_noun_meant) / len(first_noun_meant) < 0.7
    assert len(gaps) >= 8


def test_a_short_run_resolves_most_pronouns_and_draws_every_head(tmp_path, capsys):
    demo = runpy.run_path(str(DEMO))
    result = demo["main"](["--steps", "90", "--batch", "32", "--test-sentences", "300", "--out-dir", str(tmp_path)])
    assert result["accuracy"] >= 0.9
    assert (tmp_path / "it_attention.png").stat().st_size > 5000
    out = capsys.readouterr().out
    assert "too tired  ->  it = animal" in out and "too wide  ->  it = street" in out
