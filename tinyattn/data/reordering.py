"""The hard language pair: verbs move to the end of their clause, modifiers cross their noun,
relative clauses nest inside noun phrases. Sentences of 5 to 50 words, each with its gold alignment.

    source:  the big dog that sees a cat likes the fish
             0   1   2   3    4    5 6   7     8   9               (positions)
    target:  aru neko miru no   sono inu okii sono sakana suki
    gold:    5   6    4    3    0    2   1    8    9      7        (source position of each target word)
             a   cat  sees that the  dog big  the  fish   likes

The source is English-like (subject verb object), the target verb-final like Japanese or
Turkish. Grammar of the source, unambiguous (every sentence has one parse):

    sentence  = clause ("and" clause)*
    clause    = np VERB np
    np        = DET ADJ{0,2} NOUN [relative]       at most one relative clause per noun phrase
    relative  = "that" VERB np                     nested at most MAX_DEPTH deep

and of the target, built from that parse:

    clause'   = np'(subject) np'(object) VERB'     the verb goes to the end of its clause
    np'       = [relative'] DET' NOUN' ADJ'...     the relative clause moves in front of its noun
                                                   and the adjectives behind it, in mirror order
    relative' = np'(object) VERB' "que"

Every source word has exactly one target word (the lexicon is one-to-one, "the" -> "le",
"that" -> "que", "and" -> "et"), so each target word has one gold source position: where a
decoder that attends should look to write it. A verb can travel across a whole nested
object (up to ~20 words), which a decoder holding one summary state must carry all the way.

Lengths are drawn uniformly from [min_length, max_length]; a sentence grows from one
five-word clause by random expansions (an adjective, a relative clause, another clause) until
it has the drawn length. Held-out sentences (ReorderingSplits: dev and test) never occur in
training: the training stream skips them.
"""
import numpy as np

from .toy_translation import ToyTranslation, Vocabulary

LEXICON = {
    # nouns
    "cat": "neko", "dog": "inu", "bird": "tori", "fish": "sakana", "horse": "uma", "girl": "shojo",
    "boy": "shonen", "teacher": "sensei", "doctor": "isha", "king": "o",
    # adjectives
    "big": "okii", "small": "chiisai", "red": "akai", "old": "furui", "young": "wakai", "happy": "ureshii",
    "quick": "hayai", "quiet": "shizuka",
    # verbs
    "sees": "miru", "likes": "suki", "follows": "ou", "helps": "tasukeru", "calls": "yobu", "finds": "mitsukeru",
    # function words
    "the": "sono", "a": "aru", "that": "no", "and": "soshite",
}
NOUNS = ["cat", "dog", "bird", "fish", "horse", "girl", "boy", "teacher", "doctor", "king"]
ADJECTIVES = ["big", "small", "red", "old", "young", "happy", "quick", "quiet"]
VERBS = ["sees", "likes", "follows", "helps", "calls", "finds"]
DETERMINERS = ["the", "a"]
MAX_ADJECTIVES, MAX_DEPTH = 2, 2


class NounPhrase:
    """DET ADJ* NOUN [that VERB np]: a node of the parse, `depth` relative clauses deep."""

    def __init__(self, rng, depth):
        self.det, self.noun, self.adjectives = str(rng.choice(DETERMINERS)), str(rng.choice(NOUNS)), []
        self.verb, self.object, self.depth = None, None, depth  # the relative clause, when there is one

    def source(self):
        words = [self.det] + self.adjectives + [self.noun]
        if self.verb:
            words += ["that", self.verb] + self.object.source()
        return words

    def __len__(self):
        return len(self.source())

    def phrases(self):
        """This phrase and every phrase nested in it."""
        return [self] + (self.object.phrases() if self.object else [])


class Clause:
    def __init__(self, rng):
        self.subject, self.verb, self.object = NounPhrase(rng, 0), str(rng.choice(VERBS)), NounPhrase(rng, 0)

    def source(self):
        return self.subject.source() + [self.verb] + self.object.source()


