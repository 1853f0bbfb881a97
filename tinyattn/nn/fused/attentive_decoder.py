"""A GRU decoder with additive attention over every step of a known target, as one graph node.

While training with teacher forcing, the decoder's input at step t is the true word t, known
in advance, so the whole loop over the target can be one Function. At each step t, with s the
decoder state (Bahdanau et al. 2015, section 3.1 and appendix A):

    context_t = additive attention of the query s over the encoder states (v^T tanh(W s + U k))
    s         = GRU([embedded_t; context_t], s)

and the node returns every state and every context. The readable version is the same loop of
graph nodes (models/seq2seq.py, composed_decoder under `ta.fused(False)`: per step
nn/additive_attention.py's composed attention and the GRU cell's equations), which this one
equals to 1e-10 in float64 (tests/test_attentive_decoder.py, tests/test_fused_switch.py). What makes it fast
(benchmarks/RESULTS.md, "Bahdanau decoder, 18 steps, lengths (AttentiveGRUDecoder)"):

  * it skips work: given how many steps each sentence needs (the loss ignores the padding
    after its last word), the rows are sorted longest first and step t computes only the
    n_t sentences still running, as nn.GRU's node does (gru_sequence.py);
  * one node instead of ~8 per step: no per-step bookkeeping, no graph walk through them;
  * the two products that read the state, W s and W_hh s, are one product with [W; W_hh];
  * the input projection of the words runs once for all steps; only the context's part runs
    per step, and no [embedded; context] is ever copied together;
  * the weight gradients are sums over steps, so the backward keeps each step's gradient
    and forms each sum with one big product at the end instead of one small product per step;
  * the gradients of the encoder states and of U k, used at every step, add up in one buffer.

Backward through time runs the steps in reverse. With g_s the gradient reaching the state
after step t (from the output layer and from step t + 1):

    d_gi, d_gh, ds_direct = the GRU gate rules (ops/reference_blocks.py, gru_gates_backward)
    d_context = g_context_t + d_gi W_ic                (W_ic: the context's columns of W_ih)
    d_wq, d_uk, d_v, d_values = the attention step's rules (ops/additive_attention_arrays.py)
    g_s for step t - 1 = ds_direct + [d_wq, d_gh] [W; W_hh]
"""
import numpy as np

from ...autograd.function import Function
from ...ops.additive_attention_arrays import additive_attention, additive_attention_backward
from ...ops import arrays
from .running_rows import RunningRows


