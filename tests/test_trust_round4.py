"""Issue 22, "Trust, round 4": re-assigned parameters keep their place, constructors name bad sizes,
masks cannot be misread, F.scaled_dot_product_attention takes PyTorch's shapes, the empty-row warning
points at the caller, constant float masks take the scores' dtype."""
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
