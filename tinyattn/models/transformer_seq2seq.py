"""A Transformer translator (Vaswani et al. 2017): nn.Transformer between embeddings and a Linear.

    memory = Transformer.encoder(embed(source) + PE)                     every source word reads every other
    out_t  = Transformer.decoder(embed(target_<t) + PE, memory)          causal: word t sees words < t,
                                                                        and all of memory (cross-attention)
    logits = Linear(out_t)

No recurrence: training computes every target position at once under the causal mask
(`loss`); decoding (`advance`) runs the decoder again on the whole prefix written so far and
keeps the last position, which gives the same logits (tested) at the cost of recomputing the
prefix, O(T^2) per sentence, cheap at these lengths. The attention shown for a step is the
last decoder layer's cross-attention, averaged over its heads.
"""

import numpy as np

from ..autograd.ops_nn import cross_entropy
from ..nn.attention import PositionalEncoding
from ..nn.linear import Embedding, Linear
from ..nn.masks import causal_mask, real_positions
from ..nn.multihead import keep_attention_weights
from ..nn.transformer_model import Transformer
from .translator import Translator


class TransformerSeq2Seq(Translator):
    """Embeddings + sinusoidal positions, nn.Transformer (pre-norm by default), a Linear to the vocabulary."""

    def __init__(self, source_vocab, target_vocab, *, pad_id, bos_id, eos_id, d_model=64, nhead=4,
                 num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=128, dropout=0.0, norm_first=True,
                 max_len=128):
        super().__init__()
        self.pad_id, self.bos_id, self.eos_id = pad_id, bos_id, eos_id
        self.source_embedding = Embedding(source_vocab, d_model, padding_idx=pad_id)
        self.target_embedding = Embedding(target_vocab, d_model, padding_idx=pad_id)
        self.positions = PositionalEncoding(d_model, max_len)
        self.transformer = Transformer(d_model, nhead, num_encoder_layers, num_decoder_layers, dim_feedforward,
                                       dropout, batch_first=True, norm_first=norm_first)
        self.out = Linear(d_model, target_vocab)
        keep_attention_weights(self.transformer.decoder)  # so advance can show where the last step looked

    def encode(self, source, lengths):
        """(memory (B, S, d), padding (B, S) True at the padding, PyTorch's polarity)."""
        padding = ~real_positions(lengths, source.shape[1])
        x = self.positions(self.source_embedding(source))
        return self.transformer.encoder(x, src_key_padding_mask=padding), padding

    def decode_prefix(self, prefix, memory, padding):
        """Logits (B, T, V) for every position of the target prefix (B, T), each seeing only words before it."""
        y = self.positions(self.target_embedding(prefix))
        T = prefix.shape[1]
        out = self.transformer.decoder(y, memory, tgt_mask=~causal_mask(T), memory_key_padding_mask=padding)
        return self.out(out)

    def loss(self, source, lengths, target):
        """Mean cross-entropy of predicting target[:, 1:] from target[:, :-1], all positions at once."""
        memory, padding = self.encode(source, np.asarray(lengths))
        logits = self.decode_prefix(target[:, :-1], memory, padding)
        return cross_entropy(logits, target[:, 1:], ignore_index=self.pad_id)

    def begin(self, source, lengths):
        """memory: (encoder output, padding); state: {"prefix": the words so far (N, 0)}."""
        return self.encode(source, np.asarray(lengths)), {"prefix": np.zeros((source.shape[0], 0), np.int64)}

    def advance(self, tokens, memory, state):
        """The prefix grows by `tokens` (N,): (logits of the next word (N, V), {"prefix"}, cross-attention (N, S))."""
        prefix = np.concatenate([state["prefix"], np.asarray(tokens)[:, None]], axis=1)
        logits = self.decode_prefix(prefix, *memory)
        cross = self.transformer.decoder.layers[len(self.transformer.decoder.layers) - 1].multihead_attn
        weights = cross.last_weights[:, :, -1, :].mean(axis=1)  # (N, S): where the newest position looked
        return logits[:, -1], {"prefix": prefix}, weights
