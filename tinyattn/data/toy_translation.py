"""A toy translation task: an English-like source, a French-like target with the adjectives moved.

    source:  big red cat sees small dog          (adjectives before the noun)
    target:  chat rouge grand voit chien petit   (noun first, adjectives after, in mirror order)

Each word has one translation, so the whole difficulty is *where* to look: inside a noun
phrase the order flips, across phrases it is kept. A decoder that attends can read the right
source word at each step; one that must squeeze the sentence into one state forgets, and more
so the longer the sentence. Sentences are drawn from a seeded generator, so a run repeats.
"""
import numpy as np

PAD, BOS, EOS = 0, 1, 2
TOKEN_IDS = dict(pad_id=PAD, bos_id=BOS, eos_id=EOS)  # what a model needs to know: Seq2Seq(..., **TOKEN_IDS)
SPECIALS = ["<pad>", "<s>", "</s>"]

NOUNS = {"cat": "chat", "dog": "chien", "house": "maison", "car": "voiture", "tree": "arbre",
         "bird": "oiseau", "fish": "poisson", "book": "livre", "girl": "fille", "boy": "garcon"}
ADJECTIVES = {"big": "grand", "small": "petit", "red": "rouge", "green": "vert", "old": "vieux",
              "new": "neuf", "fast": "rapide", "happy": "heureux"}
VERBS = {"sees": "voit", "likes": "aime", "eats": "mange", "follows": "suit", "finds": "trouve"}


class Vocabulary:
    """Words <-> integer ids; ids 0, 1, 2 are <pad>, <s>, </s>."""

    def __init__(self, words):
        self.words = SPECIALS + sorted(set(words))
        self.ids = {word: i for i, word in enumerate(self.words)}

    def __len__(self):
        return len(self.words)

    def encode(self, words):
        return [self.ids[word] for word in words]

    def decode(self, ids):
        """Words up to the first </s>, without specials."""
        words = []
        for i in ids:
            if i == EOS:
                break
            if i > EOS:
                words.append(self.words[i])
        return words


def translate_words(source_words):
    """The target sentence for a source sentence (the task's ground truth)."""
    target, adjectives = [], []
    for word in source_words:
        if word in ADJECTIVES:
            adjectives.append(ADJECTIVES[word])
        elif word in NOUNS:
            target.append(NOUNS[word])
            target.extend(reversed(adjectives))  # "big red cat" -> "chat rouge grand"
            adjectives = []
        else:
            target.append(VERBS[word])
    return target


class ToyTranslation:
    """Sentences of 1..max_phrases noun phrases joined by verbs, each phrase with 0..2 adjectives."""

    def __init__(self, max_phrases=3, seed=0):
        self.max_phrases = max_phrases
        self.rng = np.random.default_rng(seed)
        self.source_vocab = Vocabulary(list(NOUNS) + list(ADJECTIVES) + list(VERBS))
        self.target_vocab = Vocabulary(list(NOUNS.values()) + list(ADJECTIVES.values()) + list(VERBS.values()))

    def sentence(self, phrases=None):
        rng = self.rng
        phrases = phrases or int(rng.integers(1, self.max_phrases + 1))
        words = []
        for p in range(phrases):
            if p:
                words.append(str(rng.choice(list(VERBS))))
            count = int(rng.integers(0, 3))
            words.extend(str(a) for a in rng.choice(list(ADJECTIVES), size=count, replace=False))
            words.append(str(rng.choice(list(NOUNS))))
        return words, translate_words(words)

    def batch(self, size):
        """(source ids (B, S), source lengths (B,), target ids (B, T+1) starting with <s>, ending with </s>)."""
        pairs = [self.sentence() for _ in range(size)]
        return self.encode_pairs(pairs)

    def encode_pairs(self, pairs):
        sources = [self.source_vocab.encode(s) for s, _ in pairs]
        targets = [[BOS] + self.target_vocab.encode(t) + [EOS] for _, t in pairs]
        source, lengths = pad_batch(sources)
        target, _ = pad_batch(targets)
        return source, lengths, target


def pad_batch(sequences):
    """Lists of ids -> (int64 array (B, max length) padded with <pad>, lengths (B,))."""
    lengths = np.array([len(s) for s in sequences], np.int64)
    out = np.full((len(sequences), lengths.max()), PAD, np.int64)
    for i, s in enumerate(sequences):
        out[i, :len(s)] = s
    return out, lengths
