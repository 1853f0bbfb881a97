"""MultiheadAttention and the Transformer layers equal PyTorch's: outputs, input and parameter
gradients, float64 and float32, from PyTorch's own state_dicts (fixtures by make_torch_fixtures.py).

The fixtures are committed, so this runs (and must pass) where PyTorch is not installed.
"""
import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn

from .test_torch_parity import _group, _load

MHA = ["mha_bool_masks", "mha_bool_mask_3d", "mha_float_mask", "mha_kdim_vdim", "mha_causal"]
LAYERS = ["encoder_layer_relu_post", "encoder_layer_gelu_pre", "encoder_layer_causal_no_bias",
          "decoder_layer_relu_post", "decoder_layer_gelu_pre", "encoder_stack", "decoder_stack"]
# float32 against PyTorch's float64 results: float32 rounding (about 6e-8) grown through a few layers
TOLERANCE = {np.float64: dict(rtol=1e-7, atol=1e-10), np.float32: dict(rtol=2e-4, atol=2e-5)}
E, H, FF = 4, 2, 6


def _settings(fixture, prefix):
    return {k: v.item() if v.ndim == 0 else v for k, v in _group(fixture, prefix).items()}


def _build(name, fixture):
    init = _settings(fixture, "meta.init.")
    if name.startswith("mha"):
        return nn.MultiheadAttention(E, H, **init, batch_first=True)
    if name.startswith("encoder_layer"):
        return nn.TransformerEncoderLayer(E, H, FF, dropout=0.0, **init, batch_first=True)
    if name.startswith("decoder_layer"):
        return nn.TransformerDecoderLayer(E, H, FF, dropout=0.0, **init, batch_first=True)
    layers = int(fixture["meta.num_layers"])
    if name == "encoder_stack":
        layer = nn.TransformerEncoderLayer(E, H, FF, dropout=0.0, **init, batch_first=True)
        return nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(E))
    layer = nn.TransformerDecoderLayer(E, H, FF, dropout=0.0, **init, batch_first=True)
    return nn.TransformerDecoder(layer, layers, norm=nn.LayerNorm(E))


def _run(module, inputs, call):
    if "x" in inputs:  # self-attention through MultiheadAttention
        return module(inputs["x"], inputs["x"], inputs["x"], **call)
    if "query" in inputs:
        return module(inputs["query"], inputs["key"], inputs["value"], **call)
    if "memory" in inputs:
        return (module(inputs["tgt"], inputs["memory"], **call),)
    return (module(inputs["src"], **call),)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", MHA + LAYERS)
def test_matches_pytorch_outputs_and_every_gradient(name, dtype):
    fixture = _load(name)
    module = _build(name, fixture)
    module._to_dtype(dtype)
    state = {k: v.astype(dtype) for k, v in _group(fixture, "param.").items()}
    module.load_state_dict(state)  # PyTorch's names and shapes, as they are
    inputs = {k: ta.tensor(v.astype(dtype), requires_grad=True) for k, v in _group(fixture, "input.").items()}
    outputs = [o for o in _run(module, inputs, _settings(fixture, "meta.call.")) if o is not None]
    count = len(_group(fixture, "output."))
    assert len(outputs) == count, f"{name}: {len(outputs)} outputs, PyTorch gave {count}"
    tol = TOLERANCE[dtype]
    for i, out in enumerate(outputs):
        assert out.dtype == dtype
        np.testing.assert_allclose(out.data, fixture[f"output.{i}"], **tol, err_msg=f"{name} output {i}")
    ta.backward(outputs, [fixture[f"upstream.{i}"].astype(dtype) for i in range(count)])
    for k, expected in _group(fixture, "grad.input.").items():
        np.testing.assert_allclose(inputs[k].grad, expected, **tol, err_msg=f"{name} d/d{k}")
    params = dict(module.named_parameters())
    expected_grads = _group(fixture, "grad.param.")
    assert set(expected_grads) == set(params), f"{name}: parameter names differ from PyTorch's"
    for k, expected in expected_grads.items():
        np.testing.assert_allclose(params[k].grad, expected, **tol, err_msg=f"{name} d/d{k}")


@pytest.mark.parametrize("name", MHA + LAYERS)
def test_state_dict_has_pytorchs_keys_and_shapes(name):
    """What tinyattn saves is what PyTorch's load_state_dict(strict=True) asks for, and back."""
    fixture = _load(name)
    ours = _build(name, fixture).state_dict()
    theirs = _group(fixture, "param.")
    assert {k: v.shape for k, v in ours.items()} == {k: v.shape for k, v in theirs.items()}
