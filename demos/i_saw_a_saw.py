""""I saw a saw": self-attention tags a word by its context, and needs positions to do it.

    python demos/i_saw_a_saw.py            # about 15 s on 2 quiet cores
    python demos/i_saw_a_saw.py --resume   # continue an interrupted run from its checkpoints

The task (tinyattn/data/ambiguous_words.py): tag every word of sentences such as "I saw a saw"
or "the duck can a fly" as DET, ADJ, NOUN, VERB, PRON or CONJ. "saw", "can", "fly", "watch",
"duck", "book", "park" and "fish" are nouns after a determiner or an adjective and verbs after
a pronoun or a noun. Three taggers with the same number of weights learn it:

  * an MLP on each word alone: it cannot beat each word's most frequent tag (printed);
  * self-attention (queries, keys and values from learned W_q, W_k, W_v, four heads joined by
    W_o, as in Vaswani et al. 2017, https://arxiv.org/abs/1706.03762) without positional
    encoding: it sees the other words but not their order, so "I saw a saw" gives both "saw"s
    one tag;
  * the same with a sinusoidal positional encoding added to the word vectors.

We print the accuracy of each on the ambiguous words, draw every head's weights for one
sentence, and say which word each "saw" looked at most.
"""
import argparse
import os

import numpy as np

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn.data import PAD
from tinyattn.data.ambiguous_words import TAG_PAD, AmbiguousWords, majority_tag_ceiling
from tinyattn.models.taggers import AttentionTagger, TokenTagger

EXAMPLE = "I saw a saw and the duck can a fly".split()


def count_parameters(model):
    return sum(p.data.size for p in model.parameters())


def build_models(vocab_size, num_tags, embed_dim=32, num_heads=4, hidden_size=64):
    """The three taggers; the MLP's hidden layer is widened until it has as many weights as the others."""
    def attention(positional):
        return AttentionTagger(vocab_size, num_tags, pad_id=PAD, embed_dim=embed_dim, num_heads=num_heads,
                               hidden_size=hidden_size, positional=positional)

    models = {"attention + positions": attention(True), "attention, no positions": attention(False)}
    budget = count_parameters(models["attention + positions"])
    per_unit = embed_dim + 1 + num_tags  # one hidden unit of the MLP: its input weights, bias, output weights
    fixed = vocab_size * embed_dim + num_tags
    models["per-word MLP"] = TokenTagger(vocab_size, num_tags, pad_id=PAD, embed_dim=embed_dim,
                                         hidden_size=round((budget - fixed) / per_unit))
    return models


