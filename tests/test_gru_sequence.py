"""nn.GRU's whole-sequence node (nn/gru_sequence.py) equals the step-by-step graph it replaces."""
import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
from tinyattn.nn.gru_sequence import running_rows


def _run(layer, x, h0, lengths, fused, upstream):
    """Outputs, h_n and every gradient, for a random upstream gradient on both outputs."""
    layer.fused = fused
    layer.zero_grad()
    xt, h0t = ta.tensor(x, requires_grad=True), ta.tensor(h0, requires_grad=True)
    out, h_n = layer(xt, h0t, lengths=lengths)
    ((out * ta.tensor(upstream[0])).sum() + (h_n * ta.tensor(upstream[1])).sum()).backward()
    return [out.data, h_n.data, xt.grad, h0t.grad] + [p.grad for p in layer.parameters()]


@pytest.mark.parametrize("lengths", [None, [6, 1, 3, 6], [2, 4, 1, 3]], ids=["no lengths", "mixed", "all shorter than T"])
@pytest.mark.parametrize("bias", [True, False])
def test_the_sequence_node_gives_the_step_by_step_answer_and_gradients(lengths, bias, rng):
    layer = nn.GRU(3, 5, bidirectional=True, bias=bias).double()
    x, h0 = rng.standard_normal((4, 6, 3)), rng.standard_normal((2, 4, 5))
    upstream = rng.standard_normal((4, 6, 10)), rng.standard_normal((2, 4, 5))
    lengths = None if lengths is None else np.array(lengths)
    whole, steps = (_run(layer, x, h0, lengths, fused, upstream) for fused in (True, False))
    for got, want in zip(whole, steps):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)


def test_the_sequence_node_gradchecks_with_padding_both_ways(rng):
    layer = nn.GRU(2, 3, bidirectional=True).double()
    x = ta.tensor(rng.standard_normal((3, 4, 2)), requires_grad=True)
    h0 = ta.tensor(rng.standard_normal((2, 3, 3)), requires_grad=True)
    lengths = np.array([4, 1, 2])
    assert ta.gradcheck(lambda x, h0, *p: layer(x, h0, lengths=lengths), (x, h0, *layer.parameters()))


def test_hidden_size_one_with_steps_where_no_sentence_runs(rng):
    layer = nn.GRU(2, 1).double()  # (0, 1) @ (1, 3) at the last step: an empty outer product
    x, h0 = rng.standard_normal((2, 3, 2)), rng.standard_normal((1, 2, 1))
    upstream = rng.standard_normal((2, 3, 1)), rng.standard_normal((1, 2, 1))
    whole, steps = (_run(layer, x, h0, np.array([1, 2]), fused, upstream) for fused in (True, False))
    for got, want in zip(whole, steps):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)


def test_running_rows_are_the_longest_first():
    order, counts = running_rows(np.array([2, 5, 1, 5]), 4, 6)
    assert list(order) == [1, 3, 0, 2] and list(counts) == [4, 3, 2, 2, 2, 0]


def test_running_rows_of_unsigned_lengths_with_a_zero():
    # -lengths of an unsigned 0 is 0, the largest key: the decoder node would run the empty row
    order, counts = running_rows(np.array([0, 3, 1], np.uint8), 3, 3)
    assert list(order) == [1, 2, 0] and list(counts) == [2, 1, 1]