def reorder(words):
    """The target order of a source sentence, as source positions: parse, then build the target.

    Returns a list p with target word j = LEXICON[words[p[j]]] (the gold alignment)."""
    position = 0

    def take(expected):
        nonlocal position
        if position >= len(words) or not expected(words[position]):
            raise ValueError(f"not a sentence of this grammar: {' '.join(words)!r} at word {position}")
        position += 1
        return position - 1

    def noun_phrase():
        det = take(DETERMINERS.__contains__)
        adjectives = []
        while position < len(words) and words[position] in ADJECTIVES:
            adjectives.append(take(ADJECTIVES.__contains__))
        noun = take(NOUNS.__contains__)
        relative = []
        if position < len(words) and words[position] == "that":
            that, verb = take("that".__eq__), take(VERBS.__contains__)
            relative = noun_phrase() + [verb, that]            # relative' = np' VERB' que
        return relative + [det, noun] + adjectives[::-1]      # np' = relative' DET' NOUN' ADJ' (mirror)

    def clause():
        subject = noun_phrase()
        verb = take(VERBS.__contains__)
        return subject + noun_phrase() + [verb]               # clause' = subject' object' VERB'

    order = clause()
    while position < len(words):
        order += [take("and".__eq__)] + clause()
    return order


def translate(words):
    """(target words, gold source position of each) for a source sentence of the grammar."""
    order = reorder(words)
    return [LEXICON[words[p]] for p in order], order


class Reordering:
    """A stream of training pairs; dev and test sentences (ReorderingSplits) are never drawn."""

    def __init__(self, min_length=5, max_length=50, seed=0, held_out=()):
        self.min_length, self.max_length = min_length, max_length
        self.rng = np.random.default_rng(seed)
        self.held_out = set(held_out)  # tuples of source words
        self.source_vocab = Vocabulary(list(LEXICON))
        self.target_vocab = Vocabulary(list(LEXICON.values()))

    def source_sentence(self, length=None):
        """Source words of exactly `length` words (drawn uniformly when None)."""
        rng = self.rng
        length = length or int(rng.integers(self.min_length, self.max_length + 1))
        clauses = [Clause(rng)]
        size = 5
        while size < length:
            phrases = [p for c in clauses for root in (c.subject, c.object) for p in root.phrases()]
            room = length - size
            moves = [("adjective", p) for p in phrases if len(p.adjectives) < MAX_ADJECTIVES]
            if room >= 4:
                moves += [("relative", p) for p in phrases if p.verb is None and p.depth < MAX_DEPTH]
            if room >= 6:
                moves += [("clause", None)] * max(1, len(phrases) // 3)
            if not moves:  # every phrase full and no room for a clause: end a few words short
                break
            kind, phrase = moves[int(rng.integers(len(moves)))]
            if kind == "clause":
                clauses.append(Clause(rng))
                size += 6
            elif kind == "relative":
                phrase.verb, phrase.object = str(rng.choice(VERBS)), NounPhrase(rng, phrase.depth + 1)
                size += 4
            else:
                phrase.adjectives.append(str(rng.choice([a for a in ADJECTIVES if a not in phrase.adjectives])))
                size += 1
        words = clauses[0].source()
        for clause in clauses[1:]:
            words += ["and"] + clause.source()
        return words

    def sentence(self, length=None):
        """(source words, target words, gold alignment) of a sentence not held out."""
        while True:
            words = self.source_sentence(length)
            if tuple(words) not in self.held_out:
                target, alignment = translate(words)
                return words, target, alignment

    def batch(self, size):
        """(source ids (B, S), lengths (B,), target ids (B, T+2) with <s> ... </s>) for training."""
        return self.encode_pairs([self.sentence()[:2] for _ in range(size)])

    # [(source words, target words)] -> padded ids, exactly as the quick pair encodes its own
    encode_pairs = ToyTranslation.encode_pairs


class ReorderingSplits:
    """Fixed dev and test sets (disjoint: a sentence is in one at most) and a training stream
    that skips both. `per_length` sentences of each length from min_length to max_length."""

    def __init__(self, per_length=10, dev_per_length=2, min_length=5, max_length=50, seed=0):
        maker = Reordering(min_length, max_length, seed=10_000 + seed)
        self.test, self.dev, seen = [], [], set()
        for split, count in ((self.test, per_length), (self.dev, dev_per_length)):
            for length in range(min_length, max_length + 1):
                while sum(len(s[0]) == length for s in split) < count:
                    example = maker.sentence(length)
                    if tuple(example[0]) not in seen:  # short sentences repeat: keep each once
                        seen.add(tuple(example[0]))
                        split.append(example)
        self.train = Reordering(min_length, max_length, seed=seed, held_out=seen)
