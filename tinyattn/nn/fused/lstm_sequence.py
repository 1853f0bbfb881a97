"""An LSTM layer's whole sequence, one direction, as one graph node that skips finished sentences.

The same idea as gru_sequence.py (read that one first): the sentences sorted longest first, and
step t computes only the n_t still running; a finished sentence keeps its (h, c), and reading
backwards a sentence's state stays at (h0, c0) until its last word. Outputs are zero where a
sentence has no word. Equal to the step-by-step graph nn/recurrent.py builds under
`ta.fused(False)` (_Layer._steps with _LSTMRule's equations) to 1e-10 in float64
(tests/test_sequence_nodes.py and tests/test_fused_switch.py).

Backward runs the steps in the other order, carrying dL/dh and dL/dc of every row: a running
row's pass through the gate rules (ops/reference_blocks.py, as LSTMStep) gives d gates, the
gradient of c before the step, and dL/dh before the step = d_gates W_hh.
"""
import numpy as np

from ...autograd.function import Function
from ...ops import arrays
from .running_rows import RunningRows


class LSTMSequence(Function):
    """forward(gi (B, T, 4H) = x W_ih^T + b_ih, h0 (B, H), c0 (B, H), weight_hh (4H, H),
    bias_hh (4H,) or None, lengths (B,) ints or None, reverse) -> (outputs (B, T, H), h_last, c_last).
    Equals nn.LSTM's step loop (nn/recurrent.py, _Layer._steps, with the outputs zeroed past each length)."""

    used_inside = (0,)  # each state makes the next

    @staticmethod
    def forward(ctx, gi, h0, c0, weight_hh, bias_hh, lengths, reverse):
        B, T, _ = gi.shape
        rows = RunningRows(lengths, B, T)
        gi_sorted = rows.time_first(gi)  # (T, B, 4H)
        h, c = rows.sorted(h0), rows.sorted(c0)  # copies: updated in place, row block by row block
        outputs = np.zeros((T, B, h0.shape[1]), gi.dtype)
        saved = [None] * T
        for t in rows.steps(reverse):
            n = rows.counts[t]
            h_previous, c_previous = h[:n].copy(), c[:n].copy()
            gates = gi_sorted[t, :n] + arrays.matmul(h_previous, weight_hh.T)
            if bias_hh is not None:
                gates += bias_hh
            h_new, c_new, i, f, g, o, tanh_c = arrays.lstm_gates(gates, c_previous, h_previous, None)
            h[:n] = outputs[t, :n] = h_new
            c[:n] = c_new
            saved[t] = h_previous, c_previous, i, f, g, o, tanh_c
        ctx.save_for_backward(weight_hh)
        ctx.rows, ctx.saved_steps, ctx.reverse, ctx.has_bias = rows, saved, reverse, bias_hh is not None
        return rows.batch_first(outputs), rows.unsorted(h), rows.unsorted(c)

    @staticmethod
    def backward(ctx, g_outputs, g_h_last, g_c_last):
        (weight_hh,) = ctx.saved_tensors
        rows = ctx.rows
        g_outputs_sorted = rows.time_first(g_outputs)
        g_h, g_c = rows.sorted(g_h_last), rows.sorted(g_c_last)  # carried back step by step (copies)
        d_gi = np.zeros(g_outputs_sorted.shape[:2] + (weight_hh.shape[0],), g_h.dtype)
        d_weight = np.zeros_like(weight_hh)
        d_bias = np.zeros(weight_hh.shape[0], g_h.dtype) if ctx.has_bias else None
        for t in rows.steps(not ctx.reverse):
            n = rows.counts[t]
            h_previous, c_previous, i, f, g, o, tanh_c = ctx.saved_steps[t]
            grad_h = g_h[:n] + g_outputs_sorted[t, :n]
            d_gates, g_c[:n], _ = arrays.lstm_gates_backward(grad_h, g_c[:n], c_previous, i, f, g, o, tanh_c, None)
            d_gi[t, :n] = d_gates
            g_h[:n] = arrays.matmul(d_gates, weight_hh)
            d_weight += arrays.matmul(d_gates.T, h_previous)
            if d_bias is not None:
                d_bias += arrays.sum_over(d_gates, (0,))
        return rows.batch_first(d_gi), rows.unsorted(g_h), rows.unsorted(g_c), d_weight, d_bias, None, None
