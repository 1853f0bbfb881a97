"""A Transformer translator (Vaswani et al. 2017): nn.Transformer between embeddings and a Linear.

    memory = Transformer.encoder(embed(source))                          every source word reads every other
    out_t  = Transformer.decoder(embed(target_<t), memory)               causal: word t sees words < t,
                                                                        and all of memory (cross-attention)
    logits = Linear(out_t)

Where the words are comes from rotary positions (RoPE, Su et al. 2021, nn/positions.py) inside
every attention by default: self-attention turns queries and keys by their positions, and the
cross-attention turns its queries by their target positions and its keys by their source
positions, so a score sees how far the word being written is from the source word it reads.
positions="rope_self" keeps rotary out of the cross-attention, "sinusoidal" adds Vaswani et al.'s
fixed positions to the embeddings instead (docs/transformer_translator.md measures all three).

No recurrence: training computes every target position at once under the causal mask (`loss`).
Decoding (`advance`) keeps each layer's self-attention keys and values and the cross-attention's
keys and values of the memory in an nn.KVCache that the decoder's attention layers take
(nn/kv_cache.py), so each new word costs O(T); with use_cache = False it runs the decoder again
on the whole prefix and keeps the last position. Both run the same decoder code, positions
included (whatever attention positions the nn.Transformer has), so they write the same words. The attention shown for a step is the last decoder layer's
cross-attention, averaged over its heads.
"""
import numpy as np

from ..autograd.rules_nn import cross_entropy
from ..nn.attention import PositionalEncoding
from ..nn.layers import Embedding, Linear
from ..nn.kv_cache import KVCache
from ..nn.masks import real_positions
from ..nn.multihead import keep_attention_weights
from ..nn.transformer import Transformer
from .translator import Translator

POSITIONS = {"rope": ("rope", "rope"), "rope_self": ("rope", None), "sinusoidal": (None, None)}


class TransformerSeq2Seq(Translator):
    """Embeddings, nn.Transformer (pre-norm, rotary positions by default), a Linear to the vocabulary.

    label_smoothing (default 0.1, Szegedy et al. 2016) goes to the training loss."""

    def __init__(self, source_vocab, target_vocab, *, pad_id, bos_id, eos_id, d_model=64, nhead=4,
                 num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=128, dropout=0.0, norm_first=True,
                 max_len=128, positions="rope", label_smoothing=0.1):
        super().__init__()
        if positions not in POSITIONS:
            raise ValueError(f"TransformerSeq2Seq: positions must be one of {', '.join(POSITIONS)}, got {positions!r}")
        self.pad_id, self.bos_id, self.eos_id = pad_id, bos_id, eos_id
        self.positions_kind, self.label_smoothing, self.use_cache = positions, label_smoothing, True
        self.source_embedding = Embedding(source_vocab, d_model, padding_idx=pad_id)
        self.target_embedding = Embedding(target_vocab, d_model, padding_idx=pad_id)
        self.positions = PositionalEncoding(d_model, max_len) if positions == "sinusoidal" else None
        self_positions, cross_positions = POSITIONS[positions]
        self.transformer = Transformer(d_model, nhead, num_encoder_layers, num_decoder_layers, dim_feedforward,
                                       dropout, batch_first=True, norm_first=norm_first, positions=self_positions,
                                       cross_positions=cross_positions)
        self.out = Linear(d_model, target_vocab)
        keep_attention_weights(self.transformer.decoder)  # so advance can show where it looked

    def _embed(self, embedding, ids, start=0):
        """Word vectors (B, T, d), plus the positions start .. start + T - 1 if they are added."""
        x = embedding(ids)
        return x if self.positions is None else self.positions(x, start)

    def encode(self, source, lengths):
        """(memory (B, S, d), padding (B, S) True at the padding, PyTorch's polarity)."""
        padding = ~real_positions(lengths, source.shape[1])
        return self.transformer.encoder(self._embed(self.source_embedding, source),
                                        src_key_padding_mask=padding), padding

    def decode_prefix(self, prefix, memory, padding, cache=None):
        """Logits (B, T, V) for every position of the target prefix (B, T), each seeing only words before it.
        With an nn.KVCache, prefix holds the words after the cached ones (and the cache keeps them too)."""
        y = self._embed(self.target_embedding, prefix, 0 if cache is None else cache.length)
        out = self.transformer.decoder(y, memory, tgt_is_causal=True, memory_key_padding_mask=padding, cache=cache)
        return self.out(out)

    def loss(self, source, lengths, target):
        """Mean cross-entropy (label-smoothed) of predicting target[:, 1:] from target[:, :-1], all positions at once."""
        memory, padding = self.encode(source, np.asarray(lengths))
        logits = self.decode_prefix(target[:, :-1], memory, padding)
        return cross_entropy(logits, target[:, 1:], ignore_index=self.pad_id, label_smoothing=self.label_smoothing)

    def begin(self, source, lengths):
        """memory: (encoder output, padding); state: {"cache": an empty nn.KVCache} (the decoder's
        keys and values; advance extends it in place), or {"prefix": (N, 0)} with use_cache False."""
        memory, padding = self.encode(source, np.asarray(lengths))
        if not self.use_cache:
            return (memory, padding), {"prefix": np.zeros((source.shape[0], 0), np.int64)}
        return (memory, padding), {"cache": KVCache()}

    def advance(self, tokens, memory, state):
        """The target grows by `tokens` (N,): (logits of the next word (N, V), state, cross-attention (N, S))."""
        memory, padding = memory
        new = np.asarray(tokens)[:, None]
        if "cache" in state:  # the new word alone, reading the cached keys and values
            logits, state = self.decode_prefix(new, memory, padding, state["cache"]), state
        else:  # uncached: the decoder over the whole prefix again
            state = {"prefix": np.concatenate([state["prefix"], new], axis=1)}
            logits = self.decode_prefix(state["prefix"], memory, padding)
        last = self.transformer.decoder.layers[len(self.transformer.decoder.layers) - 1].multihead_attn
        return logits[:, -1], state, last.last_weights[:, :, -1, :].mean(axis=1)
