"""Decoding a trained translator: greedy, and batched beam search with length normalisation.

Every translator (tinyattn/models: Seq2Seq, LuongSeq2Seq, TransformerSeq2Seq) offers two calls:

    memory, state = model.begin(source, lengths)      read the source once
    logits, state, weights = model.advance(tokens, memory, state)
        one step for N rows: the previous word of each (N,) -> next-word logits (N, V), the new
        state, and the attention over the source (N, S) (None for a decoder without attention)

`state` is a dict of arrays or Tensors with one row per hypothesis (or an nn.KVCache, indexed the
same way), so a beam reorders it by indexing every value with the rows it keeps; `memory` (what
the encoder made) never changes.

Scores are log-probabilities. Beam search ranks finished hypotheses by Wu et al. 2016's length
normalisation (https://arxiv.org/abs/1609.08144, eq. 14):

    score(Y) = log P(Y | X) / lp(Y),   lp(Y) = ((5 + |Y|) / 6) ** alpha

(|Y| counts the words written, </s> included), so long sentences are not beaten by short ones
merely for multiplying fewer probabilities below one. alpha = 0 is plain log-probability.
"""
from typing import NamedTuple

import numpy as np

from ..autograd.function import no_grad
from ..autograd.rules_shape import largest_first
from ..ops.reference import log_softmax


class Hypothesis(NamedTuple):
    """One decoded sentence: its words (ids, without </s>), the attention of every step that wrote
    them ((steps, S), the step that wrote </s> included; None without attention), its length-
    normalised log-probability, and whether it ended with </s> (False: stopped at max_len)."""

    tokens: list
    attention: object
    score: float
    ended: bool


def length_penalty(length, alpha):
    return ((5.0 + length) / 6.0) ** alpha


def _log_softmax(logits):
    """log-probabilities in float64 (beam scores add many of them) of a Tensor's or array's logits."""
    return log_softmax(np.asarray(getattr(logits, "data", logits), np.float64))


def _select(state, rows):
    return {name: value[rows] for name, value in state.items()}


def _limits(source, max_len, beam_size=1):
    """max_len (None: twice the source's length + 2), refusing a limit or beam that cannot decode.
    0 is refused rather than taken for "no words": some APIs read 0 as "no limit", and a
    hypothesis of no words with no attention to show is more likely a caller's slip than a wish."""
    for name, value in (("max_len", max_len), ("beam_size", beam_size)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1):
            raise ValueError(f"decoding: {name}={value!r}; give a whole number of at least 1"
                             + (" (None: twice the source length + 2 words)" if name == "max_len" else ""))
    return 2 * source.shape[1] + 2 if max_len is None else int(max_len)


def _maybe(weights):
    return None if weights is None else np.asarray(getattr(weights, "data", weights))


@no_grad()
def greedy(model, source, lengths, eos_id, max_len=None, alpha=0.6):
    """The most likely next word at every step, until </s> or max_len words.

    -> a Hypothesis per sentence."""
    source, lengths = np.asarray(source), np.asarray(lengths)
    B, max_len = source.shape[0], _limits(source, max_len)
    memory, state = model.begin(source, lengths)
    token = np.full(B, model.bos_id, np.int64)
    written, rows, log_p = [], [], np.zeros(B)
    running = np.ones(B, bool)
    for _ in range(max_len):
        logits, state, weights = model.advance(token, memory, state)
        log_probs = _log_softmax(logits)
        token = log_probs.argmax(axis=-1)
        log_p += np.where(running, log_probs[np.arange(B), token], 0.0)
        written.append(np.where(running, token, -1))  # -1: this sentence had already ended
        rows.append(_maybe(weights))
        running &= token != eos_id
        if not running.any():
            break
    written = np.stack(written, axis=1)
    out = []
    for b in range(B):
        steps = int((written[b] >= 0).sum())
        tokens = [int(t) for t in written[b, :steps] if t != eos_id]
        attention = None if rows[0] is None else np.stack([r[b] for r in rows[:steps]])
        ended = bool(written[b, steps - 1] == eos_id)
        out.append(Hypothesis(tokens, attention, log_p[b] / length_penalty(steps, alpha), ended))
    return out


