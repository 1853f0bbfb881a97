"""A tagging task where the same word is a noun or a verb, and only its neighbours tell which.

    I    saw  a   saw       they watch the big watch     the duck can a fly
    PRON VERB DET NOUN      PRON VERB  DET ADJ NOUN      DET NOUN VERB DET NOUN

Words such as "saw", "can", "fly", "watch", "duck", "book" are nouns after a determiner or an
adjective ("a saw", "the big saw") and verbs after a pronoun or a noun ("I saw", "the duck
saw"). A tagger that sees one word at a time can do no better than each word's most frequent
tag; one that sees the other words but not their order cannot tell "I saw a saw" (verb, noun)
from the same words in any other order, so both "saw"s get the same tag. Sentences are one or
two clauses (subject verb object, joined by "and"), drawn from a seeded generator.
"""
import numpy as np

from .toy_translation import Vocabulary, pad_batch

TAGS = ["DET", "ADJ", "NOUN", "VERB", "PRON", "CONJ"]
TAG_PAD = -100  # the tag of padding: F.cross_entropy(..., ignore_index=TAG_PAD) skips it

AMBIGUOUS = ["saw", "can", "fly", "watch", "duck", "book", "park", "fish"]
NOUNS = ["dog", "man", "girl", "cat", "car", "tree"]
VERBS = ["see", "like", "need", "want", "sell", "find"]
SUBJECT_PRONOUNS = ["I", "you", "they", "we"]
OBJECT_PRONOUNS = ["me", "them", "it", "us"]
DETERMINERS = ["a", "the", "this", "my"]
ADJECTIVES = ["big", "old", "red", "new"]


class AmbiguousWords:
    """Sentences with their tags; `ambiguous` marks the words whose tag needs the context.

    p_ambiguous: how often a noun or verb slot takes one of the AMBIGUOUS words.
    """

    def __init__(self, seed=0, p_ambiguous=0.6, max_clauses=2):
        self.rng = np.random.default_rng(seed)
        self.p_ambiguous, self.max_clauses = p_ambiguous, max_clauses
        self.vocab = Vocabulary(AMBIGUOUS + NOUNS + VERBS + SUBJECT_PRONOUNS + OBJECT_PRONOUNS
                                + DETERMINERS + ADJECTIVES + ["and"])
        self.tags = TAGS
        self.ambiguous_ids = np.array(self.vocab.encode(AMBIGUOUS))

    def _word(self, plain):
        return str(self.rng.choice(AMBIGUOUS if self.rng.random() < self.p_ambiguous else plain))

    def _noun_phrase(self):
        words, tags = [str(self.rng.choice(DETERMINERS))], ["DET"]
        if self.rng.random() < 0.3:
            words.append(str(self.rng.choice(ADJECTIVES)))
            tags.append("ADJ")
        return words + [self._word(NOUNS)], tags + ["NOUN"]

    def _clause(self):
        if self.rng.random() < 0.5:
            words, tags = [str(self.rng.choice(SUBJECT_PRONOUNS))], ["PRON"]
        else:
            words, tags = self._noun_phrase()
        words, tags = words + [self._word(VERBS)], tags + ["VERB"]
        if self.rng.random() < 0.2:
            obj = [str(self.rng.choice(OBJECT_PRONOUNS))], ["PRON"]
        else:
            obj = self._noun_phrase()
        return words + obj[0], tags + obj[1]

    def sentence(self):
        """(words, tags): one clause or several joined by "and"."""
        words, tags = self._clause()
        for _ in range(int(self.rng.integers(1, self.max_clauses + 1)) - 1):
            more_words, more_tags = self._clause()
            words, tags = words + ["and"] + more_words, tags + ["CONJ"] + more_tags
        return words, tags

    def encode(self, pairs):
        """[(words, tags)] -> (token ids (B, T) padded with PAD, tag ids (B, T) padded with TAG_PAD, lengths (B,))."""
        tokens, lengths = pad_batch([self.vocab.encode(words) for words, _ in pairs])
        tags = np.full(tokens.shape, TAG_PAD, np.int64)
        for row, (_, sentence_tags) in enumerate(pairs):
            tags[row, :len(sentence_tags)] = [TAGS.index(tag) for tag in sentence_tags]
        return tokens, tags, lengths

    def batch(self, size):
        return self.encode([self.sentence() for _ in range(size)])

    def is_ambiguous(self, tokens):
        """bool array of tokens' shape: True where the word is one of AMBIGUOUS."""
        return np.isin(tokens, self.ambiguous_ids)


def majority_tag_ceiling(tokens, tags, ambiguous):
    """The best accuracy on the ambiguous positions of any tagger that sees one word at a time:
    each word gets its most frequent tag (counted on these very sentences)."""
    hits = 0
    for word in np.unique(tokens[ambiguous]):
        word_tags = tags[ambiguous & (tokens == word)]
        hits += np.bincount(word_tags).max()
    return hits / max(1, ambiguous.sum())
