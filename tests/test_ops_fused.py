"""The fused kernels (additive attention, GRU/LSTM gates, sigmoid, Adam, row scatter, tanh and
sigmoid scalars) against their numpy references, and the fused layers against composed ops."""
import numba
import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
from tinyattn.data import TOKEN_IDS, ToyTranslation
from tinyattn.models import Seq2Seq
from tinyattn.nn.additive_attention import additive_attention_composed
from tinyattn.nn.fused.additive_attention_node import AdditiveAttention
from tinyattn.ops import additive_attention_arrays as aa, arrays as A, reference as R, reference_blocks as RB, use_backend
from tinyattn.ops.kernels import adam, matmul, sigmoid, scatter_rows
from tinyattn.ops.kernels import pair_tanh as aak
from tinyattn.ops.kernels.fast_activations import fast_sigmoid, fast_tanh

DTYPES = [np.float32, np.float64]
TOL = {np.float32: 2e-5, np.float64: 1e-12}


@numba.njit(error_model="numpy")
def _apply_tanh(x, out):
    for j in range(x.shape[0]):
        out[j] = fast_tanh(x[j])


@numba.njit(error_model="numpy")
def _apply_sigmoid(x, out):
    for j in range(x.shape[0]):
        out[j] = fast_sigmoid(x[j])


@pytest.mark.parametrize("dtype", DTYPES)
def test_fast_tanh_and_sigmoid_within_a_few_ulp(dtype):
    x = np.concatenate([np.linspace(-25, 25, 20001), np.geomspace(1e-30, 25, 4000), -np.geomspace(1e-30, 25, 4000),
                        [0.0, 0.6249, 0.625, 0.6251, 1000.0, -1000.0]]).astype(dtype)
    with np.errstate(over="ignore"):  # exp(1000) = inf: sigmoid(-1000) = 0 exactly
        exact = {"tanh": np.tanh(x.astype(np.float64)), "sigmoid": 1 / (1 + np.exp(-x.astype(np.float64)))}
    for name, kernel in (("tanh", _apply_tanh), ("sigmoid", _apply_sigmoid)):
        out = np.empty_like(x)
        kernel(x, out)
        ulp = np.spacing(np.abs(exact[name]).astype(dtype)).astype(np.float64)
        worst = np.max(np.abs(out - exact[name]) / ulp)
        assert worst <= 4, f"{name} {np.dtype(dtype).name}: {worst} ulp"
    special = np.array([np.inf, -np.inf, np.nan], dtype)
    out = np.empty_like(special)
    _apply_tanh(special, out)
    np.testing.assert_array_equal(out, [1, -1, np.nan])
    _apply_sigmoid(special, out)
    np.testing.assert_array_equal(out, [1, 0, np.nan])


def _attention_arrays(rng, dtype, B=3, Tq=2, Tk=5, h=7, Dv=4):
    wq, uk = rng.standard_normal((B, Tq, h)).astype(dtype), rng.standard_normal((B, Tk, h)).astype(dtype)
    v, values = rng.standard_normal(h).astype(dtype), rng.standard_normal((B, Tk, Dv)).astype(dtype)
    mask = rng.random((B, Tq, Tk)) < 0.7
    mask[1, 0] = False  # a query with nothing to attend
    return wq, uk, v, values, mask


