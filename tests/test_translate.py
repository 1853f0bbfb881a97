"""The quick translation pair, the Bahdanau / no-attention Seq2Seq (gradients, fused = step by step).

The demo itself: tests/test_translate_demo.py."""
import re

import numpy as np
import pytest

import tinyattn as ta
from tinyattn.data import EOS, PAD, TOKEN_IDS, ToyTranslation, translate_words
from tinyattn.models import Seq2Seq


def test_adjectives_move_behind_their_noun_in_mirror_order():
    assert translate_words("big red cat sees small dog".split()) == "chat rouge grand voit chien petit".split()
    data = ToyTranslation(max_phrases=2, seed=0)
    source, lengths, target = data.batch(5)
    assert source.shape[0] == 5 and (source[np.arange(5), lengths - 1] != PAD).all()
    assert (target[:, 0] == 1).all() and all(EOS in row for row in target)
    words, reference = data.sentence()
    assert data.target_vocab.decode(data.target_vocab.encode(reference) + [EOS, 5]) == reference


def test_the_whole_seq2seq_loss_gradchecks():
    ta.manual_seed(0)
    data = ToyTranslation(max_phrases=2, seed=3)
    model = Seq2Seq(len(data.source_vocab), len(data.target_vocab), **TOKEN_IDS, embed_dim=3, hidden_size=4).double()
    source, lengths, target = data.batch(2)
    params = tuple(model.parameters())
    assert ta.gradcheck(lambda *p: model.loss(source, lengths, target), params, max_elements=30)


def _float64_model(score, phrases, data_seed, size, batch):
    """A small float64 Seq2Seq with the given score, and one batch of its toy data."""
    ta.manual_seed(0)
    data = ToyTranslation(max_phrases=phrases, seed=data_seed)
    model = Seq2Seq(len(data.source_vocab), len(data.target_vocab), **TOKEN_IDS, embed_dim=size, hidden_size=size,
                    attention=score).double()
    return model, data.batch(batch)


@pytest.mark.parametrize("score", ["dot", "scaled_dot", "cosine", "general", "additive", None])
def test_the_whole_loss_gradchecks_with_every_score(score):
    """Each score's whole seq2seq loss (encoder, attention, decoder, cross-entropy) in float64."""
    model, (source, lengths, target) = _float64_model(score, phrases=1, data_seed=1, size=3, batch=2)
    lengths = list(lengths)  # a Python list works as well as an array
    assert ta.gradcheck(lambda *p: model.loss(source, lengths, target), tuple(model.parameters()), max_elements=12)
    with ta.no_grad():
        tokens, weights = model.translate(source, lengths, max_len=4)
    assert tokens.shape[0] == 2 and 1 <= tokens.shape[1] <= 4 and (weights is None) == (score is None)


def test_progress_line_is_bounded_and_readable():
    import io

    from tinyattn.train import Progress

    out = io.StringIO()
    progress = Progress(5, label="run", stream=out, every=1)
    for step in range(1, 8):
        progress.update(step, loss=0.5)
    lines = out.getvalue().splitlines()
    assert len(lines) == 7 and "5/5" in lines[4] and "loss 0.5" in lines[0]
    bars = [re.search(r"\[([#.]*)\]", line).group(1) for line in lines]
    assert all(len(bar) == 24 for bar in bars) and bars[-1] == "#" * 24
    assert "-0s" not in lines[-1]


@pytest.mark.parametrize("score", ["additive", "general", None])
def test_teacher_forced_logits_equal_the_step_by_step_decoder(score):
    """Training (the output layer once over all steps) and translating (step by step) share one decoder."""
    model, (source, lengths, target) = _float64_model(score, phrases=2, data_seed=2, size=6, batch=3)
    with ta.no_grad():
        states, state = model.encoder(source, lengths)
        keys = model.decoder.keys(states)
        mask = ta.nn.padding_mask(lengths, source.shape[1])
        embedded = model.decoder.embedding(target[:, :-1])
        together = model.decoder.teacher_forced_logits(embedded, state, keys, states, mask).data
        steps = []
        for t in range(embedded.shape[1]):
            logits, state, _ = model.decoder.step(embedded[:, t], state, keys, states, mask)
            steps.append(logits.data)
    np.testing.assert_allclose(together, np.stack(steps, axis=1), rtol=0, atol=1e-10)
