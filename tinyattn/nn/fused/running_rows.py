"""The layout the sequence nodes compute in: sentences sorted longest first, time first.

With a batch's sentences sorted by length, those still running at step t are the first n_t
rows, so each step works on one contiguous block of rows and skips the finished ones (what
PyTorch's packed sequences do). gru_sequence.py, lstm_sequence.py and attentive_decoder.py
sort their inputs once on the way in and put the answers back in the caller's order on the
way out, through one RunningRows.
"""
import numpy as np


class RunningRows:
    """The sort of B sentences of `lengths` (ints, or None: all T steps) for T steps.

    order      the rows, longest first (stable: ties keep their order)
    counts[t]  how many sentences run at step t: the first counts[t] sorted rows
    """

    def __init__(self, lengths, B, T):
        self.by_length = lengths is not None
        if lengths is None:
            self.order, self.counts = np.arange(B), np.full(T, B)
        else:
            lengths = np.asarray(lengths, np.int64)  # signed: -lengths of an unsigned 0 would be 0, sorted first
            self.order = np.argsort(-lengths, kind="stable")
            self.counts = (lengths[:, None] > np.arange(T)).sum(axis=0)
        self._unsort = np.argsort(self.order)

    def __eq__(self, other):
        """Two sorts without lengths over the same B and T are one sort: ta.compile compares the
        constants of two captures with ==, and a node's ctx keeps its sort. A sort by lengths is
        only itself: it depends on the data, which a replay must not freeze."""
        return (type(other) is RunningRows and not self.by_length and not other.by_length
                and len(self.order) == len(other.order) and len(self.counts) == len(other.counts))

    __hash__ = None  # equal sorts are not one key

    def sorted(self, x):
        """(B, ...) -> the same rows longest first (a copy)."""
        return x[self.order]

    def unsorted(self, x):
        """(B, ...) sorted -> the caller's order (a copy)."""
        return x[self._unsort]

    def time_first(self, x):
        """(B, T, ...) -> (T, B, ...) with the rows longest first (one copy)."""
        return x.swapaxes(0, 1)[:, self.order]

    def batch_first(self, x):
        """(T, B, ...) sorted -> (B, T, ...) in the caller's order (one copy)."""
        return x.swapaxes(0, 1)[self._unsort]

    def steps(self, reverse=False):
        """The steps in the order a pass visits them: 0..T-1, or T-1..0 when reverse."""
        T = len(self.counts)
        return reversed(range(T)) if reverse else range(T)
