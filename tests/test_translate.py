"""The toy translation task, the seq2seq model, and the translation demo's promises."""
import re
import runpy
from pathlib import Path

import numpy as np
import pytest

import tinyattn as ta
from tinyattn.data import EOS, PAD, TOKEN_IDS, ToyTranslation, translate_words
from tinyattn.models import Seq2Seq

DEMO = Path(__file__).resolve().parents[1] / "demos" / "translate.py"


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


def test_a_short_training_run_translates_most_sentences_exactly(tmp_path):
    demo = runpy.run_path(str(DEMO))
    overall = demo["main"](["--steps", "150", "--no-baseline", "--test-sentences", "200", "--out-dir", str(tmp_path)])
    assert overall["additive attention"] >= 0.9
    assert (tmp_path / "attention.png").stat().st_size > 5000
    assert (tmp_path / "accuracy_by_length.png").stat().st_size > 5000


def test_resuming_after_an_interruption_continues_exactly(tmp_path):
    demo = runpy.run_path(str(DEMO))

    def fresh():
        ta.manual_seed(0)
        data = ToyTranslation(max_phrases=2, seed=0)
        return Seq2Seq(len(data.source_vocab), len(data.target_vocab), **TOKEN_IDS, embed_dim=8, hidden_size=8), data

    model, data = fresh()
    demo["train"]("straight", model, data, 12, 8, str(tmp_path), checkpoint_every=6)
    straight = model.state_dict()

    model, data = fresh()
    demo["train"]("resumed", model, data, 6, 8, str(tmp_path), checkpoint_every=6)  # "crash" after 6
    ta.manual_seed(99)  # a new process: another random state, until the checkpoint restores it
    model, data = fresh()
    demo["train"]("resumed", model, data, 12, 8, str(tmp_path), resume=True, checkpoint_every=6)
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(value, straight[key], err_msg=key)


def test_ctrl_c_during_training_says_where_the_checkpoint_is(tmp_path):
    demo = runpy.run_path(str(DEMO))
    ta.manual_seed(0)
    data = ToyTranslation(max_phrases=2, seed=0)
    model = Seq2Seq(len(data.source_vocab), len(data.target_vocab), **TOKEN_IDS, embed_dim=8, hidden_size=8)
    real_loss, calls = model.loss, []

    def loss_then_interrupt(*args):
        calls.append(1)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real_loss(*args)

    model.loss = loss_then_interrupt
    try:
        demo["train"]("run", model, data, 10, 4, str(tmp_path), checkpoint_every=2)
    except SystemExit as stop:
        message = str(stop)
    assert "interrupted; the checkpoint of step 4" in message and "--resume" in message
    assert ta.load(tmp_path / "run.ckpt.npz")["step"] == 4


@pytest.mark.parametrize("score", ["dot", "scaled_dot", "cosine", "general", "additive", None])
def test_seq2seq_runs_with_every_score_and_python_list_lengths(score):
    ta.manual_seed(0)
    data = ToyTranslation(max_phrases=2, seed=1)
    model = Seq2Seq(len(data.source_vocab), len(data.target_vocab), **TOKEN_IDS, embed_dim=6, hidden_size=5, attention=score)
    source, lengths, target = data.batch(3)
    loss = model.loss(source, list(lengths), target)
    loss.backward()
    assert np.isfinite(loss.item()) and all(p.grad is not None for p in model.parameters())
    with ta.no_grad():
        tokens, weights = model.translate(source, list(lengths), max_len=4)
    assert tokens.shape == (3, 4) and (weights is None) == (score is None)


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


def test_attention_picture_labels_every_decoder_step(tmp_path):
    """An undertrained model may never write </s>, or write <s> mid-sentence: rows are steps."""
    demo = runpy.run_path(str(DEMO))
    data = ToyTranslation(max_phrases=2, seed=0)

    class Stub:
        def translate(self, source, lengths):
            return np.array([[5, 1, 6, 7]]), np.full((1, 4, source.shape[1]), 0.25)

    words = ["big", "cat"]
    assert demo["show_attention"](Stub(), data, words, str(tmp_path / "a.png")) == data.target_vocab.decode([5, 1, 6, 7])
    assert (tmp_path / "a.png").exists()