def train(name, model, data, steps, batch, out_dir, resume, compile=True, lr=1e-2):
    """ta.train.fit: progress line, checkpoints in out_dir, exact --resume; a compiled step
    (ta.compile) unless compile=False."""
    opt = ta.optim.Adam(model.parameters(), lr=lr)
    schedule = ta.optim.StepLR(opt, step_size=max(1, 7 * steps // 10), gamma=0.2)  # finer steps to finish

    def loss_fn(tokens, tags, lengths):
        return F.cross_entropy(model(tokens, lengths).transpose(1, 2), tags, ignore_index=TAG_PAD)  # classes on axis 1, as PyTorch

    history = ta.train.fit(model, opt, loss_fn, steps, batches=lambda step: data.batch(batch), compile=compile,
                           checkpoint=os.path.join(out_dir, f"{name}.ckpt.npz"),
                           checkpoint_every=100, resume=resume, clip_grad_norm=1.0, scheduler=schedule, rngs={"data": data.rng},
                           label=f"{name:>24s}")
    if history.stopped:
        raise SystemExit(f"{name}: {history.stopped}")


@ta.no_grad()
def predict(model, tokens, lengths):
    model.eval()
    return model(tokens, lengths).data.argmax(-1)


def repeated_with_two_tags(tokens, tags, ambiguous):
    """bool (B, T): ambiguous words that occur again in their sentence with the other tag."""
    twins = np.zeros_like(ambiguous)
    for b, t in zip(*np.nonzero(ambiguous)):
        same_word = tokens[b] == tokens[b, t]
        twins[b, t] = len(set(tags[b][same_word])) > 1
    return twins


def tag_example(model, data, words):
    """Tags of one sentence, and every head's weights (H, T, T) from the model's attention layer."""
    tokens, _, lengths = data.encode([(words, ["DET"] * len(words))])
    kept = nn.keep_attention_weights(model)
    tags = predict(model, tokens, lengths)[0]
    weights = kept["attention"].last_weights[0]
    nn.keep_attention_weights(model, on=False)
    return [data.tags[t] for t in tags], weights


def main(argv=None):
    ta.set_blas_threads(1)      # small products: one BLAS thread is faster (benchmarks/RESULTS.md, "BLAS threads")
    ta.ops.keep_freed_memory()  # the same arrays every step: malloc reuses them (tinyattn/ops/memory.py)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--steps", type=int, default=600, help="training steps per model")
    parser.add_argument("--batch", type=int, default=64, help="sentences per training step")
    parser.add_argument("--test-sentences", type=int, default=2000, help="held-out sentences for the accuracy")
    parser.add_argument("--out-dir", default="demo_out/i_saw_a_saw", help="checkpoints and pictures go here")
    parser.add_argument("--resume", action="store_true", help="continue from the checkpoints in --out-dir")
    parser.add_argument("--eager", action="store_true", help="train eagerly, not as a compiled step (ta.compile)")
    args = parser.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)

    test = AmbiguousWords(seed=12345)
    tokens, tags, lengths = test.batch(args.test_sentences)
    ambiguous = test.is_ambiguous(tokens)
    ceiling = majority_tag_ceiling(tokens, tags, ambiguous)
    ta.manual_seed(0)
    models = build_models(len(test.vocab), len(test.tags))
    twins = repeated_with_two_tags(tokens, tags, ambiguous)
    accuracy = {}
    for index, (name, model) in enumerate(models.items()):
        train(name.replace(" ", "_").replace(",", "").replace("+", "with"), model, AmbiguousWords(seed=index),
              args.steps, args.batch, args.out_dir, args.resume, compile=not args.eager)
        right = predict(model, tokens, lengths) == tags
        accuracy[name] = (right[ambiguous].mean(), right[tags != TAG_PAD].mean(), right[twins].mean())

    print(f"\ntags right on {ambiguous.sum()} ambiguous words ({', '.join(test.vocab.words[i] for i in test.ambiguous_ids)})"
          f" of {args.test_sentences} test sentences:")
    for name, (on_ambiguous, on_all, on_twins) in accuracy.items():
        print(f"  {name:>24s}  {100 * on_ambiguous:5.1f}%   (all words {100 * on_all:5.1f}%, "
              f"{count_parameters(models[name])} weights)")
    print(f"  {'most frequent tag':>24s}  {100 * ceiling:5.1f}%   (the best any tagger of one word at a time can do)")
    print(f"\non the {twins.sum()} words that are both a noun and a verb in their sentence (\"I saw a saw\"); "
          "blind to order, a tagger gives every copy one tag:\n  " +
          "   ".join(f"{name} {100 * on_twins:.1f}%" for name, (_, _, on_twins) in accuracy.items()))

    best = models["attention + positions"]
    example_tags, weights = tag_example(best, test, EXAMPLE)
    bag_tags, _ = tag_example(models["attention, no positions"], test, EXAMPLE)
    print(f"\n{' '.join(EXAMPLE)}")
    print(f"  with positions:    {' '.join(example_tags)}")
    print(f"  without positions: {' '.join(bag_tags)}")
    for i, word in enumerate(EXAMPLE):
        if test.vocab.ids[word] in test.ambiguous_ids:
            head = int(weights[:, i].max(-1).argmax())   # the head that looked hardest at one word
            looked = int(weights[head, i].argmax())
            print(f"  {word!r} at position {i} -> {example_tags[i]}: head {head} looked most at "
                  f"{EXAMPLE[looked]!r} (position {looked}, weight {weights[head, i, looked]:.2f})")
    picture = os.path.join(args.out_dir, "heads.png")
    ta.viz.attention_heatmap(weights, x_labels=EXAMPLE, y_labels=[f"{w} ({t})" for w, t in zip(EXAMPLE, example_tags)],
                             path=picture, title="every head of the trained tagger (attention + positions)",
                             xlabel="word attended to (key)", ylabel="word being tagged (query)", vmax=1.0)
    print(f"\npicture: {picture} (every head's weights)")
    return {"accuracy": accuracy, "ceiling": ceiling, "example_tags": example_tags}


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # fit has named the checkpoint to resume from
        raise SystemExit(1) from None
