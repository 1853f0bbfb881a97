"""Issue 22, "Trust, round 4": re-assigned parameters keep their place, constructors name bad sizes,
masks cannot be misread, F.scaled_dot_product_attention takes PyTorch's shapes, the empty-row warning
points at the caller, constant float masks take the scores' dtype."""
import sys
import warnings

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn.nn.positions import alibi_slopes


# --- re-assigning a parameter or a submodule keeps its place, as PyTorch -------------------------
def test_a_reassigned_parameter_keeps_its_place_in_parameters_and_state_dict():
    layer = nn.Linear(3, 2)
    layer.weight = nn.Parameter(np.zeros((2, 3), np.float32))
    assert [name for name, _ in layer.named_parameters()] == ["weight", "bias"]
    assert list(layer.state_dict()) == ["weight", "bias"]
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    setattr(model, "0", nn.Linear(3, 4))
    assert list(model.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    assert model[0] is getattr(model, "0")  # indexing sees the new module in its old place


def test_a_reassigned_buffer_stays_a_buffer():
    module = nn.Module()
    module.register_buffer("table", np.zeros(3))
    module.table = np.ones(3)
    assert list(module.state_dict()) == ["table"] and (module.state_dict()["table"] == 1).all()


# --- constructors name the layer, the argument and the value -------------------------------------
@pytest.mark.parametrize("make, message", [
    (lambda: nn.Linear(3, -2), "Linear: out_features must be a whole number >= 1, got -2"),
    (lambda: nn.Linear(0, 2), "Linear: in_features must be a whole number >= 1, got 0"),
    (lambda: nn.GRU(3, 0), "GRU: hidden_size must be a whole number >= 1, got 0"),
    (lambda: nn.LSTM(3, -4), "LSTM: hidden_size must be a whole number >= 1, got -4"),
    (lambda: nn.RNNCell(0, 3), "RNNCell: input_size must be a whole number >= 1, got 0"),
    (lambda: alibi_slopes(0), "alibi_slopes: num_heads must be a whole number >= 1, got 0"),
    (lambda: nn.Embedding(5, 0), "Embedding: embedding_dim must be a whole number >= 1, got 0"),
    (lambda: nn.LayerNorm((4, 0)), r"LayerNorm: normalized_shape\[1\] must be a whole number >= 1, got 0"),
    (lambda: nn.MultiheadAttention(8, 2, kdim=0), "MultiheadAttention: kdim must be a whole number >= 1, got 0"),
    (lambda: nn.MultiheadAttention(10, 3), "embed_dim 10 must be a positive multiple of num_heads 3"),
    (lambda: nn.TransformerEncoderLayer(8, 2, dim_feedforward=0), "TransformerEncoderLayer: dim_feedforward must"),
    (lambda: nn.SelfAttention(4, key_dim=0), "SelfAttention: key_dim must be a whole number >= 1, got 0"),
    (lambda: nn.Linear(2.5, 3), "Linear: in_features must be a whole number >= 1, got 2.5"),
])
def test_layer_constructors_name_a_bad_size(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_load_state_dict_of_none_says_what_it_expected():
    with pytest.raises(TypeError, match="load_state_dict into Linear: expected a dict .* got NoneType"):
        nn.Linear(3, 2).load_state_dict(None)


# --- lengths never become a (B, T) mask that attention reads as (queries, keys) ------------------
def test_lengths_mask_has_a_query_axis_so_batch_equal_to_time_is_not_misread():
    """B == T == 3: a (B, T) mask would broadcast as (queries, keys) and hide the wrong keys."""
    lengths = np.array([1, 3, 2])
    mask = nn.lengths_mask(lengths, 3)
    assert mask.shape == (3, 1, 3)
    q = ta.tensor(np.random.default_rng(0).standard_normal((3, 3, 4)))
    _, weights = F.scaled_dot_product_attention(q, q, q, mask=mask)
    for b, n in enumerate(lengths):  # every query of sequence b sees exactly its n real keys
        assert (weights.data[b, :, n:] == 0).all() and (weights.data[b, :, :n] > 0).all()
    mha = nn.MultiheadAttention(4, 2, batch_first=True)
    with pytest.raises(ta.ShapeError, match=r"key_padding_mask \(3, 1, 3\), expected"):
        mha(q.float(), q.float(), q.float(), key_padding_mask=~mask)  # loud, never misread
    pooled, w = nn.AttentionPooling(4, 5).double()(q, mask=mask)  # pooling takes it as well
    assert (w.data[0, 1:] == 0).all()


# --- F.scaled_dot_product_attention takes PyTorch's shapes ---------------------------------------
@pytest.mark.parametrize("shapes, options", [
    (((4, 3), (5, 3), (5, 2)), {}),
    (((4, 3), (5, 3), (5, 2)), {"attn_mask": "bool", "scale": 0.3}),
    (((2, 4, 3), (2, 5, 3), (2, 5, 2)), {"attn_mask": "float"}),
    (((2, 1, 4, 3), (1, 3, 5, 3), (1, 3, 5, 2)), {"attn_mask": "bool"}),
    (((3, 4, 3), (4, 3), (4, 2)), {"is_causal": True, "dropout_p": 0.0}),
])
@pytest.mark.parametrize("fused", [True, False])
def test_sdpa_without_or_with_broadcast_batch_dims_matches_pytorch(shapes, options, fused):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(s) for s in shapes)
    Tq, Tk = shapes[0][-2], shapes[1][-2]
    options = dict(options)
    if options.get("attn_mask") == "bool":  # True = takes part, as torch
        options["attn_mask"] = rng.random((Tq, Tk)) > 0.3
        options["attn_mask"][:, 0] = True
    elif options.get("attn_mask") == "float":
        options["attn_mask"] = rng.standard_normal((Tq, Tk))
    theirs = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    expected = torch.nn.functional.scaled_dot_product_attention(
        *theirs, **{n: torch.tensor(o) if isinstance(o, np.ndarray) else o for n, o in options.items()})
    upstream = rng.standard_normal(tuple(expected.shape))
    expected.backward(torch.tensor(upstream))
    ours = [ta.tensor(a, requires_grad=True) for a in (q, k, v)]
    with ta.fused(fused):
        out, _ = F.scaled_dot_product_attention(*ours, **options)
    out.backward(ta.tensor(upstream))
    np.testing.assert_allclose(out.data, expected.detach().numpy(), rtol=1e-12, atol=1e-14)
    for mine, torchs in zip(ours, theirs):
        np.testing.assert_allclose(mine.grad, torchs.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_sdpa_refuses_batch_dims_that_do_not_broadcast():
    with pytest.raises(ta.ShapeError, match=r"batch dims of q \(2, 4, 3\), k \(3, 5, 3\).* do not broadcast"):
        F.scaled_dot_product_attention(ta.ones(2, 4, 3), ta.ones(3, 5, 3), ta.ones(3, 5, 3))


# --- the empty-row warning points at the caller's line, once per line ----------------------------
def test_the_empty_row_warning_names_each_calling_line_of_the_user(monkeypatch):
    from tinyattn.nn import masks
    monkeypatch.setattr(masks, "_warned_sites", set())
    x = ta.randn(1, 3, 4)
    empty = np.zeros((3, 3), bool)
    mha = nn.MultiheadAttention(4, 2, batch_first=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):  # one line, twice: one warning
            F.scaled_dot_product_attention(x, x, x, mask=empty); first = sys._getframe().f_lineno
        mha(x, x, x, attn_mask=~empty); second = sys._getframe().f_lineno  # a second mistake elsewhere
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, first), (__file__, second)]
    assert "once per line" in str(caught[0].message)


