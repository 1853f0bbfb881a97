"""Batches of sentences of similar lengths: less padding, and few batch shapes.

A batch is padded to its longest sentence. 64 sentences drawn at random from 5-50 words pad to
about 50 each, so about half of the positions a model computes are padding. Length bucketing,
as fairseq's batches and torchtext's BucketIterator make them:

    shuffle  ->  cut into pools of a few batches  ->  sort each pool by length
             ->  cut each pool into batches       ->  shuffle the batches

Each batch then holds neighbouring lengths. The pools keep the training order random: sorting
the whole set would feed every short sentence first and every long one last. A larger pool
gives batches of closer lengths and less mixed batches; a few batches is the usual middle.

`bucket_batches` is one epoch over a finite set (every example exactly once). `BucketedStream`
does the same to an endless stream (tinyattn.data's pairs): each pool is freshly drawn sentences.
Widths can be rounded up to a multiple (`multiple=8`) so that batches come in few shapes, and a
compiled step (ta.compile, which captures a plan per input shape) replays instead of capturing.
"""
import numpy as np

from .toy_translation import PAD


def bucket_batches(lengths, batch_size, rng, pool_batches=8):
    """One epoch of batches, as index arrays: every index of `lengths` exactly once, each batch
    of similar lengths (see the module docstring). lengths: (N,) the length to group by, or
    (N, k) sorted by column 0, then 1, ... (source and target lengths); rng: a numpy Generator,
    so that the same seed makes the same epoch and the next call the next epoch's shuffle."""
    lengths = np.asarray(lengths)
    if lengths.ndim not in (1, 2) or batch_size < 1 or pool_batches < 1:
        raise ValueError(f"bucket_batches: lengths must be (N,) or (N, k) and batch_size, pool_batches >= 1; got "
                         f"lengths of shape {lengths.shape}, batch_size {batch_size}, pool_batches {pool_batches}")
    keys = lengths.reshape(len(lengths), -1 if lengths.size else 1)  # no examples: no batches
    order = rng.permutation(len(keys))
    pool = batch_size * pool_batches
    batches = []
    for start in range(0, len(order), pool):
        chunk = order[start:start + pool]
        chunk = chunk[np.lexsort(keys[chunk].T[::-1])]  # stable: equal lengths keep the shuffled order
        batches += [chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


def round_up_width(ids, multiple):
    """A padded (B, T) id array widened with <pad> to a multiple of `multiple` columns."""
    extra = -ids.shape[1] % multiple
    return np.pad(ids, ((0, 0), (0, extra)), constant_values=PAD) if extra else ids


class BucketedStream:
    """fit's `batches=` for an endless stream of sentence pairs, in batches of similar lengths.

        batches = BucketedStream(data, 64, pool_batches=10, multiple=8)
        ta.train.fit(model, opt, model.loss, steps, batches=batches, rngs={"data": data.rng})

    data: a pair from tinyattn.data (sentence() -> (source words, target words, ...),
    encode_pairs, rng). Steps 1..P take the P batches of one pool of P * batch_size sentences
    drawn from the stream, in an order drawn from data.rng; step P + 1 draws the next pool.
    Source and target widths are rounded up to a multiple of `multiple`. Everything is drawn
    from data.rng, so fit's checkpoint of it resumes exactly when checkpoints fall between
    pools (pool_batches divides checkpoint_every); resumed mid-pool, a new pool is drawn.
    """

    def __init__(self, data, batch_size, pool_batches=10, multiple=8):
        self.data, self.batch_size, self.pool_batches, self.multiple = data, batch_size, pool_batches, multiple
        self.pool, self.pairs, self.batches = None, [], []  # the pool being served: its number, sentences, batches

    def __call__(self, step):
        """(source (B, S), lengths (B,), target (B, T)) for training step `step` (from 1)."""
        pool = (step - 1) // self.pool_batches
        if pool != self.pool:
            pairs = [self.data.sentence()[:2] for _ in range(self.batch_size * self.pool_batches)]
            lengths = [(len(source), len(target)) for source, target in pairs]
            self.pairs, self.pool = pairs, pool
            self.batches = bucket_batches(lengths, self.batch_size, self.data.rng, self.pool_batches)
        batch = self.batches[(step - 1) % self.pool_batches]
        source, lengths, target = self.data.encode_pairs([self.pairs[i] for i in batch])
        return round_up_width(source, self.multiple), lengths, round_up_width(target, self.multiple)
