"""nn.GRU's and nn.LSTM's whole-sequence nodes (nn/fused/gru_sequence.py, nn/fused/lstm_sequence.py)
equal the step-by-step graph they replace."""
import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
from tinyattn.nn.fused.running_rows import RunningRows


def _run(layer, x, states, lengths, fused, upstream):
    """Outputs, final states and every gradient, for a random upstream gradient on every output."""
    layer.zero_grad()
    xt = ta.tensor(x, requires_grad=True)
    initial = [ta.tensor(s, requires_grad=True) for s in states]  # [h0] or [h0, c0]
    with ta.fused(fused):
        out, final = layer(xt, initial[0] if len(initial) == 1 else tuple(initial), lengths=lengths)
    final = [final] if len(initial) == 1 else list(final)
    loss = (out * ta.tensor(upstream[0])).sum()
    for tensor, weights in zip(final, upstream[1:]):
        loss = loss + (tensor * ta.tensor(weights)).sum()
    loss.backward()
    return ([out.data, xt.grad] + [t.data for t in final] + [t.grad for t in initial]
            + [p.grad for p in layer.parameters()])


@pytest.mark.parametrize("cls", [nn.GRU, nn.LSTM], ids=["GRU", "LSTM"])
@pytest.mark.parametrize("lengths", [None, [6, 1, 3, 6], [2, 4, 1, 3]], ids=["no lengths", "mixed", "all shorter than T"])
@pytest.mark.parametrize("bias", [True, False])
def test_the_sequence_node_gives_the_step_by_step_answer_and_gradients(cls, lengths, bias, rng):
    layer = cls(3, 5, bidirectional=True, bias=bias, batch_first=True).double()
    n_states = 2 if cls is nn.LSTM else 1
    x, states = rng.standard_normal((4, 6, 3)), [rng.standard_normal((2, 4, 5)) for _ in range(n_states)]
    upstream = [rng.standard_normal((4, 6, 10))] + [rng.standard_normal((2, 4, 5)) for _ in range(n_states)]
    lengths = None if lengths is None else np.array(lengths)
    whole, steps = (_run(layer, x, states, lengths, fused, upstream) for fused in (True, False))
    for got, want in zip(whole, steps):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)


def test_the_sequence_node_gradchecks_with_padding_both_ways(rng):
    layer = nn.GRU(2, 3, bidirectional=True, batch_first=True).double()
    x = ta.tensor(rng.standard_normal((3, 4, 2)), requires_grad=True)
    h0 = ta.tensor(rng.standard_normal((2, 3, 3)), requires_grad=True)
    lengths = np.array([4, 1, 2])
    assert ta.gradcheck(lambda x, h0, *p: layer(x, h0, lengths=lengths), (x, h0, *layer.parameters()))


def test_the_lstm_sequence_node_gradchecks_with_padding_both_ways(rng):
    layer = nn.LSTM(2, 3, bidirectional=True, batch_first=True).double()
    x = ta.tensor(rng.standard_normal((3, 4, 2)), requires_grad=True)
    h0, c0 = (ta.tensor(rng.standard_normal((2, 3, 3)), requires_grad=True) for _ in range(2))
    lengths = np.array([4, 1, 2])

    def run(x, h0, c0, *params):
        out, (h_n, c_n) = layer(x, (h0, c0), lengths=lengths)
        return out, h_n, c_n
    assert ta.gradcheck(run, (x, h0, c0, *layer.parameters()))


def test_hidden_size_one_with_steps_where_no_sentence_runs(rng):
    # (0, 1) @ (1, 3) at the last step: an empty outer product
    layer = nn.GRU(2, 1, batch_first=True).double()
    x, h0 = rng.standard_normal((2, 3, 2)), rng.standard_normal((1, 2, 1))
    upstream = rng.standard_normal((2, 3, 1)), rng.standard_normal((1, 2, 1))
    whole, steps = (_run(layer, x, [h0], np.array([1, 2]), fused, upstream) for fused in (True, False))
    for got, want in zip(whole, steps):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)


def test_running_rows_are_the_longest_first():
    rows = RunningRows(np.array([2, 5, 1, 5]), 4, 6)
    assert list(rows.order) == [1, 3, 0, 2] and list(rows.counts) == [4, 3, 2, 2, 2, 0]
    x = np.arange(4 * 6).reshape(4, 6)
    np.testing.assert_array_equal(rows.unsorted(rows.sorted(x)), x)
    np.testing.assert_array_equal(rows.batch_first(rows.time_first(x)), x)
    assert list(rows.time_first(x)[0]) == [6, 18, 0, 12] and list(rows.steps(reverse=True))[0] == 5


def test_running_rows_of_unsigned_lengths_with_a_zero():
    # -lengths of an unsigned 0 is 0, the largest key: the decoder node would run the empty row
    rows = RunningRows(np.array([0, 3, 1], np.uint8), 3, 3)
    assert list(rows.order) == [1, 2, 0] and list(rows.counts) == [2, 1, 1]
