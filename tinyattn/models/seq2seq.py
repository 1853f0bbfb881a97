"""Encoder-decoder RNN with attention (Bahdanau et al. 2015; Luong et al. 2015).

    encoder:  states_1..m = BiGRU(embed(source))              kept, all of them
    decoder step t, with s the decoder state and y the previous target word:
        weights  = softmax(score(s, states))                   "which source words matter now"
        context  = weights @ states                            refreshed at every step
        s        = GRUCell([embed(y); context], s)
        logits   = Linear([s; context; embed(y)])

With attention=None the decoder gets no context (the classic seq2seq: the whole sentence must
pass through the encoder's final state), which is the baseline the translation demo beats.
"""
import numpy as np

from ..autograd.rules_shape import cat, stack, unbind
from ..autograd.tensor import wrap
from ..autograd.rules_nn import cross_entropy
from ..nn.attention import Attention
from ..nn.layers import Embedding, Linear
from ..nn.masks import padding_mask, real_positions
from ..ops import blocks
from ..nn.module import Module
from ..nn.recurrent import GRU, GRUCell
from .translator import Translator


class Encoder(Module):
    """Embedding + bidirectional GRU; returns every state (B, S, 2H) and an initial decoder state."""

    def __init__(self, vocab_size, embed_dim, hidden_size, decoder_size, pad_id):
        super().__init__()
        self.embedding = Embedding(vocab_size, embed_dim, padding_idx=pad_id)
        self.rnn = GRU(embed_dim, hidden_size, batch_first=True, bidirectional=True)
        self.bridge = Linear(2 * hidden_size, decoder_size)

    def forward(self, source, lengths):
        states, h_n = self.rnn(self.embedding(source), lengths=lengths)  # h_n (2, B, H)
        last = cat([h_n[0], h_n[1]], axis=-1)                             # both directions' summaries
        return states, self.bridge(last).tanh()


class Decoder(Module):
    """A GRU cell that attends over the encoder states before each step (or not, attention=None).

    teacher_forced_logits runs its steps as the block `attentive_decoder` (ops/blocks.py): with
    the additive score, one graph node (nn/fused/attentive_decoder.py); under `ta.fused(False)`
    (or with another score) the step-by-step graph that node equals, composed_decoder below.
    """

    def __init__(self, vocab_size, embed_dim, hidden_size, encoder_size, pad_id, attention="additive"):
        super().__init__()
        self.attention_kind = attention
        self.embedding = Embedding(vocab_size, embed_dim, padding_idx=pad_id)
        context_size = encoder_size if attention else 0
        if attention in ("dot", "scaled_dot", "cosine"):
            # these scores compare vectors of one size: the keys are the encoder states brought
            # to the decoder's size (computed once per sentence), the values stay as they are
            self.key_proj = Linear(encoder_size, hidden_size, bias=False)
            self.attention = Attention(hidden_size, hidden_size, score=attention)
        elif attention:
            self.attention = Attention(hidden_size, encoder_size, score=attention, hidden_size=hidden_size)
        self.cell = GRUCell(embed_dim + context_size, hidden_size)
        self.out = Linear(hidden_size + context_size + embed_dim, vocab_size)

    def keys(self, encoder_states):
        """What the decoder's state is compared with, computed once per batch: the encoder states,
        projected where the score needs it (attention.precompute_keys: U k for the additive score)."""
        if self.attention_kind is None:
            return None
        keys = self.key_proj(encoder_states) if "key_proj" in self._modules else encoder_states
        return self.attention.precompute_keys(keys)

    def attend(self, state, keys, encoder_states, mask):
        """(context (B, 2H), weights (B, S)): the state (B, H) as the one query of each sentence."""
        B, H = state.shape
        context, weights = self.attention(state.reshape(B, 1, H), keys, encoder_states, mask=mask)
        return context.reshape(B, context.shape[2]), weights

    def step(self, embedded, state, keys, encoder_states, mask):
        """One step: (logits (B, V), new state, attention weights (B, S) or None)."""
        if self.attention_kind is None:
            state = self.cell(embedded, state)
            return self.out(cat([state, embedded], axis=-1)), state, None
        context, weights = self.attend(state, keys, encoder_states, mask)
        state = self.cell(cat([embedded, context], axis=-1), state)
        return self.out(cat([state, context, embedded], axis=-1)), state, weights.reshape(weights.shape[0], weights.shape[2])

    def teacher_forced_logits(self, embedded, state, keys, encoder_states, mask, lengths=None):
        """Logits (B, T, V) for every step of embedded (B, T, E) (the true previous words): the
        steps as in `step`, but the output layer, which feeds nothing back, runs once on all of them.

        lengths (B,): how many steps each sentence needs. The fused decoder skips the rest, so on
        both paths state and context are zeros past each length (logits out([0; 0; embedded]))."""
        features = blocks.attentive_decoder(self, embedded, state, keys, encoder_states, mask, lengths)
        return self.out(cat([*features, embedded], axis=-1))