@pytest.mark.parametrize("dtype", DTYPES)
def test_additive_attention_kernels_match_the_reference(dtype, rng):
    wq, uk, v, values, mask = _attention_arrays(rng, dtype)
    hidden = aa.pair_tanh(wq, uk)
    d_score = rng.standard_normal(hidden.shape[:3]).astype(dtype)
    for a, b in zip(aak.through_pair_tanh(d_score, v, hidden), RB.through_pair_tanh(d_score, v, hidden)):
        np.testing.assert_allclose(a, b, rtol=10 * TOL[dtype], atol=10 * TOL[dtype])
    with use_backend("numba"):
        context, weights, _ = aa.additive_attention(wq, uk, v, values, mask)
    assert not weights[1, 0].any() and not context[1, 0].any()  # empty row: zero weights, zero context


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_fused_additive_attention_equals_the_composed_ops_in_float64(backend, rng):
    def run(attend):
        r = np.random.default_rng(5)
        args = [ta.tensor(r.standard_normal(s), requires_grad=True) for s in [(3, 2, 4), (6, 4), (3, 5, 6), (1, 6), (3, 5, 2)]]
        mask = nn.padding_mask(np.array([5, 0, 3]), 5)
        with use_backend(backend):
            context, weights = attend(*args, mask)
            ((context * ta.tensor(r.standard_normal(context.shape))).sum()
             + (weights * ta.tensor(r.standard_normal(weights.shape))).sum()).backward()
        return [context.data, weights.data] + [a.grad for a in args]

    for fused, composed in zip(run(AdditiveAttention.apply), run(additive_attention_composed)):
        np.testing.assert_allclose(fused, composed, rtol=0, atol=1e-10)


def test_attention_layer_fused_or_not_and_with_precomputed_keys_agree(rng):
    attention = nn.Attention(4, 6, score="additive", hidden_size=5).double()
    query, keys = ta.tensor(rng.standard_normal((2, 3, 4))), ta.tensor(rng.standard_normal((2, 7, 6)))
    mask = nn.padding_mask(np.array([7, 2]), 7)
    fused = attention(query, keys, keys, mask=mask)
    precomputed = attention(query, attention.precompute_keys(keys), keys, mask=mask)
    with ta.fused(False):
        composed = attention(query, keys, keys, mask=mask)
    for a, b, c in zip(fused, precomputed, composed):
        np.testing.assert_allclose(a.data, c.data, atol=1e-12)
        np.testing.assert_array_equal(a.data, b.data)