class AttentiveGRUDecoder(Function):
    """forward(embedded (B, T, E), state (B, H), projected_keys U k (B, S, h), values (B, S, Dv),
    W (h, H), v (1, h), weight_ih (3H, E + Dv), weight_hh (3H, H), bias_ih, bias_hh (3H,) or None,
    mask bool broadcasting to (B, 1, S) or None, lengths (B,) ints or None) -> (states (B, T, H),
    contexts (B, T, Dv)): the state after each step and the context read at each step.

    lengths: how many steps each sentence needs (None: all T). The steps after are not computed
    (their states and contexts are zeros): the rows are sorted longest first and step t works on
    the first n_t only, as nn.GRU does (gru_sequence.py). Equals the step loop of
    composed_decoder (models/seq2seq.py), which also leaves zeros past each length."""

    used_inside = (0, 1)  # each state makes the next, each context the state after it

    @staticmethod
    def forward(ctx, embedded, state, projected_keys, values, W, v, weight_ih, weight_hh, bias_ih, bias_hh, mask,
                lengths):
        B, T, E = embedded.shape
        H, h, Dv = state.shape[1], W.shape[0], values.shape[2]
        rows = RunningRows(lengths, B, T)
        keys, values = rows.sorted(projected_keys), rows.sorted(values)
        mask = None if mask is None else rows.sorted(np.broadcast_to(mask, (B, 1, keys.shape[1])))
        words_part, context_part = weight_ih[:, :E], weight_ih[:, E:]
        words = rows.time_first(embedded).reshape(T * B, E)  # time first, sorted (a fresh copy)
        word_inputs = arrays.matmul(words, words_part.T).reshape(T, B, 3 * H)  # all steps in one product
        if bias_ih is not None:
            word_inputs += bias_ih
        reads_state = np.concatenate([W, weight_hh])  # (h + 3H, H): W s and W_hh s in one product
        states = np.zeros((T + 1, B, H), state.dtype)  # time first: the running rows are contiguous
        contexts = np.zeros((T, B, Dv), state.dtype)
        states[0] = rows.sorted(state)
        steps = [None] * T  # what each step's backward needs
        for t in rows.steps():
            n = rows.counts[t]
            if n == 0:
                break
            previous = states[t, :n]
            from_state = arrays.matmul(previous, reads_state.T)
            wq, gh = from_state[:, :h], from_state[:, h:]
            gh = gh + bias_hh if bias_hh is not None else np.ascontiguousarray(gh)
            context, weights, hidden = additive_attention(wq.reshape(n, 1, h), keys[:n], v[0], values[:n],
                                                          None if mask is None else mask[:n])
            contexts[t, :n] = context.reshape(n, Dv)
            gi = word_inputs[t, :n] + arrays.matmul(contexts[t, :n], context_part.T)
            states[t + 1, :n], r, z, candidate = arrays.gru_gates(gi, gh, previous, None)
            steps[t] = weights, hidden, r, z, candidate, gh
        ctx.save_for_backward(words, keys, values, v, weight_ih, reads_state, states, contexts)
        ctx.rows, ctx.steps = rows, steps
        ctx.has_bias = bias_ih is not None, bias_hh is not None
        return rows.batch_first(states[1:]), rows.batch_first(contexts)

    @staticmethod
    def backward(ctx, g_states, g_contexts):
        words, keys, values, v, weight_ih, reads_state, states, contexts = ctx.saved_arrays
        rows = ctx.rows
        T, B, H = contexts.shape[0], states.shape[1], states.shape[2]
        E, h = words.shape[1], reads_state.shape[0] - 3 * H
        context_part = weight_ih[:, E:]
        g_states, g_contexts = rows.time_first(g_states), rows.time_first(g_contexts)
        d_inputs = np.zeros((T, B, 3 * H), states.dtype)         # d gi at each step
        d_from_state = np.zeros((T, B, h + 3 * H), states.dtype)  # d [W s, W_hh s] at each step
        d_keys, d_values = np.zeros_like(keys), np.zeros_like(values)
        d_v = np.zeros(h, states.dtype)
        g_state = np.zeros((B, H), states.dtype)  # from step t + 1
        for t in rows.steps(reverse=True):
            n = rows.counts[t]
            if n == 0:
                continue
            weights, hidden, r, z, candidate, gh = ctx.steps[t]
            g_new = g_state[:n] + g_states[t, :n]
            d_gi, d_gh, g_direct = arrays.gru_gates_backward(g_new, states[t, :n], r, z, candidate, gh, None)
            d_context = g_contexts[t, :n] + arrays.matmul(d_gi, context_part)
            d_wq, d_uk, d_v_t, d_values_t = additive_attention_backward(
                d_context.reshape(n, 1, -1), None, weights, hidden, v[0], values[:n])
            d_keys[:n] += d_uk
            d_values[:n] += d_values_t
            d_v += d_v_t
            d_inputs[t, :n] = d_gi
            d_from_state[t, :n, :h] = d_wq.reshape(n, h)
            d_from_state[t, :n, h:] = d_gh
            g_state[:n] = g_direct + arrays.matmul(d_from_state[t, :n], reads_state)
        # The weight gradients: sums over steps of (gradient at step t)^T (input at step t); a row
        # that did not run at a step has zero gradient there.
        d_inputs_rows, d_from_state_rows = d_inputs.reshape(T * B, 3 * H), d_from_state.reshape(T * B, h + 3 * H)
        d_weight_ih = np.concatenate([arrays.matmul(d_inputs_rows.T, words),
                                      arrays.matmul(d_inputs_rows.T, contexts.reshape(T * B, -1))], axis=1)
        d_reads_state = arrays.matmul(d_from_state_rows.T, states[:-1].reshape(T * B, H))
        d_embedded = arrays.matmul(d_inputs_rows, weight_ih[:, :E]).reshape(T, B, E)
        has_bias_ih, has_bias_hh = ctx.has_bias
        return (rows.batch_first(d_embedded), rows.unsorted(g_state), rows.unsorted(d_keys), rows.unsorted(d_values),
                d_reads_state[:h], d_v.reshape(v.shape), d_weight_ih, d_reads_state[h:],
                arrays.sum_over(d_inputs_rows, (0,)) if has_bias_ih else None,
                arrays.sum_over(d_from_state_rows[:, h:], (0,)) if has_bias_hh else None, None, None)
