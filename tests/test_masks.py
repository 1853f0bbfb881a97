"""The one mask rule (PyTorch's boolean attn_mask): checked against a plain-loop reference.

The reference below shares nothing with tinyattn (no mask helper, no softmax kernel): each
query row is softmaxed over the keys its own mask entry allows, one Python loop at a time.

Then the ways a mask reaches attention: as a Tensor (bool, or a float mask that trains), from
lengths (never misread as (queries, keys)), a constant float mask in the scores' dtype, and the
warning for a mask that leaves a query nothing (naming the convention and the caller's line).
"""
import itertools
import sys
import warnings

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn.nn import masks as masks_module


def loop_attention(q, k, v, allowed, scale):
    """out[..., i, :] = sum_j w_ij v_j, w = softmax over the allowed j of scale * q_i . k_j."""
    out = np.zeros(q.shape[:-1] + (v.shape[-1],))
    weights = np.zeros(q.shape[:-1] + (k.shape[-2],))
    allowed = np.broadcast_to(allowed, weights.shape)  # the test's own reading of the rule
    for lead in itertools.product(*(range(n) for n in q.shape[:-2])):
        for i in range(q.shape[-2]):
            keys = [j for j in range(k.shape[-2]) if allowed[lead + (i, j)]]
            if not keys:
                continue
            s = np.array([scale * float(q[lead + (i,)] @ k[lead + (j,)]) for j in keys])
            e = np.exp(s - s.max())
            for j, w in zip(keys, e / e.sum()):
                weights[lead + (i, j)] = w
                out[lead + (i,)] += w * v[lead + (j,)]
    return out, weights


CASES = {
    "causal (T, T), batch == T": ((4, 4, 3), nn.causal_mask(4)),
    "padding (B, 1, Tk)": ((3, 5, 2), nn.padding_mask([5, 2, 0], 5)),
    "per query (B, Tq, Tk)": ((2, 4, 3), np.random.default_rng(1).random((2, 4, 4)) < 0.6),
    "heads, causal (Tq, Tk)": ((2, 3, 4, 4), nn.causal_mask(4)),
    "heads, padding (B, 1, 1, Tk)": ((2, 3, 4, 4), nn.padding_mask([4, 1], 4)[:, None]),
    "5-D, causal (Tq, Tk)": ((2, 2, 2, 3, 3), nn.causal_mask(3)),
    "5-D, one mask per leading index (2, 1, 1, 3, 3)": ((2, 2, 2, 3, 3), np.random.default_rng(2).random((2, 1, 1, 3, 3)) < 0.7),
}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("fn", [F.scaled_dot_product_attention, F.scaled_dot_product_attention_reference],
                         ids=["fused", "composed"])
def test_sdpa_masks_match_an_independent_loop_reference(name, fn, rng):
    shape, mask = CASES[name]
    q, k, v = (rng.standard_normal(shape) for _ in range(3))
    out, weights = fn(ta.tensor(q), ta.tensor(k), ta.tensor(v), mask=mask)
    expected_out, expected_weights = loop_attention(q, k, v, mask, 1 / np.sqrt(shape[-1]))
    np.testing.assert_allclose(weights.data, expected_weights, atol=1e-12)
    np.testing.assert_allclose(out.data, expected_out, atol=1e-12)


def test_a_causal_mask_is_causal_when_the_batch_size_equals_T(rng):
    """The old rule read a (T, T) mask as (batch, keys): with B == T every query saw key 0 only."""
    x = ta.tensor(rng.standard_normal((3, 3, 4)))
    _, weights = nn.SelfAttention(4).double()(x, mask=nn.causal_mask(3))
    for b in range(3):
        assert np.all(np.triu(weights.data[b], 1) == 0)      # no query sees its future
        assert np.all(np.diag(weights.data[b]) > 0)          # every query sees itself
        np.testing.assert_allclose(weights.data[b].sum(-1), 1.0)


@pytest.mark.parametrize("bad", [(3, 5), (2, 4), (2, 3, 4, 5), (1, 2, 2, 3, 5)])
def test_a_mask_that_does_not_broadcast_is_an_error_naming_both_shapes(bad):
    q = ta.ones(2, 3, 5)
    k = ta.ones(2, 4, 5)
    with pytest.raises(ta.ShapeError, match=rf"scaled_dot_product_attention: mask \({bad[0]}, .* \(2, 3, 4\)"):
        F.scaled_dot_product_attention(q, k, k, mask=np.ones(bad, bool))


