"""MultiheadAttention and the Transformer layers: gradchecks, masks, dropout, stored weights, errors.

(Equality with PyTorch is in test_transformer_parity.py.)
"""
import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F


def _t(rng, *shape):
    return ta.tensor(rng.standard_normal(shape), requires_grad=True)


def _vary(module, rng):
    """Random biases and norm scales (they start at 0 and 1), so their gradients are not special."""
    for name, p in module.named_parameters():
        if "bias" in name or "norm" in name:
            p.data = p.data + rng.standard_normal(p.shape) * 0.3
    return module


def test_encoder_layer_gradchecks_in_float64(rng):
    layer = _vary(nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, activation="gelu",
                                             batch_first=True).double(), rng)
    src = _t(rng, 2, 3, 4)
    padding = np.array([[False, False, True], [False, False, False]])
    added = rng.standard_normal((3, 3))
    assert ta.gradcheck(lambda src, *p: layer(src, src_mask=added, src_key_padding_mask=padding),
                        (src, *layer.parameters()))


def test_decoder_layer_gradchecks_in_float64(rng):
    layer = _vary(nn.TransformerDecoderLayer(4, 2, dim_feedforward=5, dropout=0.0, norm_first=True,
                                             batch_first=True).double(), rng)
    tgt, memory = _t(rng, 2, 3, 4), _t(rng, 2, 2, 4)
    # relu: random inputs put no pre-activation within eps of its kink (gradcheck would say so)
    assert ta.gradcheck(lambda tgt, memory, *p: layer(tgt, memory, tgt_is_causal=True,
                                                      memory_key_padding_mask=np.array([[False, True], [False, False]])),
                        (tgt, memory, *layer.parameters()))


def test_multihead_attention_with_a_trained_float_mask_gradchecks(rng):
    mha = _vary(nn.MultiheadAttention(4, 2, kdim=3, vdim=5, batch_first=True).double(), rng)
    q, k, v = _t(rng, 2, 3, 4), _t(rng, 2, 2, 3), _t(rng, 2, 2, 5)
    position_bias = _t(rng, 3, 2)  # a learned additive bias on the scores, e.g. relative positions
    assert ta.gradcheck(lambda q, k, v, b, *p: mha(q, k, v, attn_mask=b, average_attn_weights=False),
                        (q, k, v, position_bias, *mha.parameters()))


def test_pytorch_polarity_bool_masks_hide_what_is_true(rng):
    mha = nn.MultiheadAttention(4, 2, batch_first=True)
    x = ta.tensor(rng.standard_normal((2, 3, 4)).astype(np.float32))
    padding = np.array([[False, False, True], [False, False, False]])
    _, weights = mha(x, x, x, key_padding_mask=padding, is_causal=True, average_attn_weights=False)
    assert weights.shape == (2, 2, 3, 3)
    assert not weights.data[0, :, :, 2].any()                   # padded key of sequence 0
    assert not weights.data[:, :, 0, 1:].any()                  # causal: query 0 sees key 0 only
    np.testing.assert_allclose(weights.data.sum(-1), 1, rtol=1e-6)
    # the same hidden places through a bool attn_mask (True = not allowed) and a float one (-inf)
    hide = ~nn.causal_mask(3)
    _, by_bool = mha(x, x, x, attn_mask=hide)
    _, by_float = mha(x, x, x, attn_mask=np.where(hide, -np.inf, 0.0).astype(np.float32))
    _, by_flag = mha(x, x, x, is_causal=True)
    np.testing.assert_allclose(by_bool.data, by_float.data, rtol=1e-6)
    np.testing.assert_allclose(by_bool.data, by_flag.data, rtol=1e-6)


