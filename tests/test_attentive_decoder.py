"""The decoder in one node (nn/fused/attentive_decoder.py) equals the step-by-step graph it replaces."""
import numpy as np
import pytest

import tinyattn as ta
from tinyattn.data import TOKEN_IDS, ToyTranslation
from tinyattn.models import Seq2Seq


def _loss_and_grads(model, batch, fused):
    for p in model.parameters():
        p.grad = None
    with ta.fused(fused):
        loss = model.loss(*batch)
    loss.backward()
    return loss.item(), {name: p.grad.copy() for name, p in model.named_parameters()}


@pytest.mark.parametrize("dtype, tolerance", [(np.float64, 1e-10), (np.float32, 2e-5)])
def test_the_fused_decoder_gives_the_step_by_step_loss_and_gradients(dtype, tolerance):
    ta.manual_seed(0)
    data = ToyTranslation(max_phrases=3, seed=1)
    model = Seq2Seq(len(data.source_vocab), len(data.target_vocab), **TOKEN_IDS, embed_dim=8, hidden_size=6)
    model = model.double() if dtype == np.float64 else model
    batch = data.batch(7)  # sentences of different lengths: the padding mask matters
    assert len(set(batch[1])) > 1 and (batch[2][:, -1] == TOKEN_IDS["pad_id"]).any()  # rows end early on both sides
    fused_loss, fused = _loss_and_grads(model, batch, True)
    steps_loss, steps = _loss_and_grads(model, batch, False)
    assert fused_loss == pytest.approx(steps_loss, rel=tolerance)
    for name in steps:
        scale = max(1.0, np.abs(steps[name]).max())
        np.testing.assert_allclose(fused[name], steps[name], rtol=tolerance, atol=tolerance * scale, err_msg=name)


def test_the_fused_decoder_gradients_check_against_finite_differences():
    ta.manual_seed(1)
    data = ToyTranslation(max_phrases=2, seed=2)
    model = Seq2Seq(len(data.source_vocab), len(data.target_vocab), **TOKEN_IDS, embed_dim=3, hidden_size=4).double()
    source, lengths, target = data.batch(3)
    decoder = model.decoder
    params = [decoder.attention.W.weight, decoder.attention.v.weight, decoder.cell.weight_ih, decoder.cell.weight_hh]
    assert ta.gradcheck(lambda *_: model.loss(source, lengths, target), params)


def test_both_paths_give_equal_logits_on_every_step_padded_ones_included():
    ta.manual_seed(0)
    data = ToyTranslation(max_phrases=3, seed=1)
    model = Seq2Seq(len(data.source_vocab), len(data.target_vocab), **TOKEN_IDS, embed_dim=8, hidden_size=6).double()
    source, lengths, target = data.batch(7)
    decoder = model.decoder
    needed = np.array([(row != TOKEN_IDS["pad_id"]).sum() for row in target[:, 1:]])
    assert needed.min() < target.shape[1] - 1  # some rows have padded steps
    logits = []
    for fused in (True, False):
        with ta.fused(fused), ta.no_grad():
            encoder_states, state = model.encoder(source, lengths)
            mask = ta.nn.padding_mask(lengths, source.shape[1])
            logits.append(decoder.teacher_forced_logits(decoder.embedding(target[:, :-1]), state,
                                                        decoder.keys(encoder_states), encoder_states, mask, needed).data)
    np.testing.assert_allclose(logits[0], logits[1], rtol=1e-10, atol=1e-10)
