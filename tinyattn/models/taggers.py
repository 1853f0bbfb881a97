"""Taggers: one label per token, from the token alone or from the whole sentence.

    TokenTagger      tags = MLP(embed(word))                       each word alone, no context
    AttentionTagger  x = embed(word) [+ PE(position)]
                     tags = MLP(x + MultiheadAttention(x, x, x))    every word reads every word

Without the positional encoding, attention sees the other words as a bag: permuting the
sentence permutes the outputs and nothing else, so two copies of one word always get one tag
(Vaswani et al. 2017, https://arxiv.org/abs/1706.03762, section 3.5).
"""
from ..nn.attention import PositionalEncoding
from ..nn.layers import Embedding, Linear, ReLU
from ..nn.masks import real_positions
from ..nn.containers import Sequential
from ..nn.module import Module
from ..nn.multihead import MultiheadAttention


def mlp(in_features, hidden_size, out_features):
    """Linear -> ReLU -> Linear, applied to each token on its own."""
    return Sequential(Linear(in_features, hidden_size), ReLU(), Linear(hidden_size, out_features))


class TokenTagger(Module):
    """forward(tokens (B, T) int, lengths=None) -> logits (B, T, num_tags), each word on its own."""

    def __init__(self, vocab_size, num_tags, *, pad_id, embed_dim=32, hidden_size=64):
        super().__init__()
        self.embedding = Embedding(vocab_size, embed_dim, padding_idx=pad_id)
        self.head = mlp(embed_dim, hidden_size, num_tags)

    def forward(self, tokens, lengths=None):
        return self.head(self.embedding(tokens))


class AttentionTagger(Module):
    """forward(tokens (B, T) int, lengths (B,)) -> logits (B, T, num_tags); padding is never attended.

    positional=False leaves out the positional encoding (the order of the words is then invisible).
    """

    def __init__(self, vocab_size, num_tags, *, pad_id, embed_dim=32, num_heads=4, hidden_size=64,
                 positional=True, max_len=128):
        super().__init__()
        self.embedding = Embedding(vocab_size, embed_dim, padding_idx=pad_id)
        self.positional = PositionalEncoding(embed_dim, max_len) if positional else None
        self.attention = MultiheadAttention(embed_dim, num_heads, batch_first=True)
        self.head = mlp(embed_dim, hidden_size, num_tags)

    def forward(self, tokens, lengths):
        x = self.embedding(tokens)
        if self.positional is not None:
            x = self.positional(x)
        padding = ~real_positions(lengths, tokens.shape[1])  # PyTorch's key_padding_mask: True = padding
        context, _ = self.attention(x, x, x, key_padding_mask=padding, need_weights=False)
        return self.head(x + context)  # the residual keeps the word itself beside what it read
