"""The names a learner brings from PyTorch mean what they mean there: checked against PyTorch's own
numbers (fixtures written by tests/fixtures/make_habits_fixtures.py, so no PyTorch is needed)."""
from pathlib import Path

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F

from .test_torch_parity import _check

FIXTURES = Path(__file__).parent / "fixtures"


# --- recurrent layers: num_layers, dropout, batch_first -----------------------------------------
def test_two_layer_bidirectional_gru_time_first_matches_pytorch():
    _check("gru_two_layers_time_first", nn.GRU(3, 4, num_layers=2, bidirectional=True, batch_first=False),
           lambda m, f, x, h0: m(x, h0))


@pytest.mark.parametrize("fused", [True, False])
def test_two_layer_lstm_matches_pytorch(fused):
    _check("lstm_two_layers", nn.LSTM(3, 4, num_layers=2, batch_first=True),
           lambda m, f, x: (lambda o, s: (o, *s))(*m(x)), fused)


def test_three_layer_relu_rnn_matches_pytorch():
    _check("rnn_three_layers_relu", nn.RNN(3, 4, num_layers=3, nonlinearity="relu", batch_first=True),
           lambda m, f, x: m(x))


def test_positional_arguments_follow_pytorch_and_dropout_acts_between_layers_only():
    gru = nn.GRU(3, 4, 2)  # the third argument is num_layers, as in PyTorch (it was bidirectional)
    assert gru.num_layers == 2 and not gru.bidirectional and "weight_ih_l1" in gru.state_dict()
    assert gru.weight_ih_l1.shape == (12, 4)
    with pytest.raises(ValueError, match="num_layers must be a whole number >= 1"):
        nn.LSTM(3, 4, num_layers=0)
    ta.manual_seed(0)
    layer = nn.GRU(3, 4, num_layers=2, dropout=0.5, batch_first=True).double()
    x = ta.tensor(np.random.default_rng(0).standard_normal((2, 5, 3)))
    layer.eval()
    first, again = layer(x)[0].data, layer(x)[0].data
    np.testing.assert_array_equal(first, again)
    layer.train()
    assert not np.allclose(layer(x)[0].data, first)  # dropout between the layers while training
    one = nn.GRU(3, 4, dropout=0.5, batch_first=True).double()
    one.train()
    np.testing.assert_array_equal(one(x)[0].data, one(x)[0].data)  # one layer: nothing between layers


def test_batch_first_false_is_the_transpose_of_batch_first():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 5, 3))
    for cls in (nn.RNN, nn.GRU, nn.LSTM):
        ta.manual_seed(0)
        batch_first = cls(3, 4, num_layers=2, bidirectional=True, batch_first=True).double()
        ta.manual_seed(0)
        time_first = cls(3, 4, num_layers=2, bidirectional=True, batch_first=False).double()
        out_b, state_b = batch_first(ta.tensor(x))
        out_t, state_t = time_first(ta.tensor(x.transpose(1, 0, 2)))
        np.testing.assert_allclose(out_t.data.transpose(1, 0, 2), out_b.data, rtol=0, atol=1e-12)
        h_b = state_b[0] if isinstance(state_b, tuple) else state_b
        h_t = state_t[0] if isinstance(state_t, tuple) else state_t
        np.testing.assert_allclose(h_t.data, h_b.data, atol=1e-12)  # h_n is (layers * directions, B, H) either way


# --- attention: PyTorch's masks and keywords ------------------------------------------------------
def test_multihead_attention_time_first_with_a_trained_float_mask_matches_pytorch():
    _check("mha_time_first_trained_mask", nn.MultiheadAttention(6, 2, batch_first=False),
           lambda m, f, query, key, value, attn_mask: m(query, key, value, attn_mask=attn_mask))


def test_sdpa_takes_pytorchs_keywords():
    _check("sdpa_causal_scaled", None, lambda m, f, q, k, v: (F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                                                          scale=0.3)[0],))
    _check("sdpa_float_mask", None,
           lambda m, f, q, k, v, attn_mask: (F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)[0],))


def test_sdpa_bool_attn_mask_is_true_where_attention_may_go_and_refuses_is_causal_beside_it(rng):
    q = ta.tensor(rng.standard_normal((2, 4, 3)))
    causal = nn.causal_mask(4)
    by_keyword, _ = F.scaled_dot_product_attention(q, q, q, attn_mask=causal)
    by_flag, weights = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    by_tinyattn_name, _ = F.scaled_dot_product_attention(q, q, q, mask=causal)
    np.testing.assert_array_equal(by_keyword.data, by_flag.data)
    np.testing.assert_array_equal(by_keyword.data, by_tinyattn_name.data)
    assert (weights.data[:, np.triu_indices(4, 1)[0], np.triu_indices(4, 1)[1]] == 0).all()
    with pytest.raises(ValueError, match="attn_mask or is_causal=True, not both"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=causal, is_causal=True)


