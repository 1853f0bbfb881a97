"""What every translator shares: training by `loss`, decoding by `begin` and `advance`.

A subclass (Seq2Seq, LuongSeq2Seq, TransformerSeq2Seq) sets pad_id, bos_id, eos_id and writes

    loss(source, lengths, target) -> scalar        teacher forcing: predict target[:, 1:] from target[:, :-1]
    begin(source, lengths) -> (memory, state)      read the source once
    advance(tokens (N,), memory, state) -> (logits (N, V), state, attention (N, S) or None)

and gets greedy and beam decoding (models/decoding.py) and the attention under teacher forcing.
"""
import numpy as np

from ..autograd.function import no_grad
from ..nn.module import Module
from .decoding import beam_search, greedy


class Translator(Module):
    """Base of the translators: decode, translate and teacher_forced_weights from begin and advance."""

    pad_id = bos_id = eos_id = None

    def decode(self, source, lengths, beam_size=1, max_len=None, alpha=0.6):
        """A decoding.Hypothesis per sentence (tokens, attention, score, ended): greedy with
        beam_size 1, beam search otherwise (models/decoding.py)."""
        if beam_size == 1:
            return greedy(self, source, lengths, self.eos_id, max_len, alpha)
        return beam_search(self, source, lengths, self.eos_id, beam_size, max_len, alpha)

    def translate(self, source, lengths, max_len=None):
        """Greedy decoding as arrays: (token ids (B, T), ending with </s> where it was written and
        padded after it, attention (B, T, S) or None, zero on the padding)."""
        results = self.decode(source, lengths, max_len=max_len)
        rows = [h.tokens + [self.eos_id] * h.ended for h in results]
        T = max(len(r) for r in rows)
        tokens = np.full((len(rows), T), self.pad_id, np.int64)
        for i, r in enumerate(rows):
            tokens[i, :len(r)] = r
        if results[0].attention is None:
            return tokens, None
        weights = np.zeros((len(rows), T, np.asarray(source).shape[1]))
        for i, h in enumerate(results):
            weights[i, :len(h.attention)] = h.attention
        return tokens, weights

    @no_grad()
    def teacher_forced_weights(self, source, lengths, target):
        """Attention (B, T, S) while reading the reference target: row t is where the decoder looks
        to write target word t + 1, right or wrong so far."""
        memory, state = self.begin(np.asarray(source), np.asarray(lengths))
        rows = []
        for t in range(target.shape[1] - 1):
            _, state, weights = self.advance(target[:, t], memory, state)
            rows.append(np.asarray(weights.data if hasattr(weights, "data") else weights))
        return np.stack(rows, axis=1)
