"""A Transformer encoder that points from one word to another word of the same sentence.

    h       = TransformerEncoder(embed(words) + PE(positions))       (B, T, d) every word in context
    q       = h[query position]                                        (B, d) e.g. the word "it"
    scores  = h W q  over the positions,  padding excluded             (B, T) "which word is meant"

Training maximises the softmax probability of the right position (cross-entropy over the
positions), as the pointer networks of Vinyals et al. 2015 (https://arxiv.org/abs/1506.03134)
choose an input position instead of a word from a fixed vocabulary.
"""
import numpy as np

from ..nn.attention import PositionalEncoding
from ..nn.layers import Embedding, Linear
from ..nn.masks import real_positions
from ..nn.module import Module
from ..nn.transformer import TransformerEncoder, TransformerEncoderLayer


class PointerEncoder(Module):
    """forward(tokens (B, T) int, lengths (B,), query_positions (B,)) -> scores (B, T) over positions.

    Padding positions get a score of -1e9 (finite: the softmax gives them ~0 and no NaN).
    """

    def __init__(self, vocab_size, *, pad_id, d_model=32, nhead=2, num_layers=2, dim_feedforward=64, dropout=0.0,
                 max_len=128):
        super().__init__()
        self.embedding = Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.positional = PositionalEncoding(d_model, max_len)
        layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, batch_first=True)
        self.encoder = TransformerEncoder(layer, num_layers)
        self.pointer = Linear(d_model, d_model, bias=False)

    def forward(self, tokens, lengths, query_positions):
        real = real_positions(lengths, tokens.shape[1])                 # (B, T) True on real words
        h = self.encoder(self.positional(self.embedding(tokens)), src_key_padding_mask=~real)
        query = h[np.arange(tokens.shape[0]), np.asarray(query_positions)]                 # (B, d)
        scores = (h @ self.pointer(query).unsqueeze(-1)).reshape(tokens.shape)          # (B, T)
        return scores.masked_fill(~real, -1e9)
