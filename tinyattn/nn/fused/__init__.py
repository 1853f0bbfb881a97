"""Fused nodes: one graph node for a whole block, each equal to a composed graph of primitive ops.

Each node's forward and backward are written by hand over arrays (so a block costs one node,
not dozens, and can skip work a composed graph cannot), and each equals its block's reference,
the composed graph (in tinyattn/nn, or tinyattn/models for the decoder), to 1e-10 in float64:

    block (ops/blocks.py)  node                                   its reference, the composed graph
    attention              dot_product_attention_node.            nn/scaled_dot_product_attention.py,
                             ScaledDotProductAttention              attention_composed
    additive_attention     additive_attention_node.               nn/additive_attention.py,
                             AdditiveAttention                      additive_attention_composed
    recurrent_step         recurrent_steps.GRUStep, LSTMStep      nn/recurrent.py, composed_step
                                                                    (nn/recurrent.py: the rules' equations)
    recurrent_sequence     gru_sequence.GRUSequence,              nn/recurrent.py, composed_sequence
                             lstm_sequence.LSTMSequence
    attentive_decoder      attentive_decoder.AttentiveGRUDecoder  models/seq2seq.py, composed_decoder
    causal_attention       dot_product_attention_node.            models/gpt.py, causal_attention_composed
                             ScaledDotProductAttention              (the GPT's, nanoGPT's manual lines)

(running_rows.py is the sorted, time-first layout the sequence nodes compute in.) This file puts
each node in the blocks table (ops/blocks.py); the layers never import it, and under
`ta.fused(False)` the table holds the references instead. Where a block has no node for its
arguments (the Elman RNN's step and sequence: a node gained too little; a decoder without
additive attention) the entry hands on to the reference.
"""
from ...ops import blocks
from ..recurrent import GRURule, LSTMRule
from ..masks import attention_mask, causal_mask, dropout_mask
from ..scaled_dot_product_attention import Attended, attention_scale
from .additive_attention_node import AdditiveAttention
from .attentive_decoder import AttentiveGRUDecoder
from .dot_product_attention_node import ScaledDotProductAttention
from .gru_sequence import GRUSequence
from .lstm_sequence import LSTMSequence
from .recurrent_steps import GRUStep, LSTMStep


def attention_node(q, k, v, mask, scale, bias=None, keep=None):
    """-> Attended(output, weights, None): inside the node the scores are no Tensor."""
    return Attended(*ScaledDotProductAttention.apply(q, k, v, mask, scale, bias, keep), None)


def causal_attention_node(q, k, v, attn_dropout):
    """The GPT's causal self-attention as the attention node: q's T positions after k's first S - T,
    the weights' dropout drawn as the reference's attn_dropout draws it (same generator, same shape)."""
    T, S = q.shape[-2], k.shape[-2]
    p = attn_dropout.p if attn_dropout.training else 0.0
    keep = dropout_mask(q.shape[:-1] + (S,), p, q.dtype) if p else None
    mask, scale = causal_mask(T, S - T), attention_scale(k.shape[-1])
    return ScaledDotProductAttention.apply(q, k, v, mask, scale, None, keep)[0]  # the output, not the weights


def recurrent_step_node(rule, gi, state, weight_hh, bias_hh, keep):
    """One GRU or LSTM step as one node; another rule's step as its reference."""
    if isinstance(rule, GRURule):
        return GRUStep.apply(gi, state, weight_hh, bias_hh, keep)
    if isinstance(rule, LSTMRule):
        return LSTMStep.apply(gi, *state, weight_hh, bias_hh, keep)
    return blocks.reference("recurrent_step")(rule, gi, state, weight_hh, bias_hh, keep)


def additive_attention_fused(query, W, projected_keys, v, values, mask):
    """One additive attention step as one node (additive_attention_node.py). Looked up at each call,
    not bound at import, so that ta.compile's capture sees it pass Function.apply."""
    return AdditiveAttention.apply(query, W, projected_keys, v, values, mask)


def recurrent_sequence_node(rule, gi, state, weight_hh, bias_hh, lengths, keeps, reverse):
    """A GRU or LSTM layer's direction as one node, which skips the sequences that have ended (its
    outputs are zero past each length, as the reference's); another rule's as its reference."""
    if isinstance(rule, GRURule):
        return GRUSequence.apply(gi, state, weight_hh, bias_hh, lengths, reverse)
    if isinstance(rule, LSTMRule):
        output, h, c = LSTMSequence.apply(gi, *state, weight_hh, bias_hh, lengths, reverse)
        return output, (h, c)
    return blocks.reference("recurrent_sequence")(rule, gi, state, weight_hh, bias_hh, lengths, keeps, reverse)


def attentive_decoder_node(decoder, embedded, state, keys, encoder_states, mask, lengths):
    """A Seq2Seq decoder with additive attention, every teacher-forced step, as one node ->
    (states, contexts); another decoder as its reference."""
    attention = decoder.attention if decoder.attention_kind else None
    if attention is None or attention.score != "additive":
        return blocks.reference("attentive_decoder")(decoder, embedded, state, keys, encoder_states, mask, lengths)
    cell = decoder.cell
    return AttentiveGRUDecoder.apply(
        embedded, state, attention.precompute_keys(keys).projected, encoder_states, attention.W.weight,
        attention.v.weight, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh,
        attention_mask(mask, (state.shape[0], 1, encoder_states.shape[1]), "Decoder"), lengths)


blocks.register_fused("attention", attention_node)
blocks.register_fused("additive_attention", additive_attention_fused)
blocks.register_fused("recurrent_step", recurrent_step_node)
blocks.register_fused("recurrent_sequence", recurrent_sequence_node)
blocks.register_fused("attentive_decoder", attentive_decoder_node)
blocks.register_fused("causal_attention", causal_attention_node)
