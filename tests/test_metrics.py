"""tinyattn.metrics: BLEU by hand and against sacrebleu, alignment figures, length buckets."""
import math

import numpy as np
import pytest

from tinyattn.metrics import (alignment_accuracy, alignment_error_rate, by_length, corpus_bleu, exact_match,
                              token_accuracy)


def test_exact_match_and_token_accuracy():
    refs = [["a", "b", "c"], ["d", "e"]]
    assert exact_match([["a", "b", "c"], ["d"]], refs) == 0.5
    assert token_accuracy([["a", "x", "c", "z"], ["d"]], refs) == pytest.approx(3 / 5)
    with pytest.raises(ValueError, match="one each"):
        exact_match([["a"]], refs)


def test_bleu_worked_by_hand():
    hyp, ref = "the cat sat on a mat".split(), "the cat sat on the mat".split()
    # clipped matches: 1-grams 5/6, 2-grams 3/5, 3-grams 2/4, 4-grams 1/3; same length: no penalty
    want = 100 * math.exp((math.log(5 / 6) + math.log(3 / 5) + math.log(2 / 4) + math.log(1 / 3)) / 4)
    assert corpus_bleu([hyp], [ref]) == pytest.approx(want)
    assert corpus_bleu([ref], [ref]) == pytest.approx(100)
    # clipping: "the the the" earns one "the" only; no 2-gram matches, so 0 without smoothing
    assert corpus_bleu([["the", "the", "the"]], [["the", "cat"]]) == 0.0
    # a short hypothesis pays the brevity penalty exp(1 - r/c), and special tokens are dropped
    short = corpus_bleu([["<s>", "a", "b", "c", "d", "</s>"]], [["a", "b", "c", "d", "e", "f"]])
    assert short == pytest.approx(100 * math.exp(1 - 6 / 4))


def _corpora():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(8)]
    for noise in (0.0, 0.1, 0.3, 0.6):
        hyps, refs = [], []
        for _ in range(40):
            ref = list(rng.choice(words, size=int(rng.integers(4, 20))))
            hyp = [w if rng.random() > noise else str(rng.choice(words)) for w in ref]
            if rng.random() < noise:
                hyp = hyp[: len(hyp) - int(rng.integers(1, 4))]  # some shorter, for the brevity penalty
            hyps.append(hyp)
            refs.append(ref)
        yield hyps, refs


@pytest.mark.parametrize("corpus", list(_corpora()), ids=["exact", "noise 0.1", "noise 0.3", "noise 0.6"])
def test_bleu_equals_sacrebleu(corpus):
    sacrebleu = pytest.importorskip("sacrebleu")
    hyps, refs = corpus
    theirs = sacrebleu.metrics.BLEU(smooth_method="none", tokenize="none").corpus_score(
        [" ".join(h) for h in hyps], [[" ".join(r) for r in refs]]).score
    assert corpus_bleu(hyps, refs) == pytest.approx(theirs, abs=1e-9)


def test_alignment_accuracy_and_error_rate():
    weights = [np.array([[0.7, 0.3], [0.6, 0.4], [0.0, 1.0]]), np.array([[0.1, 0.9]])]
    gold = [[0, 1, 1], [1]]
    assert alignment_accuracy(weights, gold) == 0.75
    assert alignment_error_rate(weights, gold) == pytest.approx(0.25)
    perfect = [np.eye(3)]
    assert alignment_accuracy(perfect, [[0, 1, 2]]) == 1 and alignment_error_rate(perfect, [[0, 1, 2]]) == 0


def test_by_length_buckets():
    refs = [["a"] * n for n in (3, 4, 9, 10)]
    hyps = [refs[0], ["b"], refs[2], refs[3]]
    lengths = [len(r) for r in refs]
    got = by_length(exact_match, lengths, [(1, 5), (6, 10), (11, 20)], hyps, refs)
    assert got == {"1-5": 0.5, "6-10": 1.0}


HYPS = ["the cat sat on a mat today", "a dog ran home fast"]
REFS = ["the cat sat on the mat today", "the dog ran home fast"]


def test_sentences_as_strings_are_split_into_words_as_sacrebleu_does():
    sacrebleu = pytest.importorskip("sacrebleu")
    theirs = sacrebleu.corpus_bleu(HYPS, [REFS], tokenize="none").score
    assert corpus_bleu(HYPS, REFS) == pytest.approx(theirs, abs=1e-9)  # the old tree scored characters: 83.7
    assert corpus_bleu(HYPS, REFS) == pytest.approx(corpus_bleu([h.split() for h in HYPS], [r.split() for r in REFS]))
    assert token_accuracy(["a b c", "d e"], ["a x c", "d e"]) == pytest.approx(4 / 5)
    assert exact_match(["a  b", "c"], ["a b", "d"]) == 0.5  # whitespace runs split as sacrebleu splits them


def test_a_mix_of_strings_and_token_lists_or_one_bare_string_is_refused():
    for metric in (corpus_bleu, exact_match, token_accuracy):
        with pytest.raises(TypeError, match="same way"):
            metric(HYPS, [r.split() for r in REFS])
        with pytest.raises(TypeError, match="one string"):
            metric(HYPS[0], REFS[0])
