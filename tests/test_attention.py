"""Attention layers: every score gradchecked with masks, fused == reference, masks, PE, the worked example's numbers."""
import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F

PADDING = np.array([[True, False, True, True], [True, True, True, False]])[:, None, :]  # (B, 1, Tk)


def _t(rng, *shape):
    return ta.tensor(rng.standard_normal(shape), requires_grad=True)


@pytest.mark.parametrize("score", ["dot", "scaled_dot", "cosine", "general", "additive"])
@pytest.mark.parametrize("mask", [None, PADDING, np.tril(np.ones((3, 4), bool))], ids=["no mask", "padding", "2-D"])
def test_every_score_gradchecks_with_masks(score, mask, rng):
    same = score in ("dot", "scaled_dot", "cosine")
    attn = nn.Attention(5, 5 if same else 6, score=score, hidden_size=7).double()
    q, k, v = _t(rng, 2, 3, 5), _t(rng, 2, 4, 5 if same else 6), _t(rng, 2, 4, 3)
    params = tuple(attn.parameters())
    assert ta.gradcheck(lambda q, k, v, *p: attn(q, k, v, mask=mask), (q, k, v, *params))


@pytest.mark.parametrize("score", ["dot", "scaled_dot", "cosine", "general", "additive"])
def test_masked_keys_get_zero_weight_and_empty_rows_give_zeros_not_nan(score, rng):
    same = score in ("dot", "scaled_dot", "cosine")
    attn = nn.Attention(4, 4 if same else 3, score=score).double()
    q, k, v = _t(rng, 2, 2, 4), _t(rng, 2, 3, 4 if same else 3), _t(rng, 2, 3, 5)
    mask = np.array([[True, False, True], [False, False, False]])[:, None, :]
    context, weights = attn(q, k, v, mask=mask)
    assert np.all(weights.data[0, :, 1] == 0)
    np.testing.assert_allclose(weights.data[0].sum(-1), 1.0)
    assert np.all(weights.data[1] == 0) and np.all(context.data[1] == 0)
    (context.sum() + weights.sum()).backward()
    for t in (q, k, v, *attn.parameters()):
        assert np.isfinite(t.grad).all()
    assert not k.grad[0, 1].any() and not v.grad[0, 1].any()  # a masked key and value learn nothing
    assert not q.grad[1].any() and not k.grad[1].any()
    # and the gradients that are not zero are the right ones: finite differences, a random upstream
    assert ta.gradcheck(lambda q, k, v, *p: attn(q, k, v, mask=mask), (q, k, v, *attn.parameters()))


def test_cosine_score_is_finite_for_zero_vectors():
    attn = nn.Attention(3, 3, score="cosine").double()
    q = ta.tensor(np.zeros((1, 1, 3)), requires_grad=True)
    k = ta.tensor(np.vstack([np.zeros(3), np.ones(3)])[None], requires_grad=True)
    context, weights = attn(q, k, ta.tensor(np.eye(2)[None]))
    context.sum().backward()
    assert np.isfinite(weights.data).all() and np.isfinite(q.grad).all() and np.isfinite(k.grad).all()
    np.testing.assert_allclose(weights.data, [[[0.5, 0.5]]])  # a zero query matches no key better
    # eps keeps |q| + eps away from 0, so the gradient at the zero vectors is finite and is the true one
    assert ta.gradcheck(lambda q, k, v: attn(q, k, v), (q, k, ta.tensor(np.eye(2)[None], requires_grad=True)))


@pytest.mark.parametrize("mask", [None, PADDING[:, None], nn.causal_mask(4)], ids=["none", "padding", "causal"])
def test_fused_sdpa_equals_the_composed_reference_to_1e_10(mask, rng):
    q, k, v = (rng.standard_normal(s) for s in [(2, 3, 4, 5), (2, 3, 4, 5), (2, 3, 4, 6)])
    up_out, up_w = rng.standard_normal((2, 3, 4, 6)), rng.standard_normal((2, 3, 4, 4))
    results = []
    for fn in (F.scaled_dot_product_attention, F.scaled_dot_product_attention_reference):
        tensors = [ta.tensor(a, requires_grad=True) for a in (q, k, v)]
        out, weights = fn(*tensors, mask=mask)
        ta.backward([out, weights], [up_out, up_w])
        results.append([out.data, weights.data] + [t.grad for t in tensors])
    for fused, reference in zip(*results):
        np.testing.assert_allclose(fused, reference, rtol=0, atol=1e-10)


def test_self_attention_and_multi_head_gradcheck(rng):
    self_attn = nn.SelfAttention(4, key_dim=3, value_dim=5).double()
    x = _t(rng, 2, 3, 4)
    assert ta.gradcheck(lambda x, *p: self_attn(x, mask=nn.causal_mask(3)), (x, *self_attn.parameters()))
    mha = nn.MultiheadAttention(6, num_heads=2, batch_first=True).double()
    q, kv = _t(rng, 2, 3, 6), _t(rng, 2, 4, 6)
    assert ta.gradcheck(lambda q, kv, *p: mha(q, kv, kv, key_padding_mask=~PADDING[:, 0]), (q, kv, *mha.parameters()))
    out, weights = mha(q, kv, kv, average_attn_weights=False)
    assert out.shape == (2, 3, 6) and weights.shape == (2, 2, 3, 4)