# --- optimisers ---------------------------------------------------------------------------------
OPTIMIZERS = {
    "sgd_nesterov": (ta.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    "sgd_dampening": (ta.optim.SGD, dict(lr=0.05, momentum=0.8, dampening=0.3)),
    "adam_l2": (ta.optim.Adam, dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    "adamw": (ta.optim.AdamW, dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    "adamw_default_decay": (ta.optim.AdamW, dict(lr=0.05)),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_steps_match_pytorch(name):
    cls, kwargs = OPTIMIZERS[name]
    with np.load(FIXTURES / "torch_optimizers.npz") as f:
        p0, grads, after = f[f"{name}.p0"], f[f"{name}.grads"], f[f"{name}.after"]
    p = nn.Parameter(p0.copy())
    optimizer = cls([p], **kwargs)
    for step, g in enumerate(grads):
        p.grad = g.copy()
        optimizer.step()
        np.testing.assert_allclose(p.data, after[step], rtol=1e-12, atol=1e-14, err_msg=f"{name} step {step + 1}")


@pytest.mark.parametrize("make, message", [
    (lambda p: ta.optim.SGD(p, lr=-0.1), "lr must be >= 0"),
    (lambda p: ta.optim.SGD(p, lr=0.1, momentum=-1), "momentum must be >= 0"),
    (lambda p: ta.optim.SGD(p, lr=0.1, nesterov=True), "nesterov=True needs momentum > 0"),
    (lambda p: ta.optim.Adam(p, lr=-1), "lr must be >= 0"),
    (lambda p: ta.optim.Adam(p, betas=(1.0, 0.9)), r"betas\[0\] must be >= 0 and < 1"),
    (lambda p: ta.optim.AdamW(p, betas=(0.9, -0.1)), r"betas\[1\] must be >= 0 and < 1"),
    (lambda p: ta.optim.Adam(p, eps=-1e-8), "eps must be >= 0"),
    (lambda p: ta.optim.AdamW(p, weight_decay=-0.1), "weight_decay must be >= 0"),
    (lambda p: ta.optim.Adam(p, lr=float("nan")), "lr must be >= 0"),
])
def test_optimizers_refuse_values_outside_their_range(make, message):
    with pytest.raises(ValueError, match=message):
        make([nn.Parameter(np.zeros(2))])


# --- creation, dtypes and Tensor methods ----------------------------------------------------------
def test_creation_functions_as_in_pytorch():
    ta.manual_seed(0)
    draws = ta.randint(2, 5, (100,))
    assert draws.dtype == np.int64 and draws.shape == (100,) and set(np.unique(draws.data)) == {2, 3, 4}
    assert ta.randint(3, (2, 2)).data.max() < 3  # randint(high, size)
    assert ta.full((2, 3), 1.5).dtype == ta.float32 and ta.full((2,), 7).dtype == ta.int64
    x = ta.randn(2, 3, dtype=ta.float64)
    assert ta.zeros_like(x).dtype == np.float64 and ta.ones_like(x).data.sum() == 6
    assert ta.arange(5).dtype == ta.int64
    a, b = ta.randn(2, 3, 4), ta.randn(4, 5)
    np.testing.assert_array_equal(ta.matmul(a, b).data, (a @ b).data)
    np.testing.assert_array_equal(ta.matmul(a.data, b).data, (a @ b).data)


def test_tensor_methods_as_in_pytorch():
    x = ta.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    assert x.size() == (2, 3) and x.size(0) == 2 and x.size(-1) == 3 and x.numel() == 6 and x.dim() == 2
    assert x.long().dtype == np.int64 and x.int().dtype == np.int32 and x.to(ta.float32).dtype == np.float32
    assert x.to("cpu") is x and x.double() is x  # already float64: the same tensor, as PyTorch
    np.testing.assert_array_equal(x.t().data, x.data.T)
    with pytest.raises(ValueError, match="at most 2 dims"):
        ta.ones(2, 3, 4).t()
    copy = x.clone()
    assert copy.data is not x.data and not np.shares_memory(copy.data, x.data)
    (copy * 2).sum().backward()
    np.testing.assert_array_equal(x.grad, np.full((2, 3), 2.0))  # the gradient goes through clone


def test_view_refuses_where_pytorch_would_and_reshape_copies():
    x = ta.tensor(np.arange(6.0).reshape(2, 3))
    assert np.shares_memory(x.view(3, 2).data, x.data)
    transposed = x.T
    with pytest.raises(RuntimeError, match=r"view: .*use .reshape"):
        transposed.view(6)
    np.testing.assert_array_equal(transposed.reshape(6).data, x.data.T.reshape(6))


def test_nn_init_fills_in_place_with_pytorchs_bounds():
    ta.manual_seed(0)
    layer = nn.Linear(300, 200)
    weight = layer.weight
    assert nn.init.xavier_uniform_(layer.weight) is weight and layer.weight is weight
    bound = np.sqrt(6 / 500)
    assert np.abs(weight.data).max() <= bound and np.abs(weight.data).max() > 0.98 * bound
    nn.init.kaiming_uniform_(weight, a=np.sqrt(5))  # PyTorch's default for Linear: bound 1/sqrt(fan_in)
    assert np.abs(weight.data).max() <= 1 / np.sqrt(300) and np.abs(weight.data).max() > 0.98 / np.sqrt(300)
    nn.init.normal_(weight, 1.0, 0.1)
    assert abs(weight.data.mean() - 1.0) < 0.01 and abs(weight.data.std() - 0.1) < 0.01
    nn.init.uniform_(layer.bias, -2, -1)
    assert (layer.bias.data >= -2).all() and (layer.bias.data < -1).all()
    nn.init.zeros_(layer.bias)
    nn.init.ones_(weight)
    assert not layer.bias.data.any() and (weight.data == 1).all() and weight.dtype == np.float32
    with pytest.raises(ValueError, match="at least 2 dims"):
        nn.init.xavier_uniform_(layer.bias)