@no_grad()
def beam_search(model, source, lengths, eos_id, beam_size=4, max_len=None, alpha=0.6):
    """Keep the beam_size most likely prefixes of each sentence; return the best finished one.

    Each step every live prefix is extended by every word; of the (beam x vocabulary) extensions
    of a sentence the best 2 x beam by log-probability are looked at, in order: one ending in
    </s> among the first beam_size is finished (scored with length normalisation), the others
    refill the beam. A sentence is done with beam_size finished hypotheses; at max_len the live
    prefixes count as finished. Greedy's hypothesis is a candidate too, so a wider beam never
    returns a lower score than greedy (with beam_size 1 the search is greedy itself).

    -> a Hypothesis per sentence.
    """
    source, lengths = np.asarray(source), np.asarray(lengths)
    B, k, max_len = source.shape[0], beam_size, _limits(source, max_len, beam_size)
    rows = np.repeat(np.arange(B), k)                     # hypothesis row b * k + j belongs to sentence b
    memory, state = model.begin(source[rows], lengths[rows])
    token = np.full(B * k, model.bos_id, np.int64)
    log_p = np.tile([0.0] + [-np.inf] * (k - 1), B)       # one live prefix per sentence at the start
    history = np.zeros((B * k, 0), np.int64)
    looks = None                                          # attention so far (B * k, steps, S)
    finished = [[] for _ in range(B)]                     # Hypotheses of each sentence
    done = np.zeros(B, bool)
    for step in range(1, max_len + 1):
        logits, state, weights = model.advance(token, memory, state)
        candidates = (log_p[:, None] + _log_softmax(logits)).reshape(B, -1)   # (B, k * V)
        V = candidates.shape[1] // k
        weights = _maybe(weights)
        if weights is not None:
            looks = weights[:, None] if looks is None else np.concatenate([looks, weights[:, None]], axis=1)
        best = largest_first(candidates, 1)[:, :2 * k]  # NaN first, as torch.topk: a NaN model shows
        parents, tokens, scores = np.arange(B * k), np.full(B * k, eos_id), np.full(B * k, -np.inf)
        for b in np.flatnonzero(~done):
            filled = 0
            for rank, flat in enumerate(best[b]):
                parent, word, score = b * k + flat // V, int(flat % V), candidates[b, flat]
                if score == -np.inf or filled == k:
                    break
                if word == eos_id:
                    if rank < k:
                        finished[b].append(Hypothesis(history[parent].tolist(), None if looks is None else looks[parent],
                                                      score / length_penalty(step, alpha), True))
                    continue
                parents[b * k + filled], tokens[b * k + filled], scores[b * k + filled] = parent, word, score
                filled += 1
            done[b] = len(finished[b]) >= k
        if done.all():
            break
        state = _select(state, parents)
        history = np.concatenate([history[parents], tokens[:, None]], axis=1)
        looks = None if looks is None else looks[parents]
        token, log_p = tokens, scores
    else:  # max_len reached: the live prefixes are candidates as they are
        for b in np.flatnonzero(~done):
            for j in range(b * k, b * k + k):
                if log_p[j] > -np.inf:
                    finished[b].append(Hypothesis(history[j].tolist(), None if looks is None else looks[j],
                                                  log_p[j] / length_penalty(max_len, alpha), False))
    results = [max(f, key=_rank) for f in finished]
    if k == 1:
        return results
    return [max(r, g, key=_rank) for g, r in zip(greedy(model, source, lengths, eos_id, max_len, alpha), results)]


def _rank(hypothesis):
    """Its score, a NaN above every number (as the search ranks them): a NaN score is not hidden."""
    return np.isnan(hypothesis.score), hypothesis.score
