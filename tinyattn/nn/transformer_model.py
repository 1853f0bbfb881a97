"""nn.Transformer: PyTorch's whole encoder-decoder in one module (Vaswani et al. 2017, figure 1).

    memory = encoder(src)                  num_encoder_layers TransformerEncoderLayers, then a LayerNorm
    out    = decoder(tgt, memory)          num_decoder_layers TransformerDecoderLayers, then a LayerNorm

Arguments, defaults (batch_first=False: time first), parameter names
(encoder.layers.0.*, encoder.norm.*, decoder.layers.0.*, decoder.norm.*) and initialisation
(every weight matrix xavier uniform) are PyTorch's, so a state_dict crosses both ways.
positions= and cross_positions= ("alibi" | "rope", tinyattn's own, no parameters) go to every
layer's self-attention and to the decoder's cross-attention (nn/transformer.py). The
output has no vocabulary projection: as in PyTorch, embeddings and the final Linear are the
user's (models/transformer_seq2seq.py puts them around it).
"""
import numpy as np

from ..autograd.tensor import tensor
from . import init
from .layer_norm import LayerNorm
from .module import Module
from .transformer import TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer


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
