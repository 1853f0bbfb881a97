"""Sequence classifiers: read a sequence, sum it up in one vector, choose a class.

    states   = encoder(embed(words))        "lstm": nn.LSTM; "lstmn": nn.LSTMN (an LSTM that
                                            attends over its own past, Cheng et al. 2016,
                                            https://arxiv.org/abs/1601.06733); "transformer":
                                            nn.TransformerEncoder over embed (+ positions)
    summary  = the last real state          readout="last" (recurrent encoders only)
             = sum_t w_t states_t           readout="attention": w = nn.AttentionPooling's softmax
    logits   = Linear(summary)

With readout="last", everything the classifier knows has passed through the recurrent state
step after step up to the end; with attention pooling, any step can be read directly.
"""
import numpy as np

from ..nn.attention import AttentionPooling, PositionalEncoding
from ..nn.layers import Embedding, Linear
from ..nn.lstmn import LSTMN
from ..nn.masks import real_positions
from ..nn.module import Module
from ..nn.recurrent import LSTM
from ..nn.transformer import TransformerEncoder, TransformerEncoderLayer

ENCODERS = ("lstm", "lstmn", "transformer")
POSITIONAL = ("sinusoidal", "alibi", "rope", None)  # the Transformer's; recurrent encoders need none


class SequenceClassifier(Module):
    """forward(tokens (B, T) int, lengths (B,)) -> (logits (B, num_classes), pooling weights (B, T) or None).

    hidden_size is the recurrent state's size, or the Transformer's d_model (then nhead heads,
    num_layers layers, a feed-forward of dim_feedforward units, no dropout; norm_first=True puts
    each LayerNorm before its block, which trains faster here than the paper's order).

    positional says how the Transformer knows where each word is: "sinusoidal" adds
    nn.PositionalEncoding to the embeddings; "alibi" and "rope" add nothing there and give every
    self-attention its positions instead (nn.MultiheadAttention's positions=); None gives no
    positions at all (the words are then a bag). None of these has parameters, so the
    state_dict is the same for all four. causal=True lets each word attend only to itself and
    the words before it (PyTorch's is_causal); with "alibi" that is the paper's ALiBi, which
    says how far back a word is, where the encoder's |i - j| cannot say on which side.
    """

    def __init__(self, vocab_size, num_classes, *, pad_id, encoder="lstm", readout="attention", embed_dim=32,
                 hidden_size=32, pooling_size=32, nhead=2, num_layers=1, dim_feedforward=64, norm_first=True,
                 max_len=512, positional="sinusoidal", causal=False):
        super().__init__()
        if encoder not in ENCODERS:
            raise ValueError(f"SequenceClassifier: encoder must be one of {', '.join(ENCODERS)}, got {encoder!r}")
        if positional not in POSITIONAL:
            raise ValueError(f"SequenceClassifier: positional must be one of {', '.join(map(repr, POSITIONAL))}, "
                             f"got {positional!r}")
        if readout not in ("last", "attention") or (readout == "last" and encoder == "transformer"):
            raise ValueError(f"SequenceClassifier: readout must be 'attention', or 'last' with a recurrent encoder; "
                             f"got readout={readout!r} with encoder={encoder!r}")
        self.kind, self.readout, self.causal = encoder, readout, causal
        self.embedding = Embedding(vocab_size, embed_dim, padding_idx=pad_id)
        if encoder == "lstm":
            self.encoder = LSTM(embed_dim, hidden_size, batch_first=True)
        elif encoder == "lstmn":
            self.encoder = LSTMN(embed_dim, hidden_size)
        else:
            self.project = Linear(embed_dim, hidden_size) if embed_dim != hidden_size else None
            sinusoidal = positional == "sinusoidal"
            self.positional = PositionalEncoding(hidden_size, max_len) if sinusoidal else None
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(hidden_size, nhead, dim_feedforward, dropout=0.0, batch_first=True,
                                        norm_first=norm_first, positions=None if sinusoidal else positional),
                num_layers)
        self.pooling = AttentionPooling(hidden_size, pooling_size) if readout == "attention" else None
        self.out = Linear(hidden_size, num_classes)

    def encode(self, tokens, lengths):
        """(states (B, T, hidden_size), the LSTMN's attention over its past (B, T, T) or None)."""
        x = self.embedding(tokens)
        if self.kind == "lstm":
            return self.encoder(x, lengths=lengths)[0], None
        if self.kind == "lstmn":
            return self.encoder(x, lengths=lengths)
        if self.project is not None:
            x = self.project(x)
        padding = ~real_positions(lengths, tokens.shape[1])  # PyTorch's key_padding_mask: True = padding
        if self.positional is not None:
            x = self.positional(x)
        return self.encoder(x, src_key_padding_mask=padding, is_causal=self.causal), None

    def forward(self, tokens, lengths):
        lengths = np.asarray(lengths)
        states, _ = self.encode(tokens, lengths)
        if self.readout == "last":
            return self.out(states[np.arange(len(lengths)), lengths - 1]), None
        summary, weights = self.pooling(states, mask=real_positions(lengths, tokens.shape[1]))
        return self.out(summary), weights
