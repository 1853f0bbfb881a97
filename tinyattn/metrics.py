"""How good a translation is: exact match, token accuracy, corpus BLEU, and where attention looked.

The text metrics take one hypothesis and one reference per sentence, each either a list of tokens
(words or ids) or a string, which is split on whitespace (sacrebleu's tokenize="none" on
pre-tokenized text); both sides must be the same kind. Each returns a number; `by_length` applies
any of them per length bucket.

    exact_match       fraction of sentences that are exactly the reference
    token_accuracy    fraction of reference positions holding the same token in the hypothesis
    corpus_bleu       BLEU-4 over the corpus, 0 to 100 (Papineni et al. 2002)
    alignment_accuracy  fraction of target words whose strongest attention weight is on the gold
                        source word
    alignment_error_rate  AER (Och and Ney 2003) with the gold links as both sure and possible
"""
import math
from collections import Counter

SPECIAL_TOKENS = ("<pad>", "<s>", "</s>")


def exact_match(hypotheses, references):
    """Fraction of hypotheses equal to their reference, token for token."""
    hypotheses, references = _token_lists(hypotheses, references, "exact_match")
    return sum(list(h) == list(r) for h, r in zip(hypotheses, references)) / max(len(references), 1)


def token_accuracy(hypotheses, references):
    """Fraction of reference tokens matched at the same position (a missing token counts as wrong)."""
    hypotheses, references = _token_lists(hypotheses, references, "token_accuracy")
    right = sum(a == b for h, r in zip(hypotheses, references) for a, b in zip(h, r))
    return right / max(sum(len(r) for r in references), 1)


def ngrams(tokens, n):
    """Counter of the n-grams (as tuples) of one sentence."""
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def corpus_bleu(hypotheses, references, max_n=4, special_tokens=SPECIAL_TOKENS):
    """Corpus BLEU (Papineni et al. 2002), 0 to 100, as sacrebleu reports it without smoothing.

    For n = 1..4, over the whole corpus:
        matches_n  = sum over sentences of sum over the hypothesis' n-grams g of
                     min(count of g in the hypothesis, count of g in the reference)   ("clipped")
        total_n    = number of n-grams in all hypotheses
        p_n        = matches_n / total_n
    c = total hypothesis length, r = total reference length,
        brevity penalty BP = 1 if c > r else exp(1 - r / c)     (short output cannot cheat precision)
        BLEU = 100 * BP * exp(mean over n of log p_n)           (0 when any p_n is 0: no smoothing)
    Special tokens (<pad>, <s>, </s>) are removed first. Sentences given as strings are split on
    whitespace, so the score equals sacrebleu.corpus_bleu(hypotheses, [references],
    tokenize="none") whenever every n-gram order has a match (sacrebleu's default "exp" smoothing
    only changes the score when one has none; smooth_method="none" agrees always).
    """
    hypotheses, references = _token_lists(hypotheses, references, "corpus_bleu")
    matches, totals = [0] * max_n, [0] * max_n
    hyp_length = ref_length = 0
    for hypothesis, reference in zip(hypotheses, references):
        hypothesis = [t for t in hypothesis if t not in special_tokens]
        reference = [t for t in reference if t not in special_tokens]
        hyp_length += len(hypothesis)
        ref_length += len(reference)
        for n in range(1, max_n + 1):
            hyp_ngrams, ref_ngrams = ngrams(hypothesis, n), ngrams(reference, n)
            matches[n - 1] += sum(min(count, ref_ngrams[g]) for g, count in hyp_ngrams.items())
            totals[n - 1] += max(len(hypothesis) - n + 1, 0)
    if hyp_length == 0 or min(matches) == 0:
        return 0.0
    log_precision = sum(math.log(m / t) for m, t in zip(matches, totals)) / max_n
    brevity = 1.0 if hyp_length > ref_length else math.exp(1 - ref_length / hyp_length)
    return 100 * brevity * math.exp(log_precision)


def alignment_accuracy(attention, gold):
    """Fraction of target words whose attention peaks on the gold source position.

    attention: per sentence, an array (target length, source length) of weights (rows past the
    sentence's end are ignored); gold: per sentence, the gold source position of each target word."""
    _same_count(attention, gold)
    right = sum(int(row.argmax() == g) for weights, positions in zip(attention, gold)
                for row, g in zip(weights, positions))
    return right / max(sum(len(g) for g in gold), 1)


def alignment_error_rate(attention, gold):
    """AER = 1 - (|A & S| + |A & P|) / (|A| + |S|), with S = P = the gold links (target j, source i)
    and A = the links of each target word to its strongest source word. With one link a word on
    both sides it equals 1 - alignment accuracy; it is the figure papers on alignment report."""
    _same_count(attention, gold)
    predicted = sure = both = 0
    for weights, positions in zip(attention, gold):
        links = {(j, int(row.argmax())) for j, row in zip(range(len(positions)), weights)}
        gold_links = set(enumerate(positions))
        predicted, sure, both = predicted + len(links), sure + len(gold_links), both + len(links & gold_links)
    return 1 - 2 * both / max(predicted + sure, 1)


def by_length(metric, lengths, buckets, *columns):
    """{"LO-HI": metric(*columns restricted to sentences with LO <= length <= HI)} for each
    (LO, HI) in buckets; an empty bucket is left out."""
    out = {}
    for lo, hi in buckets:
        keep = [i for i, n in enumerate(lengths) if lo <= n <= hi]
        if keep:
            out[f"{lo}-{hi}"] = metric(*[[column[i] for i in keep] for column in columns])
    return out


def _token_lists(hypotheses, references, metric):
    """Both columns as lists of token lists: strings split on whitespace, token lists as given.
    Iterating a string would score characters, so a bare string or a mix of kinds is refused."""
    for name, column in (("hypotheses", hypotheses), ("references", references)):
        if isinstance(column, str):
            raise TypeError(f"{metric}: {name} is one string; pass a list with one sentence each, "
                            f"e.g. [{column[:30]!r}]")
    _same_count(hypotheses, references)
    kinds = {isinstance(sentence, str) for column in (hypotheses, references) for sentence in column}
    if len(kinds) > 1:
        raise TypeError(f"{metric}: some sentences are strings and some token lists; give every "
                        "hypothesis and reference the same way (strings are split on whitespace)")
    if kinds == {True}:
        return [h.split() for h in hypotheses], [r.split() for r in references]
    return hypotheses, references


def _same_count(a, b):
    if len(a) != len(b):
        raise ValueError(f"{len(a)} hypotheses (or weights) but {len(b)} references: one each")
