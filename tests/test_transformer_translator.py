"""The Transformer translator's recipe: rotary cross-attention against a hand-written reference,
its gradients, the key/value cache against recomputing the prefix, WarmupCosine, and a short
training run that must translate."""
import io
import math

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
from tinyattn.data import TOKEN_IDS, Reordering
from tinyattn.models import TransformerSeq2Seq


def turned(x, positions, base=10000.0):
    """x (B, T, d) with row t turned by positions[t]: features (2i, 2i+1) as the complex number
    x_2i + i x_2i+1, times exp(i p base^(-2i/d)) (RoPE in the paper's complex form)."""
    d = x.shape[-1]
    z = x[..., 0::2] + 1j * x[..., 1::2]
    z = z * np.exp(1j * np.asarray(positions)[:, None] * base ** (-np.arange(0, d, 2) / d))
    return np.stack([z.real, z.imag], -1).reshape(x.shape)


def cross_oracle(mha, y, memory, padding):
    """Cross-attention in numpy: query t (target position t) turned by t, key s (source position s) by s."""
    W, b, E, H = mha.in_proj_weight.data, mha.in_proj_bias.data, mha.embed_dim, mha.num_heads
    d = E // H
    Q, K, V = (x @ W[i * E:(i + 1) * E].T + b[i * E:(i + 1) * E] for i, x in enumerate((y, memory, memory)))
    heads = []
    for h in range(H):
        q = turned(Q[..., h * d:(h + 1) * d], np.arange(y.shape[1]))
        k = turned(K[..., h * d:(h + 1) * d], np.arange(memory.shape[1]))
        scores = np.where(padding[:, None, :], -np.inf, q @ k.swapaxes(1, 2) / math.sqrt(d))
        w = np.exp(scores - scores.max(-1, keepdims=True))
        heads.append(w / w.sum(-1, keepdims=True) @ V[..., h * d:(h + 1) * d])
    return np.concatenate(heads, -1) @ mha.out_proj.weight.data.T + mha.out_proj.bias.data


def test_rotary_cross_attention_is_the_hand_written_reference(rng):
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True, positions="rope",
                                       cross_positions="rope").double()
    mha = layer.multihead_attn
    assert mha.positions == "rope"
    assert nn.TransformerDecoderLayer(8, 2, 16, batch_first=True).multihead_attn.positions is None  # not by default
    mha.in_proj_bias.data = rng.standard_normal(24) * 0.3
    y, memory = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 6, 8))  # 3 target words, 6 source words
    padding = np.array([[False] * 6, [False] * 4 + [True] * 2])
    out, _ = mha(ta.tensor(y), ta.tensor(memory), ta.tensor(memory), key_padding_mask=padding)
    np.testing.assert_allclose(out.data, cross_oracle(mha, y, memory, padding), atol=1e-12)
    plain = nn.MultiheadAttention(8, 2, batch_first=True).double()
    plain.load_state_dict(mha.state_dict())  # no rotary: a different answer, so the test above can fail
    assert np.abs(plain(ta.tensor(y), ta.tensor(memory), ta.tensor(memory), key_padding_mask=padding)[0].data
                  - out.data).max() > 1e-3


def test_decoder_layer_with_rotary_cross_attention_gradchecks_in_float64(rng):
    layer = nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0, batch_first=True, norm_first=True, positions="rope",
                                       cross_positions="rope").double()
    y = ta.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    memory = ta.tensor(rng.standard_normal((2, 4, 4)), requires_grad=True)
    padding = np.array([[False, False, False, True], [False] * 4])
    causal = nn.Transformer.generate_square_subsequent_mask(3, dtype=np.float64)
    assert ta.gradcheck(lambda y, m, *p: layer(y, m, tgt_mask=causal, memory_key_padding_mask=padding),
                        (y, memory, *layer.multihead_attn.parameters()))


def _model(positions="rope", norm_first=True):
    ta.manual_seed(3)
    model = TransformerSeq2Seq(30, 31, **TOKEN_IDS, d_model=16, nhead=2, dim_feedforward=32, positions=positions,
                               norm_first=norm_first).double()
    for p in model.parameters():  # larger weights than the initial ones: decisions that differ if a step is wrong
        p.data = p.data * 2.0
    return model.eval()


@pytest.mark.parametrize("positions,norm_first", [("rope", True), ("rope_self", True), ("sinusoidal", True),
                                                  ("rope", False)])