# --- a constant float mask takes the scores' dtype -----------------------------------------------
def test_a_float64_transformer_takes_its_own_float32_subsequent_mask():
    ta.manual_seed(0)
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16,
                           dropout=0.0, batch_first=True).double()
    src, tgt = ta.randn(2, 5, 8).double(), ta.randn(2, 4, 8).double()
    mask = nn.Transformer.generate_square_subsequent_mask(4)
    assert mask.dtype == np.float32
    out = model(src, tgt, tgt_mask=mask)
    np.testing.assert_array_equal(out.data, model(src, tgt, tgt_mask=mask.data.astype(np.float64)).data)
    assert out.dtype == np.float64


def test_multihead_attention_casts_a_constant_float_mask_and_refuses_a_trained_one_of_another_dtype():
    ta.manual_seed(0)
    mha = nn.MultiheadAttention(8, 2, batch_first=True).double()
    x = ta.randn(2, 4, 8).double()
    added = np.random.default_rng(0).standard_normal((4, 4))
    out, _ = mha(x, x, x, attn_mask=ta.tensor(added.astype(np.float32)))
    np.testing.assert_array_equal(out.data, mha(x, x, x, attn_mask=added.astype(np.float32).astype(np.float64))[0].data)
    trained = ta.tensor(added.astype(np.float32), requires_grad=True)
    with pytest.raises(TypeError, match="MultiheadAttention: the float mask is a float32 Tensor that requires grad"):
        mha(x, x, x, attn_mask=trained)
