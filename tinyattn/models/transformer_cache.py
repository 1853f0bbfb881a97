"""The Transformer translator's decoding step with a key/value cache: O(T) work per new word.

Without a cache, writing word t runs the decoder over the whole prefix 0..t again (O(T) positions
a step, O(T^2) a sentence). Nothing about positions < t changes when word t arrives (the causal
mask keeps them from reading it), so their keys and values can be kept:

    self-attention   each layer's keys and values of positions 0..t-1 are cached; position t
                     adds its own and its query reads all t + 1
    cross-attention  the keys and values of the encoder's output (the memory) are the same for
                     every step: computed once, in `cross_keys_values`, before the first word

Each function here re-states, for one new position, what nn.TransformerDecoderLayer and
nn.MultiheadAttention compute for all positions (same parameters, same order of operations);
tests/test_transformer_translator.py checks that cached and uncached decoding write the same words.
"""
import numpy as np

from ..autograd.ops_shape import cat
from ..autograd.tensor import wrap
from ..nn.linear import LinearFunction
from ..nn.positions import rotary
from ..nn.sdpa import attend


def heads(mha, x, which, positions):
    """x (N, T, E) -> the query (which=0), key (1) or value (2) of `mha`, in heads (N, H, T, d);
    under positions="rope" a query or key is turned by its positions (T,)."""
    (W, b) = mha.projections()[which]
    N, T, _ = x.shape
    y = LinearFunction.apply(x, W, b).reshape(N, T, mha.num_heads, mha.head_dim).transpose(1, 2)
    return rotary(y, positions) if which < 2 and mha.positions == "rope" else y


def cross_keys_values(decoder, memory):
    """[(K, V) (N, H, S, d) for each decoder layer's cross-attention]: source position s at s."""
    S = memory.shape[1]
    return [(heads(layer.multihead_attn, memory, 1, np.arange(S)), heads(layer.multihead_attn, memory, 2, None))
            for layer in decoder.layers]


def _attend(mha, x, K, V, position, may_attend):
    """One query row x (N, 1, E) at `position` reading K, V (N, H, Tk, d) -> (out (N, 1, E), weights (N, H, 1, Tk))."""
    N = x.shape[0]
    out, weights, _ = attend(heads(mha, x, 0, [position]), K, V, mask=may_attend)
    return mha.out_proj(out.transpose(1, 2).reshape(N, 1, mha.embed_dim)), weights


def decoder_step(decoder, x, position, cache, cross, may_attend):
    """x (N, 1, E): the new target word's embedding at `position` -> (decoder output (N, 1, E),
    the new cache [(K, V) of positions 0..position per layer], the last layer's cross weights (N, H, 1, S)).

    cache: [(K, V) (N, H, position, d) per layer]; cross: cross_keys_values; may_attend: (N, 1, 1, S),
    True at the real source words."""
    grown, last = [], {}
    for layer, (K, V), (cross_K, cross_V) in zip(decoder.layers, cache, cross):
        def self_block(h):
            keys = cat([wrap(K), heads(layer.self_attn, h, 1, [position])], axis=2)
            values = cat([wrap(V), heads(layer.self_attn, h, 2, None)], axis=2)
            grown.append((keys.data, values.data))
            return layer.dropout1(_attend(layer.self_attn, h, keys, values, position, None)[0])

        def cross_block(h):
            out, last["weights"] = _attend(layer.multihead_attn, h, cross_K, cross_V, position, may_attend)
            return layer.dropout2(out)

        if layer.norm_first:
            x = x + self_block(layer.norm1(x))
            x = x + cross_block(layer.norm2(x))
            x = x + layer._ff_block(layer.norm3(x), layer.dropout3)
        else:
            x = layer.norm1(x + self_block(x))
            x = layer.norm2(x + cross_block(x))
            x = layer.norm3(x + layer._ff_block(x, layer.dropout3))
    x = decoder.norm(x) if decoder.norm is not None else x
    return x, grown, last["weights"]