def test_a_query_with_nothing_to_attend_gives_zeros_not_nan(rng):
    mha = nn.MultiheadAttention(4, 2, batch_first=True).double()
    q, kv = _t(rng, 1, 2, 4), _t(rng, 1, 3, 4)
    hide = np.array([[True, True, True], [False, True, False]])  # query 0 may attend nowhere
    out, weights = mha(q, kv, kv, attn_mask=hide)
    assert not np.isnan(out.data).any() and not weights.data[0, 0].any()
    np.testing.assert_allclose(out.data[0, 0], mha.out_proj.bias.data)  # zero heads, then W_o 0 + b_o
    out.sum().backward()
    assert np.isfinite(q.grad).all() and not q.grad[0, 0].any()
    assert ta.gradcheck(lambda q, kv: mha(q, kv, kv, attn_mask=hide), (q, kv))  # the other gradients right too


def test_dropout_acts_on_the_weights_in_training_only(rng):
    mha = nn.MultiheadAttention(8, 2, dropout=0.5, batch_first=True)
    x = ta.tensor(rng.standard_normal((4, 6, 8)).astype(np.float32))
    ta.manual_seed(3)
    _, dropped = mha(x, x, x, average_attn_weights=False)
    zeros = (dropped.data == 0).mean()
    assert 0.35 < zeros < 0.65  # about half the weights are dropped ...
    kept = dropped.data[dropped.data != 0]
    mha.eval()
    _, weights = mha(x, x, x, average_attn_weights=False)
    np.testing.assert_allclose(kept, 2 * weights.data[dropped.data != 0], rtol=1e-5)  # ... the rest doubled
    ta.manual_seed(3)
    mha.train()
    _, again = mha(x, x, x, average_attn_weights=False)
    np.testing.assert_array_equal(again.data, dropped.data)  # ta.manual_seed makes it repeat


def test_fused_attention_with_bias_and_dropout_equals_the_composed_reference(rng):
    q, k, v = rng.standard_normal((2, 2, 3, 4)), rng.standard_normal((2, 2, 5, 4)), rng.standard_normal((2, 2, 5, 3))
    bias = rng.standard_normal((3, 5))
    bias[1, 2] = -np.inf
    ups = rng.standard_normal((2, 2, 3, 3)), rng.standard_normal((2, 2, 3, 5))
    results = []
    for fn in (F.scaled_dot_product_attention, F.scaled_dot_product_attention_reference):
        tensors = [ta.tensor(a, requires_grad=True) for a in (q, k, v)]
        ta.manual_seed(5)
        out, weights = fn(*tensors, mask=nn.padding_mask([5, 4], 5), bias=bias, dropout_p=0.3)
        ta.backward([out, weights], list(ups))
        results.append([out.data, weights.data] + [t.grad for t in tensors])
    for fused, reference in zip(*results):
        np.testing.assert_allclose(fused, reference, rtol=0, atol=1e-12)


def test_keep_attention_weights_stores_every_layers_heads(rng):
    model = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True),
                                  num_layers=2)
    x = ta.tensor(rng.standard_normal((3, 5, 8)).astype(np.float32))
    model(x)
    assert model.layers[0].self_attn.last_weights is None  # off unless asked
    attn = nn.keep_attention_weights(model)
    assert list(attn) == ["layers.0.self_attn", "layers.1.self_attn"]
    model(x, src_key_padding_mask=np.array([[False] * 5, [False] * 3 + [True] * 2, [False] * 5]))
    for module in attn.values():
        w = module.last_weights
        assert isinstance(w, np.ndarray) and w.shape == (3, 2, 5, 5)
        np.testing.assert_allclose(w.sum(-1), 1, rtol=1e-5)
        assert not w[1, :, :, 3:].any()
    nn.keep_attention_weights(model, on=False)
    assert all(m.last_weights is None and not m.keep_weights for m in attn.values())
    with pytest.raises(ValueError, match="no MultiheadAttention inside Linear"):
        nn.keep_attention_weights(nn.Linear(2, 2))