def test_masks_must_be_bool_and_padding_mask_checks_lengths():
    with pytest.raises(TypeError, match="mask must be bool"):
        F.scaled_dot_product_attention(ta.ones(2, 3, 5), ta.ones(2, 4, 5), ta.ones(2, 4, 5), mask=np.ones((3, 4)))
    with pytest.raises(ValueError, match=r"padding_mask: lengths must lie in \[0, 4\]"):
        nn.padding_mask([5, 1], 4)
    np.testing.assert_array_equal(nn.padding_mask([2, 0], 3), [[[True, True, False]], [[False, False, False]]])


def test_softmax_reads_a_broadcast_mask_without_a_full_size_copy(monkeypatch):
    """The mask handed to the kernel keeps its own size (strides do the broadcasting)."""
    from tinyattn.ops import arrays as kernels

    seen = []
    original = kernels.softmax
    monkeypatch.setattr(kernels, "softmax", lambda x, mask=None: seen.append(mask) or original(x, mask))
    scores = ta.tensor(np.zeros((8, 4, 16, 16)))
    scores.softmax(-1, mask=nn.causal_mask(16))
    scores.softmax(1, mask=np.ones((4, 1, 1), bool))
    assert all(m.size <= 16 * 16 for m in seen)


# --- masks given as Tensors, trainable float masks, and a mask that leaves a query nothing ---
def test_a_bool_mask_given_as_a_tensor_masks_as_the_array_does(rng):
    ta.manual_seed(0)
    mha = nn.MultiheadAttention(8, 2, batch_first=True).double()
    x = ta.tensor(rng.standard_normal((2, 3, 8)))
    hidden = np.triu(np.ones((3, 3), bool), 1)  # PyTorch's polarity: True = may not attend
    as_array, w_array = mha(x, x, x, attn_mask=hidden)
    as_tensor, w_tensor = mha(x, x, x, attn_mask=ta.tensor(hidden))
    np.testing.assert_array_equal(as_tensor.data, as_array.data)
    assert (w_tensor.data[:, 0, 1:] == 0).all()
    padding = np.array([[False, False, True], [False, False, False]])
    np.testing.assert_array_equal(mha(x, x, x, key_padding_mask=ta.tensor(padding))[0].data,
                                  mha(x, x, x, key_padding_mask=padding)[0].data)
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True).double()
    np.testing.assert_array_equal(layer(x, src_mask=ta.tensor(hidden)).data, layer(x, src_mask=hidden).data)
    assert not np.allclose(layer(x, src_mask=ta.tensor(hidden)).data, layer(x).data)


def test_a_trainable_float_mask_gets_its_gradient(rng):
    ta.manual_seed(0)
    mha = nn.MultiheadAttention(4, 2, batch_first=True).double()
    x = ta.tensor(rng.standard_normal((2, 3, 4)))
    bias = ta.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    assert ta.gradcheck(lambda b: mha(x, x, x, attn_mask=b)[0], (bias,))
    mha(x, x, x, attn_mask=bias)[0].sum().backward()
    assert bias.grad is not None and np.abs(bias.grad).max() > 0


def test_a_mask_that_leaves_a_query_nothing_warns_naming_the_convention(monkeypatch, rng):
    monkeypatch.setattr(masks_module, "_warned_sites", set())
    ta.manual_seed(0)
    mha = nn.MultiheadAttention(4, 2, batch_first=True)
    x = ta.randn(1, 3, 4)
    inverted = np.tril(np.ones((3, 3), bool))  # tinyattn's "may attend" given to PyTorch's "may NOT attend"
    with pytest.warns(UserWarning, match=r"MultiheadAttention: the mask leaves some query .*True where attention may NOT go"):
        mha(x, x, x, attn_mask=inverted)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a mask that leaves every query some key is quiet
        mha(x, x, x, attn_mask=~inverted)
    with pytest.warns(UserWarning, match=r"scaled_dot_product_attention: .*True where a query may attend"):
        F.scaled_dot_product_attention(x, x, x, mask=np.triu(np.ones((3, 3), bool), 1))


# --- lengths never become a (B, T) mask that attention reads as (queries, keys) ---
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


# --- the empty-row warning points at the caller's line, once per line ---
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


# --- a constant float mask takes the scores' dtype ---
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
