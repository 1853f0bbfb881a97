"""Fused nodes: one graph node for a whole block, each equal to a composed graph of primitive ops.

Each node's forward and backward are written by hand over arrays (so a block costs one node,
not dozens, and can skip work a composed graph cannot), and each names the composed graph
(in tinyattn/nn, or tinyattn/models for the decoder) that it equals to 1e-10 in float64:

    node                                  the composed graph it equals
    sdpa.ScaledDotProductAttention        nn/sdpa.py, attention_composed
    additive_attention_node.              nn/additive_attention.py, additive_attention_composed
      AdditiveAttention
    recurrent_steps.GRUStep, LSTMStep     nn/gru.py, nn/lstm.py: the rules' `equations` (one step)
    gru_sequence.GRUSequence,             nn/recurrent.py, the step loop of RecurrentLayer._steps
      lstm_sequence.LSTMSequence
    attentive_decoder.AttentiveGRUDecoder models/seq2seq.py, the step loop of Decoder.teacher_forced_logits

(running_rows.py is the sorted, time-first layout the sequence nodes compute in.) Layers pick
these nodes through one switch, switch.py: `with ta.fused(False):` builds the composed graphs.
"""
