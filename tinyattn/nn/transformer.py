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

nn.Transformer, at the end, is PyTorch's whole encoder-decoder in one module (figure 1 of the paper):

    memory = encoder(src)                  num_encoder_layers TransformerEncoderLayers, then a LayerNorm
    out    = decoder(tgt, memory)          num_decoder_layers TransformerDecoderLayers, then a LayerNorm

Arguments, defaults (batch_first=False: time first), parameter names
(encoder.layers.0.*, encoder.norm.*, decoder.layers.0.*, decoder.norm.*) and initialisation
(every weight matrix xavier uniform) are PyTorch's, so a state_dict crosses both ways.
positions= and cross_positions= ("alibi" | "rope", tinyattn's own, no parameters) go to every
layer's self-attention and to the decoder's cross-attention. The output has no vocabulary
projection: as in PyTorch, embeddings and the final Linear are the user's
(models/transformer_seq2seq.py puts them around it).
"""
import copy

import numpy as np

from ..autograd.tensor import tensor
from . import functional as F
from . import init
from .layers import Dropout, LayerNorm, Linear
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


class Transformer(Module):
    """PyTorch's nn.Transformer: an encoder stack and a decoder stack, each ending in a LayerNorm."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation="relu", custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, positions=None, cross_positions=None):
        super().__init__()
        layer_args = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                          layer_norm_eps=layer_norm_eps, norm_first=norm_first, bias=bias, positions=positions)
        self.encoder = custom_encoder or TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, batch_first=batch_first, **layer_args), num_encoder_layers,
            norm=LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        self.decoder = custom_decoder or TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, batch_first=batch_first, cross_positions=cross_positions,
                                    **layer_args), num_decoder_layers,
            norm=LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        for p in self.parameters():  # PyTorch's _reset_parameters: xavier uniform on every matrix
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        """src (S, B, E), tgt (T, B, E) -> (T, B, E) ((B, S, E), ... with batch_first=True). Masks in
        PyTorch's polarity (bool True = not allowed, float added to the scores), as nn.MultiheadAttention."""
        batch = 0 if self.batch_first else 1
        if src.shape[batch] != tgt.shape[batch]:
            raise ValueError(f"Transformer: the batch size of src ({src.shape[batch]}) and tgt ({tgt.shape[batch]}) "
                             "must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ValueError(f"Transformer: the feature number of src and tgt must be equal to d_model ({self.d_model})")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """(sz, sz) float mask: 0 on and below the diagonal, -inf above (position i sees 0..i), as PyTorch.

        A Tensor, as PyTorch's; dtype: float32 unless given (a numpy dtype); device is accepted and
        ignored (CPU only). Pass it as tgt_mask."""
        return tensor(np.triu(np.full((sz, sz), -np.inf), k=1).astype(dtype or np.float32))
