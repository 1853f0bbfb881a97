"""Luong's and the Transformer's translators: gradients in float64, training equals decoding, beams.

(Bahdanau's decoder and the one without attention: tests/test_translate.py, test_attentive_decoder.py.)
"""
import numpy as np
import pytest

import tinyattn as ta
from tinyattn.data import EOS, TOKEN_IDS, ToyTranslation
from tinyattn.models import LuongSeq2Seq, TransformerSeq2Seq
from tinyattn.models.decoding import beam_search, greedy

TINY = {
    "luong dot": lambda V, W: LuongSeq2Seq(V, W, **TOKEN_IDS, embed_dim=3, hidden_size=2, score="dot"),
    "luong general": lambda V, W: LuongSeq2Seq(V, W, **TOKEN_IDS, embed_dim=3, hidden_size=2, score="general"),
    "luong concat": lambda V, W: LuongSeq2Seq(V, W, **TOKEN_IDS, embed_dim=3, hidden_size=2, score="concat"),
    "transformer": lambda V, W: TransformerSeq2Seq(V, W, **TOKEN_IDS, d_model=4, nhead=2, num_encoder_layers=1,
                                                   num_decoder_layers=1, dim_feedforward=6,
                                                   label_smoothing=0.0),  # the loss below is plain cross-entropy
}


def _tiny(name, sentences=2, seed=1):
    ta.manual_seed(0)
    data = ToyTranslation(max_phrases=2, seed=seed)
    model = TINY[name](len(data.source_vocab), len(data.target_vocab)).double()
    return model, data.batch(sentences)


@pytest.mark.parametrize("name", list(TINY))
def test_the_whole_loss_gradchecks(name):
    model, (source, lengths, target) = _tiny(name)
    assert len(set(lengths)) > 1  # padding on the source side is in the graph
    assert ta.gradcheck(lambda *p: model.loss(source, lengths, target), tuple(model.parameters()), max_elements=12)


@pytest.mark.parametrize("name", list(TINY))
def test_training_logits_equal_step_by_step_decoding(name):
    """The teacher-forced loss reads the logits that advance() gives one step at a time."""
    model, (source, lengths, target) = _tiny(name, sentences=4, seed=2)
    with ta.no_grad():
        memory, state = model.begin(source, lengths)
        steps = []
        for t in range(target.shape[1] - 1):
            logits, state, weights = model.advance(target[:, t], memory, state)
            steps.append(logits.data)
            assert weights.shape == source.shape
            np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)
        steps = np.stack(steps, axis=1)
        log_p = steps - np.log(np.exp(steps).sum(-1, keepdims=True))
        picked = np.take_along_axis(log_p, target[:, 1:, None], axis=2)[..., 0]
        scored = target[:, 1:] != TOKEN_IDS["pad_id"]
        want = -picked[scored].mean()
        assert model.loss(source, lengths, target).item() == pytest.approx(want, rel=1e-12)
    if name == "transformer":  # all positions at once, as training runs them, against one at a time
        with ta.no_grad():
            together = model.decode_prefix(target[:, :-1], *memory[:2]).data  # (memory, padding)
        np.testing.assert_allclose(together, steps, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["luong general", "transformer"])
def test_beam_of_one_is_greedy_and_wider_beams_score_no_lower(name):
    model, (source, lengths, _) = _tiny(name, sentences=5, seed=3)
    a = greedy(model, source, lengths, EOS, max_len=6)
    b = beam_search(model, source, lengths, EOS, 1, max_len=6)
    c = beam_search(model, source, lengths, EOS, 3, max_len=6)
    for g, h, w in zip(a, b, c):
        assert g.tokens == h.tokens and g.score == pytest.approx(h.score, abs=1e-12)
        assert w.score >= g.score - 1e-12
