"""Long made-up reviews whose opinions can sit anywhere, far from the end.

    the plot of this film was shown in ... not good ... the actors ... bad ... and so on   -> negative
    the plot of this film ... good ... the actors were ... not bad ... and so on           -> positive

A review is `length` words of neutral filler with opinions dropped at random places: an
opinion word ("good", "awful", ...) or a negated one ("not good"). A review has an odd number
of opinions, one more for every 40 words (1 to 9), and its label is the side of the majority
of them. Negation flips a word, so counting words is not enough: "not good ... bad" and
"good ... not bad" hold the same words and mean opposite things; a model must read each
opinion word with the word before it. A model that reads left to right and keeps one state
has to carry the running vote from wherever it was to the end. Batches hold reviews of
similar length (less padding); everything comes from a seeded generator.
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

    p_negated: how often an opinion is written negated ("not bad" for a positive one).
    """

    def __init__(self, seed=0, min_length=10, max_length=200, p_negated=0.3):
        self.rng = np.random.default_rng(seed)
        self.min_length, self.max_length, self.p_negated = min_length, max_length, p_negated
        self.vocab = Vocabulary(FILLER + POSITIVE + NEGATIVE + ["not"])

    def review(self, length):
        """(words, label) with exactly `length` words."""
        rng = self.rng
        label = int(rng.integers(2))
        words = [FILLER[i] for i in rng.integers(len(FILLER), size=length)]
        opinions = 1 + 2 * int(rng.integers(0, 1 + length // 40))              # odd: a vote has a winner
        agree = opinions // 2 + 1 + int(rng.integers(0, opinions - opinions // 2))  # a majority, or all
        sides = rng.permutation([label] * agree + [1 - label] * (opinions - agree))
        starts = np.sort(rng.choice(np.arange(0, length - 1, 2), size=opinions, replace=False))  # never overlapping
        for start, meant in zip(starts, sides):
            negated = rng.random() < self.p_negated
            side = meant != negated  # a negated opinion uses a word of the other side
            word = str(rng.choice(POSITIVE if side else NEGATIVE))
            if negated:
                words[start:start + 2] = ["not", word]
            else:
                words[start + 1] = word
        return words, label

    def encode(self, reviews):
        """[(words, label)] -> (ids (B, T) padded, lengths (B,), labels (B,))."""
        tokens, lengths = pad_batch([self.vocab.encode(words) for words, _ in reviews])
        return tokens, lengths, np.array([label for _, label in reviews])

    def batch(self, size, spread=10):
        """`size` reviews whose lengths lie within `spread` words of one another.

        The shortest length is drawn log-uniformly: as many batches of 10-20 words as of 100-200,
        so a model meets easy short reviews often, and every length is seen.
        """
        low = int(np.exp(self.rng.uniform(np.log(self.min_length), np.log(self.max_length - spread + 1))))
        lengths = self.rng.integers(low, low + spread + 1, size=size)
        return self.encode([self.review(int(n)) for n in lengths])
