"""Modules and layers: registration, state, init, and a float64 gradcheck of each layer."""
import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn.nn.positions import alibi_slopes


def _x(rng, *shape):
    return ta.tensor(rng.standard_normal(shape), requires_grad=True)


def test_linear_gradchecks_with_input_and_all_parameters(rng):
    layer = nn.Linear(4, 3).double()
    x = _x(rng, 2, 5, 4)
    assert ta.gradcheck(lambda x, w, b: layer(x), (x, layer.weight, layer.bias))


def test_linear_is_one_graph_node_and_matches_the_formula(rng):
    layer = nn.Linear(4, 3)
    x = ta.tensor(rng.standard_normal((2, 4)).astype(np.float32))
    y = layer(x)
    assert y.grad_fn == "LinearFunction"
    np.testing.assert_allclose(y.data, x.data @ layer.weight.data.T + layer.bias.data, rtol=1e-5)


def test_linear_init_follows_pytorch_bounds():
    ta.manual_seed(0)
    layer = nn.Linear(16, 300)
    bound = 1 / np.sqrt(16)
    assert np.abs(layer.weight.data).max() <= bound and np.abs(layer.weight.data).max() > 0.9 * bound
    assert layer.weight.shape == (300, 16) and layer.bias.shape == (300,)
    assert layer.weight.dtype == np.float32


def test_embedding_gradchecks_and_padding_row_gets_no_gradient(rng):
    emb = nn.Embedding(6, 3, padding_idx=0).double()
    assert not emb.weight.data[0].any()
    idx = np.array([[1, 0, 5], [5, 5, 2]])
    emb(idx).sum().backward()
    assert not emb.weight.grad[0].any()
    np.testing.assert_array_equal(emb.weight.grad[5], [3, 3, 3])
    np.testing.assert_array_equal(emb.weight.grad[1], [1, 1, 1])
    no_pad = nn.Embedding(6, 3).double()
    assert ta.gradcheck(lambda w: (no_pad(idx) ** 2), (no_pad.weight,))


def test_embedding_rejects_bad_indices_clearly():
    emb = nn.Embedding(4, 2)
    with pytest.raises(IndexError, match="index 4 is out of range for 4 embeddings"):
        emb(np.array([0, 4]))
    with pytest.raises(TypeError, match="integers"):
        emb(np.array([0.0]))


def test_layernorm_matches_the_definition_and_gradchecks(rng):
    norm = nn.LayerNorm(5).double()
    norm.weight.data[:] = rng.standard_normal(5)
    norm.bias.data[:] = rng.standard_normal(5)
    x = _x(rng, 2, 3, 5)
    mean = x.data.mean(-1, keepdims=True)
    var = x.data.var(-1, keepdims=True)  # biased, as PyTorch
    expected = (x.data - mean) / np.sqrt(var + 1e-5) * norm.weight.data + norm.bias.data
    np.testing.assert_allclose(norm(x).data, expected, rtol=1e-12)
    assert ta.gradcheck(lambda x, w, b: norm(x), (x, norm.weight, norm.bias))


def test_dropout_scales_in_training_and_is_identity_in_eval():
    drop = nn.Dropout(0.25)
    x = ta.ones(1000, 10)
    ta.manual_seed(0)
    y = drop(x).data
    assert set(np.unique(y)) == {0.0, np.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.02
    drop.eval()
    assert drop(x) is x


def test_dropout_gradient_flows_through_kept_elements_only():
    x = ta.tensor(np.ones((4, 50)), requires_grad=True)
    ta.manual_seed(1)
    y = F.dropout(x, 0.5)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, y.data)  # kept: 1/(1-p) = 2, dropped: 0


def test_modules_register_nested_parameters_with_dotted_names():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(3, 4)
            self.norm = nn.LayerNorm(4)
            self.scale = nn.Parameter(np.ones(1, np.float32))

        def forward(self, x):
            return self.norm(self.proj(x)) * self.scale

    model = nn.Sequential(Block(), nn.ReLU(), nn.Linear(4, 2))
    names = [name for name, _ in model.named_parameters()]
    assert names == ["0.scale", "0.proj.weight", "0.proj.bias", "0.norm.weight", "0.norm.bias", "2.weight", "2.bias"]
    assert "(0): Block(" in repr(model) and "(proj): Linear(in_features=3, out_features=4, bias=True)" in repr(model)
    model.eval()
    assert not any(m.training for m in model.modules())
    assert model.double() is model and all(p.dtype == np.float64 for p in model.parameters())


def test_shared_parameters_are_listed_once():
    model = nn.Module()
    layer = nn.Linear(2, 2)
    model.a, model.b = layer, layer
    assert len(model.parameters()) == 2


def test_load_state_dict_lists_every_problem_and_changes_nothing():
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    before = {k: v.copy() for k, v in model.state_dict().items()}
    state = model.state_dict()
    state["0.weight"] = np.zeros((4, 3), np.float32)       # a good entry that must not land
    state["1.weight"] = np.zeros((5, 4), np.float32)       # wrong shape
    state["0.bias"] = np.zeros(4, np.float64)              # wrong dtype
    del state["1.bias"]                                    # missing
    state["2.weight"] = np.zeros(1, np.float32)            # unexpected
    with pytest.raises(RuntimeError) as error:
        model.load_state_dict(state)
    message = str(error.value)
    for needle in ("missing keys: 1.bias", "unexpected keys: 2.weight", "1.weight: shape (5, 4)", "0.bias: dtype float64"):
        assert needle in message
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(value, before[key])


def test_load_state_dict_keeps_parameter_identity():
    model, other = nn.Linear(3, 2), nn.Linear(3, 2)
    weight = model.weight
    model.load_state_dict(other.state_dict())
    assert model.weight is weight
    np.testing.assert_array_equal(weight.data, other.weight.data)


def test_functional_names_match_the_tensor_methods(rng):
    x = ta.tensor(rng.standard_normal((2, 3)))
    np.testing.assert_allclose(F.softmax(x, dim=0).data, x.softmax(0).data)
    np.testing.assert_allclose(F.log_softmax(x).data, x.log_softmax(-1).data)
    np.testing.assert_array_equal(F.relu(x).data, np.maximum(x.data, 0))
    assert F.cross_entropy(x, np.array([0, 2])).shape == ()


def test_load_state_dict_takes_nan_as_data():
    layer = nn.Linear(2, 2)
    state = layer.state_dict()
    state["weight"] = state["weight"].copy()
    state["weight"][0, 0] = np.nan
    layer.load_state_dict(state)
    assert np.isnan(layer.weight.data[0, 0])


# --- re-assigning a parameter or a submodule keeps its place; constructors name bad sizes ---
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
