"""What does "it" refer to? Sentences where only the adjective at the end can tell.

    the animal did n't cross the street because it was too tired     it = animal
    the animal did n't cross the street because it was too wide      it = street

(the example of Jay Alammar's "The Illustrated Transformer",
https://jalammar.github.io/illustrated-transformer/). Each sentence names two or three things
of different kinds (an animal, a way across, a load) and ends with an adjective that fits only
one kind: an animal is tired or scared, a street wide or busy, a box heavy or full. The answer
is the position of that noun. Templates put the nouns in either order, words that fit any kind
("old", "yesterday", "really") stretch the distances, so neither "the first noun" nor "the
noun three words back" is right: a model has to read the adjective, then find the noun that
matches it. Sentences are drawn from a seeded generator.
"""
import numpy as np

from .toy_translation import Vocabulary, pad_batch

KINDS = {  # kind -> (nouns, adjectives that fit only this kind)
    "animal": (["animal", "dog", "cat", "horse", "cow", "fox"], ["tired", "scared", "sleepy", "hungry", "lazy"]),
    "way": (["street", "road", "river", "bridge", "track"], ["wide", "busy", "long", "icy", "muddy"]),
    "load": (["box", "bag", "crate", "sack"], ["heavy", "full", "bulky", "awkward"]),
}
TEMPLATES = [  # {animal} {way} {load} are noun phrases; the last word of each is the noun
    "{animal} did n't cross {way}",
    "{animal} would n't cross {way}",
    "{way} stopped {animal}",
    "{animal} with {load} did n't cross {way}",
    "{animal} could n't carry {load} over {way}",
    "{load} slowed {animal} on {way}",
    "{way} was too much for {animal}",
]
ANY_KIND = ["old", "little", "brown", "big"]          # adjectives that fit every noun
TIME = ["", "", "yesterday", "at night", "this morning"]
BEFORE_TOO = ["was", "was", "was really", "seemed", "was far", "was just"]


class WhatIsIt:
    """Sentences ending "because it ... too ADJECTIVE", with the position of the noun "it" means."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        words = ["the", "because", "it", "too"] + [w for t in TEMPLATES + ANY_KIND + TIME + BEFORE_TOO
                                                   for w in t.split() if "{" not in w]
        for nouns, adjectives in KINDS.values():
            words += nouns + adjectives
        self.vocab = Vocabulary(words)

    def _pick(self, options):
        return options[int(self.rng.integers(len(options)))]

    def sentence(self):
        """(words, position of "it", position of the noun it refers to, kind of that noun)."""
        template = self._pick(TEMPLATES)
        kinds = [kind for kind in KINDS if "{" + kind + "}" in template]
        phrases = {}
        for kind in kinds:
            noun = self._pick(KINDS[kind][0])
            described = self.rng.random() < 0.3
            phrases[kind] = "the " + (self._pick(ANY_KIND) + " " if described else "") + noun
        referent = self._pick(kinds)
        clause = template.format(**phrases).split()
        tail = " ".join(part for part in [self._pick(TIME), "because it", self._pick(BEFORE_TOO), "too",
                                          self._pick(KINDS[referent][1])] if part).split()
        words = clause + tail
        it_position = words.index("it")
        # the referent's noun: its phrase starts after the template's words before "{kind}"
        before = template.split("{" + referent + "}")[0].format(**phrases).split()
        noun_position = len(before) + len(phrases[referent].split()) - 1
        return words, it_position, noun_position, referent

    def encode(self, sentences):
        """[(words, it, noun, kind)] -> (ids (B, T) padded, lengths (B,), it positions (B,), noun positions (B,))."""
        tokens, lengths = pad_batch([self.vocab.encode(s[0]) for s in sentences])
        return tokens, lengths, np.array([s[1] for s in sentences]), np.array([s[2] for s in sentences])

    def batch(self, size):
        return self.encode([self.sentence() for _ in range(size)])
