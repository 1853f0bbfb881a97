"""nn.Transformer equals PyTorch's nn.Transformer (fixture torch_transformer.npz, make_torch_fixtures.py)."""
import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn

from .test_torch_parity import _group, _load

E, H, FF = 4, 2, 6


def _bool_call(fixture):
    return {k: v for k, v in _group(fixture, "meta.call.").items()}


def test_matches_pytorch_outputs_and_every_gradient():
    fixture = _load("transformer")
    model = nn.Transformer(E, H, 2, 2, FF, dropout=0.0, batch_first=True).double()
    model.load_state_dict(_group(fixture, "param."))  # PyTorch's names and shapes, as they are
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=np.float64)
    np.testing.assert_array_equal(mask.data, fixture["meta.causal_mask"])
    src = ta.tensor(fixture["input.src"], requires_grad=True)
    tgt = ta.tensor(fixture["input.tgt"], requires_grad=True)
    out = model(src, tgt, tgt_mask=mask, **_bool_call(fixture))
    np.testing.assert_allclose(out.data, fixture["output.0"], rtol=1e-7, atol=1e-10)
    out.backward(fixture["upstream.0"])
    np.testing.assert_allclose(src.grad, fixture["grad.input.src"], rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(tgt.grad, fixture["grad.input.tgt"], rtol=1e-7, atol=1e-10)
    params = dict(model.named_parameters())
    expected = _group(fixture, "grad.param.")
    assert set(expected) == set(params), "parameter names differ from PyTorch's"
    for name, grad in expected.items():
        np.testing.assert_allclose(params[name].grad, grad, rtol=1e-7, atol=1e-10, err_msg=name)


def test_pytorch_defaults_and_initialisation():
    ta.manual_seed(0)
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16)
    assert model.batch_first is False and model.encoder.layers[0].self_attn.batch_first is False  # PyTorch's
    names = dict(model.named_parameters())
    assert "encoder.norm.weight" in names and "decoder.layers.0.multihead_attn.in_proj_weight" in names
    assert model.encoder.layers[0].dropout.p == 0.1 and model.encoder.layers[0].norm1.eps == 1e-5
    w = names["encoder.layers.0.linear1.weight"].data  # xavier uniform: |w| <= sqrt(6 / (fan_in + fan_out))
    assert np.abs(w).max() <= np.sqrt(6 / 24) and np.abs(w).max() > 0.8 * np.sqrt(6 / 24)
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    assert mask.dtype == np.float32 and mask.data[0, 1] == -np.inf and mask.data[1, 0] == 0
    time_first = nn.Transformer(8, 2, 1, 1, 16, dropout=0.0, batch_first=False)  # (time, batch, features)
    batch_first = nn.Transformer(8, 2, 1, 1, 16, dropout=0.0, batch_first=True)
    batch_first.load_state_dict(time_first.state_dict())
    src, tgt = ta.randn(2, 5, 8), ta.randn(2, 3, 8)
    np.testing.assert_allclose(time_first(src.transpose(0, 1), tgt.transpose(0, 1)).data.transpose(1, 0, 2),
                               batch_first(src, tgt).data, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="batch size"):
        batch_first(ta.randn(2, 5, 8), ta.randn(3, 3, 8))