def composed_decoder(decoder, embedded, state, keys, encoder_states, mask, lengths):
    """The block `attentive_decoder`'s reference: Decoder.step's state and context at every step,
    (states (B, T, H), contexts (B, T, Dv)) (only states without attention), zeros past each length."""
    states, contexts = [], []
    for word in unbind(embedded, axis=1):
        if decoder.attention_kind is None:
            state = decoder.cell(word, state)
        else:
            context, _ = decoder.attend(state, keys, encoder_states, mask)
            contexts.append(context)
            state = decoder.cell(cat([word, context], axis=-1), state)
        states.append(state)
    features = [stack(states, axis=1)] + ([stack(contexts, axis=1)] if contexts else [])
    if lengths is not None:  # zeros past each length, as the fused node leaves them
        running = wrap(real_positions(lengths, embedded.shape[1])[..., None].astype(embedded.dtype))
        features = [f * running for f in features]
    return tuple(features)


blocks.register_reference("attentive_decoder", composed_decoder)


class Seq2Seq(Translator):
    """Bahdanau's decoder (attention="additive") or none (attention=None), or another score.

    Trained with teacher forcing (loss); decoded greedily or by beam search (Translator.decode).

    pad_id, bos_id, eos_id: the vocabularies' padding, start and end tokens (both sides share them).
    """

    def __init__(self, source_vocab, target_vocab, *, pad_id, bos_id, eos_id, embed_dim=32, hidden_size=64,
                 attention="additive"):
        super().__init__()
        self.pad_id, self.bos_id, self.eos_id = pad_id, bos_id, eos_id
        self.encoder = Encoder(source_vocab, embed_dim, hidden_size, hidden_size, pad_id)
        self.decoder = Decoder(target_vocab, embed_dim, hidden_size, 2 * hidden_size, pad_id, attention)

    def loss(self, source, lengths, target):
        """Mean cross-entropy of predicting target[:, 1:] from target[:, :-1] (padding ignored)."""
        lengths = np.asarray(lengths)
        encoder_states, state = self.encoder(source, lengths)
        keys = self.decoder.keys(encoder_states)
        mask = padding_mask(lengths, source.shape[1])  # (B, 1, S): the one query sees each real word
        embedded = self.decoder.embedding(target[:, :-1])
        scored = target[:, 1:] != self.pad_id  # the words the loss reads; the decoder can stop after each row's last
        needed = np.where(scored.any(axis=1), scored.shape[1] - np.argmax(scored[:, ::-1], axis=1), 0)
        logits = self.decoder.teacher_forced_logits(embedded, state, keys, encoder_states, mask, needed)
        return cross_entropy(logits, target[:, 1:], ignore_index=self.pad_id)

    def begin(self, source, lengths):
        """memory: (encoder states, their keys, padding mask); state: {"h": the decoder's state}."""
        lengths = np.asarray(lengths)
        encoder_states, state = self.encoder(source, lengths)
        return (encoder_states, self.decoder.keys(encoder_states), padding_mask(lengths, source.shape[1])), {"h": state}

    def advance(self, tokens, memory, state):
        """One decoder step for the previous words `tokens` (N,): (logits (N, V), state, weights (N, S) or None)."""
        encoder_states, keys, mask = memory
        logits, h, weights = self.decoder.step(self.decoder.embedding(tokens), state["h"], keys, encoder_states, mask)
        return logits, {"h": h}, weights
