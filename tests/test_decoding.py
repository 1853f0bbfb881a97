"""Greedy and beam decoding (tinyattn/models/decoding.py) on every translator."""
import numpy as np
import pytest

import tinyattn as ta
from tinyattn.data import BOS, EOS, PAD, TOKEN_IDS, ToyTranslation
from tinyattn.models import Seq2Seq
from tinyattn.models.decoding import beam_search, greedy, length_penalty


def _model(attention="additive", eos_bias=1.0):
    """A small untrained float64 model whose </s> is likely enough to end sentences at varied lengths."""
    ta.manual_seed(3)
    data = ToyTranslation(max_phrases=3, seed=5)
    model = Seq2Seq(len(data.source_vocab), len(data.target_vocab), **TOKEN_IDS, embed_dim=6, hidden_size=8,
                    attention=attention).double()
    model.decoder.out.weight.data *= 6  # sharper word choices: greedy and beam part ways
    model.decoder.out.bias.data[EOS] += eos_bias
    source, lengths, _ = data.batch(12)
    return model, source, lengths


def _rescore(model, source, lengths, hypothesis, alpha=0.6):
    """The hypothesis' normalised log-probability, recomputed by teacher forcing through model.loss."""
    words = [BOS] + hypothesis.tokens + [EOS] * hypothesis.ended
    with ta.no_grad():
        mean = model.loss(source, lengths, np.array([words])).item()
    return -mean * (len(words) - 1) / length_penalty(len(words) - 1, alpha)


@pytest.mark.parametrize("attention", ["additive", None])
def test_beam_of_one_is_greedy(attention):
    model, source, lengths = _model(attention)
    a, b = greedy(model, source, lengths, EOS, max_len=12), beam_search(model, source, lengths, EOS, 1, max_len=12)
    if attention:
        assert {bool(h.ended) for h in a} == {True, False}  # both endings occur: </s>, and max_len
    for g, h in zip(a, b):
        assert g.tokens == h.tokens and g.ended == h.ended and g.score == pytest.approx(h.score, abs=1e-12)
        if attention:
            np.testing.assert_array_equal(g.attention, h.attention)
            assert g.attention.shape == (len(g.tokens) + g.ended, source.shape[1])


def test_wider_beams_never_score_below_greedy_and_report_true_scores():
    model, source, lengths = _model()
    reference = greedy(model, source, lengths, EOS, max_len=12)
    better = 0
    for k in (2, 4):
        beams = beam_search(model, source, lengths, EOS, k, max_len=12)
        for i, (g, h) in enumerate(zip(reference, beams)):
            assert h.score >= g.score - 1e-12
            better += h.score > g.score + 1e-9
            row = slice(i, i + 1)
            assert h.score == pytest.approx(_rescore(model, source[row], lengths[row], h), abs=1e-9)
    assert better > 0  # the beam found something greedy missed, so the test can tell them apart


def test_translate_pads_after_the_end():
    model, source, lengths = _model()
    with ta.no_grad():
        tokens, weights = model.translate(source, lengths, max_len=12)
    hyps = greedy(model, source, lengths, EOS, max_len=12)
    for row, h in zip(tokens, hyps):
        written = list(row[:len(h.tokens) + h.ended])
        assert written == h.tokens + [EOS] * h.ended and (row[len(written):] == PAD).all()
    assert weights.shape[:2] == tokens.shape


def test_a_limit_or_beam_that_cannot_decode_is_refused_by_name():
    model, source, lengths = _model()
    for kwargs, named in [({"max_len": 0}, "max_len=0"), ({"max_len": -1}, "max_len=-1"),
                          ({"beam_size": 0}, "beam_size=0"), ({"beam_size": -2, "max_len": 5}, "beam_size=-2"),
                          ({"beam_size": 4, "max_len": 0}, "max_len=0"), ({"max_len": 2.5}, "max_len=2.5")]:
        with pytest.raises(ValueError, match=f"{named}; give a whole number of at least 1"):
            model.decode(source, lengths, **kwargs)  # the old tree: 0 decoded 8 words, the others numpy errors
    (one,) = model.decode(source[:1], lengths[:1], beam_size=3, max_len=1)
    assert len(one.tokens) + one.ended == 1 and one.attention.shape[0] == 1
