"""ALiBi and RoPE (nn/positions.py): the math against hand-written numpy, gradchecks, and the
positions= option of MultiheadAttention, the Transformer layers and SequenceClassifier."""
import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
from tinyattn.models import SequenceClassifier
from tinyattn.nn.positions import alibi_bias, alibi_slopes, rotary


def _t(rng, *shape):
    return ta.tensor(rng.standard_normal(shape), requires_grad=True)


def rotation_matrix(p, d, base=10000.0):
    """(d, d): block diagonal, block i the 2x2 rotation by p * base^(-2i/d), written out by hand."""
    R = np.zeros((d, d))
    for i in range(d // 2):
        a = p * base ** (-2 * i / d)
        R[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]
    return R


def test_alibi_slopes_are_the_papers():
    np.testing.assert_allclose(alibi_slopes(8), [2.0 ** -k for k in range(1, 9)])
    np.testing.assert_allclose(alibi_slopes(2), [2.0 ** -4, 2.0 ** -8])
    # 6 heads: the 4 slopes of 4 heads, then every other slope of 8 heads (2^-1, 2^-3)
    np.testing.assert_allclose(alibi_slopes(6), [2.0 ** -2, 2.0 ** -4, 2.0 ** -6, 2.0 ** -8, 2.0 ** -1, 2.0 ** -3])


def test_alibi_bias_matches_a_hand_computed_case():
    distance = np.array([[0, 1, 2, 3], [1, 0, 1, 2], [2, 1, 0, 1]])  # 3 queries, 4 keys: |i - j|
    expected = np.stack([-distance / 16, -distance / 256])          # slopes 2^-4, 2^-8 for 2 heads
    np.testing.assert_allclose(alibi_bias(2, 3, 4), expected)
    with pytest.raises(ValueError, match="num_heads"):
        alibi_bias(0, 3, 3)


def test_rotary_is_the_block_rotation_of_the_paper(rng):
    x = rng.standard_normal((2, 5, 6))
    positions = np.array([0, 3, 1, 7, 2])
    y = rotary(ta.tensor(x), positions).data
    for t, p in enumerate(positions):
        np.testing.assert_allclose(y[:, t], x[:, t] @ rotation_matrix(p, 6).T, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1))  # a turn keeps lengths
    # heads side by side: each head of 4 features turned as that head alone
    both = rotary(ta.tensor(np.concatenate([x[..., :4], x[..., :4]], -1)), head_dim=4).data
    one = rotary(ta.tensor(x[..., :4])).data
    np.testing.assert_allclose(both[..., :4], one)
    np.testing.assert_allclose(both[..., 4:], one)


def test_rotary_scores_depend_only_on_the_distance(rng):
    q, k = ta.tensor(rng.standard_normal((1, 1, 8))), ta.tensor(rng.standard_normal((1, 1, 8)))

    def score(m, n):
        return float((rotary(q, [m]) * rotary(k, [n])).sum().item())

    for m, n in ((0, 3), (5, 2), (4, 4)):
        for shift in (1, 17, 250):
            assert score(m + shift, n + shift) == pytest.approx(score(m, n), abs=1e-12)
    assert abs(score(0, 1) - score(0, 2)) > 1e-3  # ... and does depend on it (in order too)
    assert abs(score(0, 3) - score(3, 0)) > 1e-3


def test_rotary_gradchecks_in_float64(rng):
    x = _t(rng, 2, 2, 3, 4)
    assert ta.gradcheck(lambda x: rotary(x), (x,))
    y = _t(rng, 2, 3, 6)
    assert ta.gradcheck(lambda y: rotary(y, positions=[2, 0, 9], base=100, head_dim=2), (y,))
    with pytest.raises(ta.ShapeError, match="even"):
        rotary(ta.tensor(rng.standard_normal((1, 3, 5))))
    with pytest.raises(ta.ShapeError, match="positions"):
        rotary(x, positions=[0, 1])


def mha_oracle(mha, x, positions=None, key_padding=None):
    """MultiheadAttention(x, x, x)'s output in plain numpy, from its weights and the papers' equations."""
    W, b = mha.in_proj_weight.data, mha.in_proj_bias.data
    E, H = mha.embed_dim, mha.num_heads
    d, T = E // H, x.shape[1]
    Q, K, V = (x @ W[i * E:(i + 1) * E].T + b[i * E:(i + 1) * E] for i in range(3))
    heads = []
    for h in range(H):
        q, k, v = (M[..., h * d:(h + 1) * d] for M in (Q, K, V))
        if positions == "rope":
            q = np.stack([q[:, t] @ rotation_matrix(t, d).T for t in range(T)], 1)
            k = np.stack([k[:, t] @ rotation_matrix(t, d).T for t in range(T)], 1)
        scores = q @ k.swapaxes(1, 2) / np.sqrt(d)
        if positions == "alibi":
            scores = scores - alibi_slopes(H)[h] * np.abs(np.arange(T)[:, None] - np.arange(T))
        if key_padding is not None:
            scores = np.where(key_padding[:, None, :], -np.inf, scores)
        w = np.exp(scores - scores.max(-1, keepdims=True))
        heads.append((w / w.sum(-1, keepdims=True)) @ v)
    return np.concatenate(heads, -1) @ mha.out_proj.weight.data.T + mha.out_proj.bias.data