def test_positional_encoding_table_follows_the_formula_and_learned_one_gradchecks(rng):
    pe = nn.PositionalEncoding(6, max_len=10)
    x = ta.zeros(1, 7, 6, dtype=np.float64)
    table = pe(x).data[0]
    for p in range(7):
        for i in range(3):
            assert table[p, 2 * i] == pytest.approx(np.sin(p / 10000 ** (2 * i / 6)), abs=1e-12)
            assert table[p, 2 * i + 1] == pytest.approx(np.cos(p / 10000 ** (2 * i / 6)), abs=1e-12)
    assert nn.PositionalEncoding(5, max_len=4)(ta.zeros(1, 4, 5)).shape == (1, 4, 5)  # odd size
    learned = nn.PositionalEncoding(4, max_len=6, learned=True).double()
    assert ta.gradcheck(lambda x, w: learned(x), (_t(rng, 2, 5, 4), learned.embedding.weight))
    with pytest.raises(ta.ShapeError, match="<= 6"):
        learned(ta.zeros(1, 7, 4, dtype=np.float64))


def test_attention_pooling_gradchecks_and_respects_the_mask(rng):
    pool = nn.AttentionPooling(4, 3).double()
    x = _t(rng, 2, 5, 4)
    mask = np.array([[True] * 5, [True, True, False, False, False]])
    assert ta.gradcheck(lambda x, *p: pool(x, mask=mask), (x, *pool.parameters()))
    pooled, weights = pool(x, mask=mask)
    assert pooled.shape == (2, 4) and not weights.data[1, 2:].any()


def test_causal_mask_lets_each_position_see_itself_and_the_past():
    np.testing.assert_array_equal(nn.causal_mask(3), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])


def test_attention_errors_are_clear():
    with pytest.raises(ValueError, match="needs query_size == key_size"):
        nn.Attention(3, 4, score="dot")
    with pytest.raises(ValueError, match="score must be one of"):
        nn.Attention(3, 3, score="bilinear")
    with pytest.raises(ta.ShapeError, match=r"mask \(2, 3\) does not broadcast to the scores .* \(2, 3, 4\)"):
        F.scaled_dot_product_attention(ta.ones(2, 3, 5), ta.ones(2, 4, 5), ta.ones(2, 4, 5), mask=np.ones((2, 3), bool))
    with pytest.raises(ta.ShapeError, match="query size 5 and key size 4 differ"):
        F.scaled_dot_product_attention(ta.ones(2, 3, 5), ta.ones(2, 4, 4), ta.ones(2, 4, 5))


def test_the_illustrated_self_attention_worked_example():
    """The worked example of "Illustrated: Self-Attention" (as Linear: weight = W^T)."""
    X = np.array([[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]], np.float64)
    W_k = np.array([[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]], np.float64)
    W_q = np.array([[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]], np.float64)
    W_v = np.array([[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]], np.float64)
    attn = nn.SelfAttention(4, key_dim=3, value_dim=3, bias=True, scale=False).double()
    for layer, W in ((attn.W_q, W_q), (attn.W_k, W_k), (attn.W_v, W_v)):
        layer.weight.data[:] = W.T
        layer.bias.data[:] = 0
    np.testing.assert_array_equal(attn.W_k(ta.tensor(X)).data, [[0, 1, 1], [4, 4, 0], [2, 3, 1]])
    out, weights = attn(ta.tensor(X[None]))
    np.testing.assert_allclose(out.data[0, 0], [1.937, 6.683, 1.595], atol=1e-3)


def test_composed_sdpa_reference_gradchecks_with_a_mask(rng):
    q, k, v = _t(rng, 2, 3, 4), _t(rng, 2, 5, 4), _t(rng, 2, 5, 2)
    mask = np.array([[True, True, False, True, False], [False] * 5])[:, None, :]
    assert ta.gradcheck(lambda q, k, v: F.scaled_dot_product_attention_reference(q, k, v, mask=mask), (q, k, v))


def test_attention_on_a_single_vector_is_a_clear_error():
    """(Tq, d) without a batch axis is PyTorch's and works (checked below); one vector is not attention."""
    with pytest.raises(ta.ShapeError, match=r"need at least 2 dims each"):
        F.scaled_dot_product_attention(ta.ones(4), ta.ones(5, 4), ta.ones(5, 4))
    pool = nn.AttentionPooling(4, 3)
    with pytest.raises(ta.ShapeError, match=r"AttentionPooling: mask \(2, 4\) does not broadcast .* \(2, 5\)"):
        pool(ta.ones(2, 5, 4), mask=np.ones((2, 4), bool))


def test_attention_refuses_keys_from_another_batch():
    with pytest.raises(ta.ShapeError, match="do not fit"):
        nn.Attention(4, 4, score="general")(ta.ones(2, 3, 4), ta.ones(1, 5, 4), ta.ones(1, 5, 2))


# --- F.scaled_dot_product_attention takes PyTorch's shapes ---
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
