"""An LSTM layer's whole sequence, one direction, as one graph node that skips finished sentences.

The same idea as gru_sequence.py (read that one first): the sentences sorted longest first, and
step t computes only the n_t still running; a finished sentence keeps its (h, c), and reading
backwards a sentence's state stays at (h0, c0) until its last word. Outputs are zero where a
sentence has no word. Equal to the step-by-step graph nn/recurrent.py builds under
`ta.fused(False)` (composed_sequence with nn/lstm.py's LSTMRule equations) to 1e-10 in
float64 (tests/test_sequence_nodes.py and tests/test_one_form.py). Each step is
recurrent_steps.py's lstm_step on the running rows, the very arrays LSTMStep computes.

Backward runs the steps in the other order, carrying dL/dh and dL/dc of every row: a running
row's lstm_step_backward (the gate rules of ops/reference_blocks.py, then the hidden
projection's) gives d gates, and dL/dh and dL/dc before the step.
"""
import numpy as np

from ...autograd.function import Function
from .recurrent_steps import lstm_step, lstm_step_backward
from .running_rows import RunningRows


class LSTMSequence(Function):
    """forward(gi (B, T, 4H) = x W_ih^T + b_ih, h0 (B, H), c0 (B, H), weight_hh (4H, H),
    bias_hh (4H,) or None, lengths (B,) ints or None, reverse) -> (outputs (B, T, H), h_last, c_last).
    Equals nn.LSTM's step loop (nn/recurrent.py, composed_sequence: the outputs zeroed past each length)."""

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
            h[:n], c[:n], step = lstm_step(gi_sorted[t, :n], h_previous, c_previous, weight_hh, bias_hh, None)
            outputs[t, :n] = h[:n]
            saved[t] = h_previous, c_previous, step
        ctx.save_for_backward(weight_hh)
        ctx.rows, ctx.saved_steps, ctx.reverse, ctx.has_bias = rows, saved, reverse, bias_hh is not None
        return rows.batch_first(outputs), rows.unsorted(h), rows.unsorted(c)

    @staticmethod
    def backward(ctx, g_outputs, g_h_last, g_c_last):
        (weight_hh,) = ctx.saved_arrays
        rows = ctx.rows
        g_outputs_sorted = rows.time_first(g_outputs)
        g_h, g_c = rows.sorted(g_h_last), rows.sorted(g_c_last)  # carried back step by step (copies)
        d_gi = np.zeros(g_outputs_sorted.shape[:2] + (weight_hh.shape[0],), g_h.dtype)
        d_weight = np.zeros_like(weight_hh)
        d_bias = np.zeros(weight_hh.shape[0], g_h.dtype) if ctx.has_bias else None
        for t in rows.steps(not ctx.reverse):
            n = rows.counts[t]
            h_previous, c_previous, step = ctx.saved_steps[t]
            grad_h = g_h[:n] + g_outputs_sorted[t, :n]
            d_gi[t, :n], g_h[:n], g_c[:n], d_w, d_b = lstm_step_backward(grad_h, g_c[:n], h_previous, c_previous,
                                                                          weight_hh, step, ctx.has_bias, None)
            d_weight += d_w
            if d_bias is not None:
                d_bias += d_b
        return rows.batch_first(d_gi), rows.unsorted(g_h), rows.unsorted(g_c), d_weight, d_bias, None, None