def test_stacks_hold_independent_copies_and_pytorchs_names():
    layer = nn.TransformerDecoderLayer(4, 2, dim_feedforward=6, batch_first=True)
    stack = nn.TransformerDecoder(layer, num_layers=2, norm=nn.LayerNorm(4))
    names = set(stack.state_dict())
    assert {"layers.0.self_attn.in_proj_weight", "layers.1.multihead_attn.out_proj.bias", "layers.1.norm3.weight",
            "layers.0.linear2.weight", "norm.bias"} <= names
    first, second = stack.layers[0].linear1.weight, stack.layers[1].linear1.weight
    assert first is not second and first is not layer.linear1.weight
    first.data[:] = 0
    assert second.data.any() and layer.linear1.weight.data.any()


def test_initialisation_follows_pytorch():
    ta.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4, kdim=8, batch_first=True)
    bound = np.sqrt(6 / (16 + 16))  # xavier uniform, fan_in + fan_out of (E, E)
    assert np.abs(mha.q_proj_weight.data).max() <= bound and np.abs(mha.q_proj_weight.data).max() > 0.9 * bound
    assert np.abs(mha.k_proj_weight.data).max() <= np.sqrt(6 / (16 + 8))
    assert not mha.in_proj_bias.data.any() and not mha.out_proj.bias.data.any()
    assert nn.MultiheadAttention(16, 4).in_proj_weight.shape == (48, 16)
    assert nn.MultiheadAttention(16, 4, bias=False).out_proj.bias is None
    assert "norm1.bias" not in nn.TransformerEncoderLayer(4, 2, bias=False).state_dict()


def test_errors_name_the_shapes_and_the_fix(rng):
    with pytest.raises(ValueError, match="positive multiple of num_heads 3"):
        nn.MultiheadAttention(4, 3)
    with pytest.raises(ValueError, match="activation should be 'relu', 'gelu' or a callable, not 'tanh'"):
        nn.TransformerDecoderLayer(4, 2, activation="tanh")
    mha = nn.MultiheadAttention(4, 2, batch_first=True).double()
    q, kv = _t(rng, 2, 3, 4), _t(rng, 2, 5, 4)
    with pytest.raises(ta.ShapeError, match=r"attn_mask \(5, 3\), expected \(Tq, Tk\) = \(3, 5\) or .* = \(4, 3, 5\)"):
        mha(q, kv, kv, attn_mask=np.zeros((5, 3), bool))
    with pytest.raises(ta.ShapeError, match=r"key_padding_mask \(2, 1, 5\), expected \(batch, keys\) = \(2, 5\)"):
        mha(q, kv, kv, key_padding_mask=nn.padding_mask([5, 3], 5))
    with pytest.raises(ta.ShapeError, match="is_causal needs as many queries as keys"):
        mha(q, kv, kv, is_causal=True)
    with pytest.raises(TypeError, match="bool .* or float .*, got int64"):
        mha(q, kv, kv, attn_mask=np.zeros((3, 5), np.int64))
    with pytest.raises(ta.ShapeError, match=r"key \(2, 5, 3\), expected \(batch, time, 4\)"):
        mha(q, _t(rng, 2, 5, 3), kv)


def test_a_tinyattn_state_dict_loads_into_pytorch_and_gives_the_same_output(rng):
    torch = pytest.importorskip("torch")
    ours = _vary(nn.TransformerEncoderLayer(8, 2, dim_feedforward=12, dropout=0.0, norm_first=True,
                                            activation="gelu", batch_first=True).double(), rng)
    theirs = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=12, dropout=0.0, norm_first=True,
                                              activation="gelu", batch_first=True).double()
    theirs.load_state_dict({k: torch.tensor(v) for k, v in ours.state_dict().items()}, strict=True)
    x = rng.standard_normal((2, 4, 8))
    padding = np.array([[False, False, False, True], [False] * 4])
    expected = theirs(torch.tensor(x), src_key_padding_mask=torch.tensor(padding)).detach().numpy()
    np.testing.assert_allclose(ours(ta.tensor(x), src_key_padding_mask=padding).data, expected, rtol=1e-10, atol=1e-12)