def test_seq2seq_loss_equals_the_step_by_step_decoder_in_float64():
    ta.manual_seed(0)
    data = ToyTranslation(max_phrases=2, seed=4)
    model = Seq2Seq(len(data.source_vocab), len(data.target_vocab), **TOKEN_IDS, embed_dim=5, hidden_size=6).double()
    source, lengths, target = data.batch(4)
    states, state = model.encoder(source, lengths)
    keys, mask = model.decoder.keys(states), nn.padding_mask(lengths, source.shape[1])
    logits = []
    for t in range(target.shape[1] - 1):
        step_logits, state, _ = model.decoder.step(model.decoder.embedding(target[:, t]), state, keys, states, mask)
        logits.append(step_logits)
    expected = ta.cross_entropy(ta.stack(logits, axis=1), target[:, 1:], ignore_index=TOKEN_IDS["pad_id"])
    assert abs(model.loss(source, lengths, target).item() - expected.item()) < 1e-12


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("frozen", [False, True])
def test_gru_and_lstm_gate_kernels_match_the_reference(dtype, frozen, rng):
    B, H = 5, 6
    keep = np.array([[True], [False], [True], [True], [False]]) if frozen else None
    normal = lambda *s: rng.standard_normal(s).astype(dtype)  # noqa: E731
    gi, gh, h, g = normal(B, 3 * H), normal(B, 3 * H), normal(B, H), normal(B, H)
    with use_backend("numba"):
        fast = A.gru_gates(gi, gh, h, keep)
        fast_back = A.gru_gates_backward(g, h, *fast[1:], gh, keep)
    with use_backend("numpy"):
        slow = A.gru_gates(gi, gh, h, keep)
        slow_back = A.gru_gates_backward(g, h, *slow[1:], gh, keep)
    for a, b in zip(fast + fast_back, slow + slow_back):
        np.testing.assert_allclose(a, b, rtol=TOL[dtype], atol=TOL[dtype])

    gates, c, grad_c = normal(B, 4 * H), normal(B, H), normal(B, H)
    with use_backend("numba"):
        fast = A.lstm_gates(gates, c, h, keep)
        fast_back = A.lstm_gates_backward(g, grad_c, c, *fast[2:], keep)
    with use_backend("numpy"):
        slow = A.lstm_gates(gates, c, h, keep)
        slow_back = A.lstm_gates_backward(g, grad_c, c, *slow[2:], keep)
    for a, b in zip(fast + fast_back, slow + slow_back):
        if b is None:
            assert a is None
        else:
            np.testing.assert_allclose(a, b, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_sigmoid_scatter_and_outer_product_kernels_match_their_references(dtype, rng):
    x = (rng.standard_normal((7, 9)) * 30).astype(dtype)
    np.testing.assert_allclose(sigmoid.sigmoid(x), R.sigmoid(x), rtol=TOL[dtype], atol=0)
    indices, rows = rng.integers(0, 4, 50), rng.standard_normal((50, 3)).astype(dtype)
    # the same additions in the same order: the same bits
    np.testing.assert_array_equal(scatter_rows.scatter_rows(indices, rows, 6),
                                  R.scatter_rows(indices, rows, 6))
    # an inner size of 1: broadcast batch axes (numpy's a * b), the same batch axes (the Numba
    # kernel), 2-D, and a transposed (non-contiguous) operand; one product per entry: same bits
    for a_shape, b_shape in [((4, 5, 1), (3, 1, 1, 6)), ((2, 3, 5, 1), (2, 3, 1, 6)), ((5, 1), (1, 6))]:
        a, b = rng.standard_normal(a_shape).astype(dtype), rng.standard_normal(b_shape).astype(dtype)
        np.testing.assert_array_equal(matmul.matmul(a, b), R.matmul(a, b))
    a, b = rng.standard_normal((3, 1, 5)).astype(dtype).swapaxes(1, 2), rng.standard_normal((3, 1, 4)).astype(dtype)
    np.testing.assert_array_equal(matmul.matmul(a, b), R.matmul(a, b))


def test_outer_products_with_no_rows_or_columns_and_mismatched_inner_sizes_act_as_np_matmul():
    # a GRU of hidden size 1 at a step where no sentence runs multiplies (0, 1) @ (1, 3)
    for a_shape, b_shape in [((0, 1), (1, 3)), ((2, 0, 1), (2, 1, 3)), ((2, 3, 1), (2, 1, 0)), ((0, 3, 1), (0, 1, 2))]:
        a, b = np.ones(a_shape), np.ones(b_shape)
        got = matmul.matmul(a, b)
        assert got.shape == np.matmul(a, b).shape and got.dtype == np.float64
    with pytest.raises(ValueError):  # (3, 1) @ (2, 4): numpy refuses; no outer product of the first rows
        matmul.matmul(np.ones((2, 3, 1)), np.ones((2, 2, 4)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
def test_adam_kernel_gives_the_references_bits(dtype, weight_decay, rng):
    f = np.dtype(dtype).type
    p, g = rng.standard_normal((6, 5)).astype(dtype), rng.standard_normal((6, 5)).astype(dtype)
    arrays = [[p.copy(), np.zeros_like(p), np.zeros_like(p)] for _ in range(2)]
    for t in range(1, 4):
        scalars = ((f(0.9), f(1 - 0.9)), (f(0.999), f(1 - 0.999)), f(0.01 / (1 - 0.9 ** t)),
                   f(np.sqrt(1 - 0.999 ** t)), f(1e-8), f(weight_decay))
        R.adam_update(arrays[0][0], g, arrays[0][1], arrays[0][2], *scalars)
        with use_backend("numba"):
            adam.adam_update(arrays[1][0], g, arrays[1][1], arrays[1][2], *scalars)
        for a, b in zip(*arrays):
            np.testing.assert_array_equal(a, b)
