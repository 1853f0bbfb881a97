"""The Transformer's encoder and decoder layers ("Attention Is All You Need", Vaswani et al. 2017),
as PyTorch's nn.TransformerEncoderLayer / DecoderLayer / Encoder / Decoder compute them.

An encoder layer is two blocks, each wrapped in a residual connection and a LayerNorm:

    self-attention    x -> MultiheadAttention(x, x, x)                 (every token reads every token)
    feed-forward      x -> linear2(dropout(activation(linear1(x))))   (each token alone)

post-norm (norm_first=False, the paper's):  x = norm1(x + sa(x));        x = norm2(x + ff(x))
pre-norm  (norm_first=True, Xiong et al. 2020, "On Layer Normalization in the Transformer
Architecture"):                              x = x + sa(norm1(x));        x = x + ff(norm2(x))

A decoder layer puts cross-attention between the two: its queries come from the decoder, its
keys and values from the encoder's output ("memory"), x -> MultiheadAttention(x, memory, memory).
Each block's output passes a Dropout (dropout1, dropout2, dropout3) before it is added.
"""
import copy

from . import functional as F
from .layers import Dropout
from .layer_norm import LayerNorm
from .linear import Linear
from .containers import ModuleList
from .module import Module
from .multihead import MultiheadAttention
from .sizes import check_sizes

ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


def _activation(activation, layer):
    """"relu" / "gelu" (exact) -> the function, as PyTorch; a callable (F.relu, nn.GELU()) stays itself."""
    if callable(activation):
        return activation
    if activation not in ACTIVATIONS:
        raise ValueError(f"{layer}: activation should be 'relu', 'gelu' or a callable, not {activation!r}")
    return ACTIVATIONS[activation]


class _LayerParts:
    """What the encoder and decoder layers share: linear1, linear2, the norms, the dropouts, the
    activation (registered in PyTorch's order), and the feed-forward block."""

    def _build(self, d_model, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
               bias, norms):
        name = type(self).__name__
        self.batch_first = batch_first  # only the attention reads the layout; the rest works per position
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias)
        self.norm_first = norm_first
        for i in range(1, norms + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        for i in range(1, norms + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))
        self.activation = _activation(activation, name)

    def _ff_block(self, x, dropout_out):
        return dropout_out(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoderLayer(_LayerParts, Module):
    """forward(src (T, B, d_model), src_mask=None, src_key_padding_mask=None, is_causal=False) -> (T, B, d_model);
    (B, T, d_model) in and out with batch_first=True.

    Masks as MultiheadAttention's (PyTorch's polarity): src_mask (T, T) or (B*nhead, T, T), bool
    True = not allowed or float added; src_key_padding_mask (B, T) True = padding.
    positions = "alibi" | "rope" (tinyattn's own, not PyTorch's) goes to the self-attention.
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, positions=None):
        check_sizes(type(self).__name__, d_model=d_model, nhead=nhead, dim_feedforward=dim_feedforward)
        Module.__init__(self)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            positions=positions)
        self._build(d_model, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first, bias, 2)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x), self.dropout2)
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x, self.dropout2))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        # need_weights=False, as PyTorch: nothing here uses them (keep_weights still stores them)
        out, _ = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False, is_causal=is_causal)
        return self.dropout1(out)


class TransformerDecoderLayer(_LayerParts, Module):
    """forward(tgt (T, B, d_model), memory (S, B, d_model), tgt_mask=None, memory_mask=None,
    tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_is_causal=False,
    memory_is_causal=False, cache=None) -> (T, B, d_model); batch first with batch_first=True. Masks as
    TransformerEncoderLayer's. cache: an nn.KVCache (tinyattn's own, nn/kv_cache.py) that both
    attentions keep their keys and values in; tgt holds the positions after the cached ones.
    positions = "alibi" | "rope" (tinyattn's own) goes to the self-attention; cross_positions
    (tinyattn's own, default None) to the cross-attention, whose query i is target position i and
    key j source position j: with "rope", q_i . k_j depends on i - j, how far the word being
    written is from the source word, which a translation whose alignment runs near the diagonal
    can use (docs/transformer_translator.md measures it)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, positions=None, cross_positions=None):
        check_sizes(type(self).__name__, d_model=d_model, nhead=nhead, dim_feedforward=dim_feedforward)
        Module.__init__(self)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            positions=positions)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                                 positions=cross_positions)
        self._build(d_model, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first, bias, 3)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False, cache=None):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal, cache)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal,
                                    cache)
            x = x + self._ff_block(self.norm3(x), self.dropout3)
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal, cache))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal,
                                               cache))
            x = self.norm3(x + self._ff_block(x, self.dropout3))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal, cache=None):
        out, _ = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False, is_causal=is_causal, cache=cache)
        return self.dropout1(out)

    def _mha_block(self, x, memory, attn_mask, key_padding_mask, is_causal, cache=None):
        out, _ = self.multihead_attn(x, memory, memory, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                     need_weights=False, is_causal=is_causal, cache=cache)
        return self.dropout2(out)


def _clones(layer, num_layers):
    """num_layers independent deep copies (each trains its own weights), as PyTorch's stacks."""
    return ModuleList(copy.deepcopy(layer) for _ in range(num_layers))


class TransformerEncoder(Module):
    """num_layers copies of encoder_layer, one after another, then `norm` if given (layers.0.*, ...)."""

    def __init__(self, encoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        return self.norm(x) if self.norm is not None else x


class TransformerDecoder(Module):
    """num_layers copies of decoder_layer, each reading the same memory, then `norm` if given.

    cache=nn.KVCache() (tinyattn's own): tgt holds the positions after the cached ones (one new
    word a step, say, with tgt_is_causal=True); every layer extends the cache, then it advances."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False, cache=None):
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=bool(tgt_is_causal),
                      memory_is_causal=memory_is_causal, cache=cache)
        if cache is not None:
            cache.advance(tgt.shape[1 if self.layers[0].batch_first else 0])
        return self.norm(x) if self.norm is not None else x