@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("positions", [None, "alibi", "rope"])
def test_multihead_attention_with_positions_is_the_oracle(rng, positions, fused):
    ta.manual_seed(0)
    mha = nn.MultiheadAttention(8, 2, positions=positions, batch_first=True).double()
    mha.out_proj.bias.data = rng.standard_normal(8)
    x = rng.standard_normal((2, 5, 8))
    padding = np.array([[False] * 5, [False] * 3 + [True] * 2])
    with ta.fused(fused):  # the fused attention node and the composed graph alike
        out, _ = mha(ta.tensor(x), ta.tensor(x), ta.tensor(x), key_padding_mask=padding)
    np.testing.assert_allclose(out.data, mha_oracle(mha, x, positions, padding), atol=1e-12)
    if positions is not None:  # the option changes the output (else this test could not fail)
        assert np.abs(out.data - mha_oracle(mha, x, None, padding)).max() > 1e-3


def test_alibi_equals_its_bias_given_as_pytorchs_float_mask(rng):
    mha = nn.MultiheadAttention(6, 3, positions="alibi", batch_first=False).double()
    x = ta.tensor(rng.standard_normal((4, 2, 6)))  # (T, B, E)
    float_mask = np.tile(alibi_bias(3, 4, 4), (2, 1, 1))  # (B * H, T, T), as PyTorch takes it
    plain = nn.MultiheadAttention(6, 3, batch_first=False).double()
    plain.load_state_dict(mha.state_dict())
    np.testing.assert_allclose(mha(x, x, x, is_causal=True)[0].data,
                               plain(x, x, x, attn_mask=float_mask + np.triu(np.full((4, 4), -np.inf), 1))[0].data,
                               atol=1e-12)


@pytest.mark.parametrize("positions", ["alibi", "rope"])
def test_multihead_attention_with_positions_gradchecks_in_float64(rng, positions):
    mha = nn.MultiheadAttention(4, 2, positions=positions, batch_first=True).double()
    for p in (mha.in_proj_bias, mha.out_proj.bias):
        p.data = rng.standard_normal(p.shape) * 0.3
    q, k, v = _t(rng, 2, 3, 4), _t(rng, 2, 4, 4), _t(rng, 2, 4, 4)
    padding = np.array([[False, False, False, True], [False] * 4])
    assert ta.gradcheck(lambda q, k, v, *p: mha(q, k, v, key_padding_mask=padding, average_attn_weights=False),
                        (q, k, v, *mha.parameters()))
    learned_bias = _t(rng, 3, 4)  # a trained float mask on top: its gradient flows past ALiBi's constant
    assert ta.gradcheck(lambda q, b: mha(q, k, v, attn_mask=b)[0], (q, learned_bias))


def test_transformer_layers_pass_positions_to_their_self_attention_only():
    encoder = nn.TransformerEncoderLayer(8, 2, 16, positions="rope", batch_first=True)
    decoder = nn.TransformerDecoderLayer(8, 2, 16, positions="alibi", batch_first=True)
    assert encoder.self_attn.positions == "rope" and decoder.self_attn.positions == "alibi"
    assert decoder.multihead_attn.positions is None
    assert "positions='rope'" in repr(encoder)
    with pytest.raises(ValueError, match="positions must be None, 'alibi' or 'rope'"):
        nn.MultiheadAttention(8, 2, positions="sinusoidal", batch_first=True)


def test_positions_add_no_parameters_so_state_dicts_cross(rng):
    shapes = {}
    for positional in ("sinusoidal", "alibi", "rope", None):
        ta.manual_seed(0)
        model = SequenceClassifier(20, 2, pad_id=0, encoder="transformer", positional=positional)
        shapes[positional] = {name: value.shape for name, value in model.state_dict().items()}
    assert shapes["alibi"] == shapes["rope"] == shapes[None] == shapes["sinusoidal"]
    tokens, lengths = rng.integers(1, 20, (3, 40)), np.array([40, 25, 12])
    rope = SequenceClassifier(20, 2, pad_id=0, encoder="transformer", positional="rope")
    rope.load_state_dict(model.state_dict())
    unordered, ordered = model(tokens, lengths)[0].data, rope(tokens, lengths)[0].data
    assert np.isfinite(ordered).all() and np.abs(ordered - unordered).max() > 1e-4
    with pytest.raises(ValueError, match="positional must be one of"):
        SequenceClassifier(20, 2, pad_id=0, encoder="transformer", positional="learned")


@pytest.mark.parametrize("positional", ["sinusoidal", "alibi", "rope"])
def test_a_causal_classifier_reads_each_word_with_the_words_before_it_only(rng, positional):
    model = SequenceClassifier(20, 2, pad_id=0, encoder="transformer", positional=positional, causal=True)
    tokens = rng.integers(1, 20, (2, 12))
    changed = tokens.copy()
    changed[:, 8:] = rng.integers(1, 20, (2, 4))
    before, after = (model.encode(t, np.array([12, 12]))[0].data for t in (tokens, changed))
    np.testing.assert_allclose(before[:, :8], after[:, :8], atol=1e-6)
    assert np.abs(before[:, 8:] - after[:, 8:]).max() > 1e-3
