"""A key/value cache: decoding one position at a time in O(T) work instead of O(T^2).

Without a cache, writing token t runs the model over positions 0..t again. Nothing at positions
< t changes when t arrives (the causal mask keeps them from reading it), so each attention layer
can keep what it made:

    self-attention   the keys and values of the positions so far; a new position adds its own,
                     and its query reads all of them
    cross-attention  the keys and values of the encoder's output (the memory), the same for every
                     step: made once, at the first step

One cache serves a whole model: each attention layer keeps its own entry, under itself. The layers
take it as an argument (nn.MultiheadAttention, the Transformer decoder layers, the GPT's
attention) and place positions with the same code as without it: the new queries sit at
positions length .. length + T - 1, the keys at 0 .. (rope turns them by those positions; alibi's
bias is -m |i - j| between them; sinusoidal or learned positions are added to the embeddings
from `length` on). The model that owns the sequence calls advance(T) once every layer has read
the T new positions. The cached keys are arrays, constants to a later step: a gradient reaches
the new positions' keys and values only (decoding runs under no_grad anyway).
"""
import numpy as np

from ..autograd.function import is_grad_enabled
from ..autograd.rules_shape import cat
from ..autograd.tensor import wrap


class KVCache:
    """Keys and values (B, H, T, d) per attention layer, of the first `length` positions."""

    def __init__(self):
        self.length = 0     # positions every layer has read; the next new one sits here
        self._grown = {}    # self-attention layer -> [keys, values (B, H, capacity, d), count]
        self._fixed = {}    # cross-attention layer -> (keys, values) Tensors of the memory

    def extend(self, layer, k, v):
        """k, v (B, H, T, d) of the new positions -> (keys, values) of every position so far.

        The store doubles when full, so T steps of one position copy O(T) rows in all."""
        keys, values, count = self._grown.get(layer, (None, None, 0))
        end = count + k.shape[2]
        if keys is None or end > keys.shape[2]:
            capacity = max(end, 2 * count, 16)
            grown = [np.empty(k.shape[:2] + (capacity,) + k.shape[3:], k.dtype) for _ in "kv"]
            if keys is not None:
                grown[0][:, :, :count], grown[1][:, :, :count] = keys[:, :, :count], values[:, :, :count]
            keys, values = grown
        keys[:, :, count:end], values[:, :, count:end] = k.data, v.data
        self._grown[layer] = [keys, values, end]
        if is_grad_enabled() and (k.requires_grad or v.requires_grad):  # the new positions stay on the graph
            return cat([wrap(keys[:, :, :count]), k], axis=2), cat([wrap(values[:, :, :count]), v], axis=2)
        return wrap(keys[:, :, :end]), wrap(values[:, :, :end])

    def fixed(self, layer, make):
        """(keys, values) that stay the same every step (a cross-attention's, of the memory):
        make() -> (keys, values) the first time, the kept pair after."""
        if layer not in self._fixed:
            self._fixed[layer] = tuple(wrap(t.data) for t in make())
        return self._fixed[layer]

    def entry(self, layer):
        """(keys, values) arrays (B, H, T, d) that `layer` keeps (for looking at), or None before its first call."""
        if layer in self._fixed:
            return tuple(t.data for t in self._fixed[layer])
        if layer in self._grown:
            keys, values, count = self._grown[layer]
            return keys[:, :, :count], values[:, :, :count]
        return None

    def advance(self, T):
        """T more positions have gone through every layer."""
        self.length += T

    def __getitem__(self, rows):
        """A cache holding the given rows (batch entries) of the positions so far, in that order: a beam
        search keeps the hypotheses it extends (models/decoding.py indexes every part of the state).
        The memory's keys and values stay as they are, as the memory does (the caller passes it on
        unchanged: a beam reorders rows within a sentence, which share one source)."""
        kept = KVCache()
        kept.length, kept._fixed = self.length, self._fixed
        for layer, (keys, values, count) in self._grown.items():
            kept._grown[layer] = [_rows_with_room(keys, rows, count), _rows_with_room(values, rows, count), count]
        return kept


def _rows_with_room(store, rows, count):
    """store[rows] of the first `count` positions, in a store as long as this one (its room to grow kept)."""
    picked = store[rows, :, :count]
    kept = np.empty(picked.shape[:2] + store.shape[2:], store.dtype)
    kept[:, :, :count] = picked
    return kept
