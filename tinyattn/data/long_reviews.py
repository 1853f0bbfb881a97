"""Long made-up reviews whose verdict comes first; later remarks about parts of the film do not count.

    the plot not good ... the music was great ... the actors bad ... and so on     -> negative
    this film superb ... not boring ... the camera dull ... and so on              -> positive

A review is `length` words of neutral filler. Among its first `lead` words sits the verdict, an
opinion word ("good", "awful", ...) or a negated one ("not good"): it decides the label. After
it come remarks, one per `words_per_remark` words, written the same way but with random sides:
they look like the verdict and do not count. The label is the side of the first opinion, and
negation flips a word, so a model must read the first opinion with the word before it.

A model that reads left to right and keeps one state must take the verdict in, then carry it
to the end past every remark without letting them in: up to ~190 words and 25 remarks in a
review of 200 words. Batches hold reviews of similar length (less padding); everything comes
from a seeded generator.
"""
import numpy as np

from .toy_translation import Vocabulary, pad_batch

POSITIVE = ["good", "great", "superb", "lovely", "fun"]
NEGATIVE = ["bad", "awful", "dull", "boring", "weak"]
FILLER = ("the a this that film movie story plot actor actors scene scenes music camera director it was were "
          "is of in and with on at to as by then also some many one two after before while").split()
LABELS = ["negative", "positive"]


class LongReviews:
    """Reviews of min_length..max_length words; label 1 = positive, 0 = negative.

    lead: the verdict starts within the first `lead` words.
    words_per_remark: one remark (an opinion that does not count) for every this many words.
    p_negated: how often an opinion is written negated ("not bad" for a positive one).
    """

    def __init__(self, seed=0, min_length=10, max_length=200, lead=15, words_per_remark=8, p_negated=0.3):
        self.rng = np.random.default_rng(seed)
        self.min_length, self.max_length, self.lead, self.p_negated = min_length, max_length, lead, p_negated
        self.words_per_remark = words_per_remark
        self.vocab = Vocabulary(FILLER + POSITIVE + NEGATIVE + ["not"])

    def review(self, length):
        """(words, label) with exactly `length` words."""
        rng = self.rng
        label = int(rng.integers(2))
        words = [FILLER[i] for i in rng.integers(len(FILLER), size=length)]
        start = int(rng.integers(0, min(self.lead, length - 1)))  # the verdict: words[start] and words[start + 1]
        self._write_opinion(words, start, label)
        places = np.arange(self.lead + 1, length - 1, 2)  # after the verdict, never overlapping
        for place in rng.choice(places, size=min(len(places), length // self.words_per_remark), replace=False):
            self._write_opinion(words, int(place), int(rng.integers(2)))
        return words, label

    def _write_opinion(self, words, start, meant):
        """An opinion of side `meant` in words[start + 1], negated with "not" at words[start] or not."""
        negated = self.rng.random() < self.p_negated
        side = meant != negated  # a negated opinion uses a word of the other side
        word = str(self.rng.choice(POSITIVE if side else NEGATIVE))
        if negated:
            words[start:start + 2] = ["not", word]
        else:
            words[start + 1] = word

    def encode(self, reviews):
        """[(words, label)] -> (ids (B, T) padded, lengths (B,), labels (B,))."""
        tokens, lengths = pad_batch([self.vocab.encode(words) for words, _ in reviews])
        return tokens, lengths, np.array([label for _, label in reviews])

    def batch(self, size, spread=10):
        """`size` reviews whose lengths lie within `spread` words of one another.

        The shortest length is drawn log-uniformly, so a model meets short reviews as often as
        long ones (within min_length..max_length).
        """
        low = int(np.exp(self.rng.uniform(np.log(self.min_length), np.log(self.max_length - spread + 1))))
        lengths = self.rng.integers(low, low + spread + 1, size=size)
        return self.encode([self.review(int(n)) for n in lengths])
