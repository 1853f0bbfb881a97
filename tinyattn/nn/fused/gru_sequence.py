"""A GRU layer's whole sequence, one direction, as one graph node that skips finished sentences.

nn.GRU over a padded batch with `lengths` gives, at every step t, the GRU step
(recurrent_steps.py) to the sentences still running and leaves the others' states as they
are (a finished sentence keeps its last state; read backwards, a sentence's state stays at h0
until its last word). Step by step that is one graph node per step, and each node still
computes every row, finished or not. This node sorts the sentences longest first, so that at
step t the running ones are the first n_t rows, and computes only those: what PyTorch's
packed sequences do. With the translation model's batches, whose sentences average about half
of the longest, that is about half the work (a layer of T = 30 with lengths against the composed
steps: benchmarks/RESULTS.md, "GRU layer T=30, lengths").

The answer is the step-by-step one, the composed graph nn/recurrent.py builds under
`ta.fused(False)` (composed_sequence: one GRURule step, nn/gru.py, and one where() per
step; equal to 1e-10 in float64, tests/test_sequence_nodes.py and tests/test_one_form.py):
outputs (B, T, H) with zeros where a sentence has no word, and the last state of each sentence.
Each step is recurrent_steps.py's gru_step on the running rows, the very arrays GRUStep computes.

Backward runs the steps in the other order. The gradient reaching the state of a running row
is that of its output plus that from the next step; it goes back through gru_step_backward (the
gate rules of ops/reference_blocks.py, then gh = h W_hh^T + b_hh). A row not running at a step
passes its gradient through unchanged, as its state does.
"""
import numpy as np

from ...autograd.function import Function
from .recurrent_steps import gru_step, gru_step_backward
from .running_rows import RunningRows


class GRUSequence(Function):
    """forward(gi (B, T, 3H) = x W_ih^T + b_ih, h0 (B, H), weight_hh (3H, H), bias_hh (3H,) or None,
    lengths (B,) ints or None, reverse) -> (outputs (B, T, H), last state (B, H)).
    Equals nn.GRU's step loop (nn/recurrent.py, composed_sequence: the outputs zeroed past each length)."""

    used_inside = (0,)  # each state makes the next

    @staticmethod
    def forward(ctx, gi, h0, weight_hh, bias_hh, lengths, reverse):
        B, T, _ = gi.shape
        rows = RunningRows(lengths, B, T)
        gi_sorted = rows.time_first(gi)  # (T, B, 3H)
        state = rows.sorted(h0)  # a copy: updated in place, row block by row block
        outputs = np.zeros((T, B, h0.shape[1]), gi.dtype)
        saved = [None] * T
        for t in rows.steps(reverse):
            n = rows.counts[t]
            previous = state[:n].copy()
            new, step = gru_step(gi_sorted[t, :n], previous, weight_hh, bias_hh, None)
            state[:n] = outputs[t, :n] = new
            saved[t] = previous, step
        ctx.save_for_backward(weight_hh)
        ctx.rows, ctx.saved_steps, ctx.reverse, ctx.has_bias = rows, saved, reverse, bias_hh is not None
        return rows.batch_first(outputs), rows.unsorted(state)

    @staticmethod
    def backward(ctx, g_outputs, g_last):
        (weight_hh,) = ctx.saved_arrays
        rows = ctx.rows
        g_outputs_sorted = rows.time_first(g_outputs)
        g_state = rows.sorted(g_last)  # dL/d(the state), carried back step by step (a copy)
        d_gi = np.zeros(g_outputs_sorted.shape[:2] + (weight_hh.shape[0],), g_last.dtype)
        d_weight = np.zeros_like(weight_hh)
        d_bias = np.zeros(weight_hh.shape[0], g_last.dtype) if ctx.has_bias else None
        for t in rows.steps(not ctx.reverse):
            n = rows.counts[t]
            previous, step = ctx.saved_steps[t]
            g_new = g_state[:n] + g_outputs_sorted[t, :n]
            d_gi[t, :n], g_state[:n], d_w, d_b = gru_step_backward(g_new, previous, weight_hh, step, ctx.has_bias, None)
            d_weight += d_w
            if d_bias is not None:
                d_bias += d_b
        return rows.batch_first(d_gi), rows.unsorted(g_state), d_weight, d_bias, None, None
