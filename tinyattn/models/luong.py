"""Luong et al. 2015's global attention decoder ("Effective Approaches to Attention-based Neural
Machine Translation", https://arxiv.org/abs/1508.04025), on the same encoder as Seq2Seq.

Bahdanau's decoder attends with its previous state and feeds the context into the recurrence.
Luong's attends with the state it has just computed, and the context goes to the output:

    h_t     = GRUCell([embed(y_{t-1}); h~_{t-1}], h_{t-1})     input feeding: the last
                                                                attentional state goes back in
    a_t     = softmax(score(h_t, hbar_s))    over the encoder states hbar_1..m    (eq. 7)
    c_t     = sum_s a_t(s) hbar_s
    h~_t    = tanh(W_c [c_t; h_t])                               the attentional state (eq. 5)
    logits  = W_s h~_t                                           (eq. 6)

score (eq. 8): dot h_t . hbar_s; general h_t^T W_a hbar_s; concat v_a^T tanh(W_a [h_t; hbar_s])
(= the additive score of nn.Attention with the weight split in two). The dot score needs h_t
and hbar_s of one size, so the decoder state has the encoder states' size, 2 x hidden_size.
Luong et al. used stacked LSTMs; a GRU keeps this decoder beside Bahdanau's, which differs
from it only where the papers differ. Input feeding makes every step depend on the last
attentional state, so training runs the steps one by one (no fused node).
"""
import numpy as np

from ..autograd.rules_nn import cross_entropy
from ..autograd.rules_shape import cat, stack
from ..autograd.creation import zeros
from ..nn.attention import Attention
from ..nn.layers import Embedding, Linear
from ..nn.masks import padding_mask
from ..nn.module import Module
from ..nn.recurrent import GRUCell
from .seq2seq import Encoder
from .translator import Translator

LUONG_SCORES = {"dot": "dot", "general": "general", "concat": "additive"}


class LuongDecoder(Module):
    """One step of Luong's decoder: GRU cell with input feeding, attention, attentional state, output."""

    def __init__(self, vocab_size, embed_dim, size, pad_id, score="general"):
        super().__init__()
        if score not in LUONG_SCORES:
            raise ValueError(f"LuongDecoder: score {score!r}; Luong's scores are {', '.join(LUONG_SCORES)}")
        self.score = score
        self.embedding = Embedding(vocab_size, embed_dim, padding_idx=pad_id)
        self.cell = GRUCell(embed_dim + size, size)
        self.attention = Attention(size, size, score=LUONG_SCORES[score], hidden_size=size)
        self.combine = Linear(2 * size, size, bias=False)   # W_c
        self.out = Linear(size, vocab_size)                 # W_s

    def step(self, embedded, h, feed, keys, encoder_states, mask):
        """(logits (B, V), h_t, h~_t, weights (B, S)) for one target word."""
        h = self.cell(cat([embedded, feed], axis=-1), h)
        B, D = h.shape
        context, weights = self.attention(h.reshape(B, 1, D), keys, encoder_states, mask=mask)
        attentional = self.combine(cat([context.reshape(B, D), h], axis=-1)).tanh()
        return self.out(attentional), h, attentional, weights.reshape(B, weights.shape[2])


class LuongSeq2Seq(Translator):
    """BiGRU encoder (as Seq2Seq's) + LuongDecoder; score "dot", "general" or "concat"."""

    def __init__(self, source_vocab, target_vocab, *, pad_id, bos_id, eos_id, embed_dim=32, hidden_size=64,
                 score="general"):
        super().__init__()
        self.pad_id, self.bos_id, self.eos_id = pad_id, bos_id, eos_id
        self.encoder = Encoder(source_vocab, embed_dim, hidden_size, 2 * hidden_size, pad_id)
        self.decoder = LuongDecoder(target_vocab, embed_dim, 2 * hidden_size, pad_id, score)

    def begin(self, source, lengths):
        """memory: (encoder states, their keys, padding mask); state: h and the fed-back h~ (zero at first)."""
        lengths = np.asarray(lengths)
        encoder_states, h = self.encoder(source, lengths)
        memory = (encoder_states, self.decoder.attention.precompute_keys(encoder_states),
                  padding_mask(lengths, source.shape[1]))
        return memory, {"h": h, "feed": zeros(*h.shape, dtype=h.dtype)}

    def advance(self, tokens, memory, state):
        """One step for the previous words (N,): (logits (N, V), {"h", "feed"}, weights (N, S))."""
        encoder_states, keys, mask = memory
        logits, h, feed, weights = self.decoder.step(self.decoder.embedding(tokens), state["h"], state["feed"],
                                                     keys, encoder_states, mask)
        return logits, {"h": h, "feed": feed}, weights

    def loss(self, source, lengths, target):
        """Mean cross-entropy of predicting target[:, 1:] from target[:, :-1], step by step (padding
        ignored; the steps stop after the longest sentence's last word)."""
        memory, state = self.begin(source, lengths)
        steps = int((target[:, 1:] != self.pad_id).sum(axis=1).max())
        logits = []
        for t in range(steps):
            step_logits, state, _ = self.advance(target[:, t], memory, state)
            logits.append(step_logits)
        return cross_entropy(stack(logits, axis=1), target[:, 1:steps + 1], ignore_index=self.pad_id)
