"""An LSTM layer's whole sequence, one direction, as one graph node that skips finished sentences.

The same idea as gru_sequence.py (read that one first): the sentences sorted longest first, and
step t computes only the n_t still running; a finished sentence keeps its (h, c), and reading
backwards a sentence's state stays at (h0, c0) until its last word. Outputs are zero where a
sentence has no word. Equal to the step-by-step graph (LSTMStep nodes) to 1e-10 in float64
(tests/test_sequence_nodes.py covers both kinds).

Backward runs the steps in the other order, carrying dL/dh and dL/dc of every row: a running
row's pass through the gate rules (ops/recurrent_gates.py, as LSTMStep) gives d gates, the
gradient of c before the step, and dL/dh before the step = d_gates W_hh.
"""
import numpy as np

from ..autograd.function import Function
from ..ops.matmul import matmul
from ..ops.recurrent_gates import lstm_gates, lstm_gates_backward
from ..ops.sums import sum_over
from .gru_sequence import running_rows


class LSTMSequence(Function):
    """forward(gi (B, T, 4H) = x W_ih^T + b_ih, h0 (B, H), c0 (B, H), weight_hh (4H, H),
    bias_hh (4H,) or None, lengths (B,) ints or None, reverse) -> (outputs (B, T, H), h_last, c_last)."""

    @staticmethod
    def forward(ctx, gi, h0, c0, weight_hh, bias_hh, lengths, reverse):
        B, T, _ = gi.shape
        H = h0.shape[1]
        order, counts = running_rows(lengths, B, T)
        gi_sorted = gi.transpose(1, 0, 2)[:, order]  # (T, B, 4H), longest first: one copy
        h, c = h0[order], c0[order]  # copies: updated in place, row block by row block
        outputs = np.zeros((T, B, H), gi.dtype)
        saved = [None] * T
        for t in (reversed(range(T)) if reverse else range(T)):
            n = counts[t]
            h_previous, c_previous = h[:n].copy(), c[:n].copy()
            gates = gi_sorted[t, :n] + matmul(h_previous, weight_hh.T)
            if bias_hh is not None:
                gates += bias_hh
            h_new, c_new, i, f, g, o, tanh_c = lstm_gates(gates, c_previous, h_previous, None)
            h[:n] = outputs[t, :n] = h_new
            c[:n] = c_new
            saved[t] = h_previous, c_previous, i, f, g, o, tanh_c
        ctx.save_for_backward(weight_hh, order, counts)
        ctx.saved_steps, ctx.reverse, ctx.has_bias = saved, reverse, bias_hh is not None
        unsort = np.argsort(order)
        return outputs.transpose(1, 0, 2)[unsort], h[unsort], c[unsort]

    @staticmethod
    def backward(ctx, g_outputs, g_h_last, g_c_last):
        weight_hh, order, counts = ctx.saved_tensors
        T = len(counts)
        g_outputs_sorted = g_outputs.transpose(1, 0, 2)[:, order]
        g_h, g_c = np.array(g_h_last[order], copy=True), np.array(g_c_last[order], copy=True)
        d_gi = np.zeros(g_outputs_sorted.shape[:2] + (weight_hh.shape[0],), g_h.dtype)
        d_weight = np.zeros_like(weight_hh)
        d_bias = np.zeros(weight_hh.shape[0], g_h.dtype) if ctx.has_bias else None
        for t in (range(T) if ctx.reverse else reversed(range(T))):
            n = counts[t]
            h_previous, c_previous, i, f, g, o, tanh_c = ctx.saved_steps[t]
            grad_h = g_h[:n] + g_outputs_sorted[t, :n]
            d_gates, g_c[:n], _ = lstm_gates_backward(grad_h, g_c[:n], c_previous, i, f, g, o, tanh_c, None)
            d_gi[t, :n] = d_gates
            g_h[:n] = matmul(d_gates, weight_hh)
            d_weight += matmul(d_gates.T, h_previous)
            if d_bias is not None:
                d_bias += sum_over(d_gates, (0,))
        unsort = np.argsort(order)
        return d_gi.transpose(1, 0, 2)[unsort], g_h[unsort], g_c[unsort], d_weight, d_bias, None, None
