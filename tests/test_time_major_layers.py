"""Recurrent layers on (T, B, F) inputs, whose batch-first view is not contiguous, give what the
same layer gives on the batch-first copy (forward and gradients). broadcast_products once wrote
the products x.transpose(0, 1) * w of such a view into a copy of its output, so nn.RNN with
lengths and every layer under ta.fused(False) returned uninitialised memory."""
import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn


@pytest.mark.parametrize("kind, fused", [("RNN", True), ("GRU", False), ("LSTM", False)])
def test_time_major_layer_with_lengths_equals_the_batch_first_one(kind, fused, rng):
    ta.manual_seed(0)
    layer = getattr(nn, kind)(3, 4, batch_first=False)
    batch_first = getattr(nn, kind)(3, 4, batch_first=True)
    batch_first.load_state_dict(layer.state_dict())
    x = rng.standard_normal((5, 3, 3)).astype(np.float32)  # (T, B, F)
    lengths = np.array([5, 2, 4])
    upstream = rng.standard_normal((5, 3, 4)).astype(np.float32)
    results = []
    with ta.fused(fused):
        for module, given, g in ((layer, x, upstream), (batch_first, x.transpose(1, 0, 2).copy(), upstream.transpose(1, 0, 2))):
            inputs = ta.tensor(given, requires_grad=True)
            out, _ = module(inputs, lengths=lengths)
            (out * ta.tensor(np.ascontiguousarray(g))).sum().backward()
            results.append((out.data, inputs.grad, module.weight_hh_l0.grad))
    (out_t, dx_t, dw_t), (out_b, dx_b, dw_b) = results
    np.testing.assert_allclose(out_t, out_b.transpose(1, 0, 2), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dx_t, dx_b.transpose(1, 0, 2), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dw_t, dw_b, rtol=1e-5, atol=1e-6)
