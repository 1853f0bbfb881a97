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
keys and values of the memory (transformer_cache.py), so each new word costs O(T); with
use_cache = False it runs the decoder again on the whole prefix and keeps the last position
(the same words, tested). The attention shown for a step is the last decoder layer's
cross-attention, averaged over its heads.
"""
import numpy as np

from ..autograd.errors import ShapeError
from ..autograd.ops_nn import cross_entropy
from ..autograd.tensor import wrap
from ..nn.attention import PositionalEncoding
from ..nn.embedding import Embedding
from ..nn.linear import Linear
from ..nn.masks import causal_mask, real_positions
from ..nn.attention_weights import keep_attention_weights
from ..nn.transformer_model import Transformer
from .transformer_cache import cross_keys_values, decoder_step
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
        keep_attention_weights(self.transformer.decoder)  # so the uncached advance can show where it looked

    def _embed(self, embedding, ids, start=0):
        """Word vectors (B, T, d), plus the sinusoidal positions start .. start + T - 1 if they are added."""
        x = embedding(ids)
        if self.positions is None:
            return x
        if start == 0:
            return self.positions(x)
        if start + x.shape[1] > self.positions.max_len:
            raise ShapeError(f"TransformerSeq2Seq: target position {start + x.shape[1] - 1} is past the sinusoidal "
                             f"table's {self.positions.max_len} positions; build the model with a larger max_len")
        return x + wrap(self.positions.table[start:start + x.shape[1]].astype(x.dtype))

    def encode(self, source, lengths):
        """(memory (B, S, d), padding (B, S) True at the padding, PyTorch's polarity)."""
        padding = ~real_positions(lengths, source.shape[1])
        return self.transformer.encoder(self._embed(self.source_embedding, source),
                                        src_key_padding_mask=padding), padding

    def decode_prefix(self, prefix, memory, padding):
        """Logits (B, T, V) for every position of the target prefix (B, T), each seeing only words before it."""
        y = self._embed(self.target_embedding, prefix)
        T = prefix.shape[1]
        out = self.transformer.decoder(y, memory, tgt_mask=~causal_mask(T), memory_key_padding_mask=padding)
        return self.out(out)

    def loss(self, source, lengths, target):
        """Mean cross-entropy (label-smoothed) of predicting target[:, 1:] from target[:, :-1], all positions at once."""
        memory, padding = self.encode(source, np.asarray(lengths))
        logits = self.decode_prefix(target[:, :-1], memory, padding)
        return cross_entropy(logits, target[:, 1:], ignore_index=self.pad_id, label_smoothing=self.label_smoothing)

    def begin(self, source, lengths):
        """memory: (encoder output, padding, the cross-attention's keys and values per layer);
        state: each layer's cached self-attention keys and values, (N, H, 0, d) to begin with
        (or {"prefix": (N, 0)} with use_cache False)."""
        memory, padding = self.encode(source, np.asarray(lengths))
        N = source.shape[0]
        if not self.use_cache:
            return (memory, padding, None), {"prefix": np.zeros((N, 0), np.int64)}
        attn = self.transformer.decoder.layers[0].self_attn
        empty = np.zeros((N, attn.num_heads, 0, attn.head_dim), memory.dtype)
        state = {f"{kv}{i}": empty for i in range(len(self.transformer.decoder.layers)) for kv in "kv"}
        return (memory, padding, cross_keys_values(self.transformer.decoder, memory)), state

    def advance(self, tokens, memory, state):
        """The target grows by `tokens` (N,): (logits of the next word (N, V), state, cross-attention (N, S))."""
        memory, padding, cross = memory
        if "prefix" in state:  # uncached: the decoder over the whole prefix again
            prefix = np.concatenate([state["prefix"], np.asarray(tokens)[:, None]], axis=1)
            logits = self.decode_prefix(prefix, memory, padding)
            last = self.transformer.decoder.layers[len(self.transformer.decoder.layers) - 1].multihead_attn
            return logits[:, -1], {"prefix": prefix}, last.last_weights[:, :, -1, :].mean(axis=1)
        layers = len(self.transformer.decoder.layers)
        cache = [(state[f"k{i}"], state[f"v{i}"]) for i in range(layers)]
        t = cache[0][0].shape[2]  # words already written: the new one sits at position t
        x = self._embed(self.target_embedding, np.asarray(tokens)[:, None], start=t)
        out, grown, weights = decoder_step(self.transformer.decoder, x, t, cache, cross, ~padding[:, None, None, :])
        state = {f"{kv}{i}": grown[i][j] for i in range(layers) for j, kv in enumerate("kv")}
        return self.out(out)[:, 0], state, weights.data[:, :, 0, :].mean(axis=1)
