"""The hard language pair: grammar, gold alignments, lengths, disjoint splits."""
import numpy as np
import pytest

from tinyattn.data.reordering import LEXICON, VERBS, Reordering, ReorderingSplits, translate


def test_the_docstring_example():
    target, gold = translate("the big dog that sees a cat likes the fish".split())
    assert target == "aru neko miru no sono inu okii sono sakana suki".split()
    assert gold == [5, 6, 4, 3, 0, 2, 1, 8, 9, 7]


def test_nested_relative_clauses_and_coordination():
    words = "a dog that helps the cat that sees a bird calls the king and the boy finds a fish".split()
    target, gold = translate(words)
    # the innermost relative clause comes first; each verb after its object; "and" between clauses
    assert [words[p] for p in gold] == ("a bird sees that the cat helps that a dog the king calls "
                                        "and the boy a fish finds").split()
    with pytest.raises(ValueError, match="not a sentence"):
        translate("the dog the cat".split())


def test_alignment_is_a_permutation_and_the_lexicon_one_to_one():
    assert len(set(LEXICON.values())) == len(LEXICON)
    data = Reordering(seed=3)
    lengths = []
    for _ in range(300):
        words, target, gold = data.sentence()
        lengths.append(len(words))
        assert sorted(gold) == list(range(len(words)))
        assert target == [LEXICON[words[p]] for p in gold]
        verbs = {LEXICON[v] for v in VERBS}
        assert target[-1] in verbs and all(target[j - 1] in verbs for j, w in enumerate(target) if w == "soshite")
    assert min(lengths) <= 8 and max(lengths) >= 47  # lengths spread over 5-50
    assert 5 <= min(lengths) and max(lengths) <= 50


def test_dev_test_and_training_sentences_are_disjoint():
    splits = ReorderingSplits(per_length=3, dev_per_length=2, seed=0)
    test = {tuple(s) for s, _, _ in splits.test}
    dev = {tuple(s) for s, _, _ in splits.dev}
    assert len(test) == len(splits.test) and len(dev) == len(splits.dev) and not test & dev
    assert {len(s) for s in test} == set(range(5, 51))
    # short sentences repeat often: the stream must skip the held-out ones
    train = [tuple(splits.train.sentence(length=5)[0]) for _ in range(3000)]
    assert not set(train) & (test | dev)
    source, lengths, target = splits.train.batch(4)
    assert source.shape[0] == 4 and (target[:, 0] == 1).all()
    assert np.array_equal(lengths, (source != 0).sum(1))
