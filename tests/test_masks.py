"""The one mask rule (PyTorch's boolean attn_mask): checked against a plain-loop reference.

The reference below shares nothing with tinyattn (no mask helper, no softmax kernel): each
query row is softmaxed over the keys its own mask entry allows, one Python loop at a time.
"""
import itertools

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F


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