def test_cached_decoding_writes_what_recomputing_the_prefix_writes(rng, positions, norm_first):
    model = _model(positions, norm_first)
    source = rng.integers(3, 30, (5, 7))
    lengths = np.array([7, 5, 3, 6, 7])
    for beam in (1, 3):
        model.use_cache = True
        cached = model.decode(source, lengths, beam_size=beam, max_len=9)
        model.use_cache = False
        plain = model.decode(source, lengths, beam_size=beam, max_len=9)
        assert [h.tokens for h in cached] == [h.tokens for h in plain]
        np.testing.assert_allclose([h.score for h in cached], [h.score for h in plain], rtol=1e-10)
        for a, b in zip(cached, plain):
            np.testing.assert_allclose(a.attention, b.attention, atol=1e-12)
    assert len({tuple(h.tokens) for h in plain}) > 2  # varied outputs, not one token repeated by both


def test_the_cache_holds_one_key_per_written_word_and_the_memory_is_projected_once(rng):
    model = _model()
    memory, state = model.begin(rng.integers(3, 30, (2, 5)), np.array([5, 4]))
    layers = model.transformer.decoder.layers
    assert state["cache"].length == 0 and state["cache"].entry(layers[0].self_attn) is None
    for t in range(3):
        _, state, weights = model.advance(np.array([1, 7]), memory, state)
        cross = state["cache"].entry(layers[1].multihead_attn)[0]
        assert t == 0 or cross is first_cross  # the memory's keys: made at the first word, then kept
        first_cross = cross
    assert state["cache"].length == 3 and state["cache"].entry(layers[1].self_attn)[0].shape == (2, 2, 3, 8)
    assert cross.shape == (2, 2, 5, 8) and weights.shape == (2, 5) and weights[1, 4] == 0  # padding


def test_positions_must_be_one_the_translator_knows():
    with pytest.raises(ValueError, match="positions must be one of rope, rope_self, sinusoidal"):
        TransformerSeq2Seq(10, 10, **TOKEN_IDS, positions="alibi")


def test_warmup_cosine_rises_then_falls_to_zero():
    opt = ta.optim.Adam([nn.Parameter(np.zeros(1))], lr=3e-3)
    schedule = ta.optim.WarmupCosine(opt, warmup_steps=4, total_steps=12)
    rates = [opt.param_groups[0]["lr"]]
    for _ in range(12):
        schedule.step()
        rates.append(opt.param_groups[0]["lr"])
    np.testing.assert_allclose(rates[:5], [0.75e-3, 1.5e-3, 2.25e-3, 3e-3, 3e-3])
    np.testing.assert_allclose(rates[8], 1.5e-3)  # half way through the decay: half the rate
    assert rates[12] == 0 and all(a >= b for a, b in zip(rates[4:], rates[5:]))
    again = ta.optim.WarmupCosine(ta.optim.Adam([nn.Parameter(np.zeros(1))], lr=3e-3), 4, 12)
    again.load_state_dict(schedule.state_dict())
    assert again.optimizer.param_groups[0]["lr"] == rates[12]
    with pytest.raises(ValueError, match="warmup_steps < total_steps"):
        ta.optim.WarmupCosine(opt, 12, 12)


def test_the_recipe_learns_short_sentences_in_a_few_seconds():
    """Rotary everywhere, label smoothing, warmup + cosine: 5-8-word sentences, 200 steps of 16
    (after 120 no test sentence is right yet, after 160 every one)."""
    data = Reordering(min_length=5, max_length=8, seed=0)
    ta.manual_seed(0)
    model = TransformerSeq2Seq(len(data.source_vocab), len(data.target_vocab), **TOKEN_IDS, d_model=32,
                               dim_feedforward=64)
    opt = ta.optim.Adam(model.parameters(), lr=1e-2)
    ta.train.fit(model, opt, lambda step: model.loss(*data.batch(16)), 200,
                 scheduler=ta.optim.WarmupCosine(opt, 20, 200), clip_grad_norm=1.0, stream=io.StringIO())
    test = [Reordering(min_length=5, max_length=8, seed=99).sentence() for _ in range(64)]
    source, lengths, _ = data.encode_pairs([(w, t) for w, t, _ in test])
    written = [data.target_vocab.decode(h.tokens) for h in model.eval().decode(source, lengths)]
    assert ta.metrics.exact_match(written, [t for _, t, _ in test]) >= 0.9


def test_cached_decoding_past_the_sinusoidal_table_names_the_fix(rng):
    model = TransformerSeq2Seq(30, 31, **TOKEN_IDS, d_model=8, nhead=2, dim_feedforward=8, positions="sinusoidal",
                               max_len=4).eval()
    model.out.bias.data[TOKEN_IDS["eos_id"]] = -1e3  # never ends: it must write past position 3
    with pytest.raises(ta.ShapeError, match="position 4 is past the table's 4 positions"):
        model.decode(rng.integers(3, 30, (1, 3)), np.array([3]), max_len=6)
