"""Long reviews: an LSTM's last state forgets the start; attention lets the classifier look back.

    python demos/long_reviews.py             # the quick run: about a minute on 2 quiet cores
    python demos/long_reviews.py --full      # longer training, about 4 minutes
    python demos/long_reviews.py --positions # only the Transformer, with each kind of positions
    python demos/long_reviews.py --resume    # continue an interrupted run from its checkpoints

The reviews (tinyattn/data/long_reviews.py) are filler with a verdict ("good", "not bad",
"awful", ...) in their first 15 words, which decides the label, and then remarks written the
same way, one per 8 words, that do not count. The models train on reviews of 10 to 30 words
and are tested on 10 to 200: the question is what happens to the verdict on the way to the end
of a review longer than any seen in training. Four classifiers with about the same number of
weights learn it:

  * an LSTM whose last state is all the classifier sees;
  * the same LSTM read by attention pooling (a learned softmax over all its states);
  * an LSTMN (Cheng et al. 2016, https://arxiv.org/abs/1601.06733: an LSTM that attends over
    its own past states at every step) read by attention pooling;
  * a one-layer Transformer encoder (Vaswani et al. 2017, https://arxiv.org/abs/1706.03762)
    read by attention pooling.

The same Transformer then learns it seven more times, its positions given other ways. The
sinusoidal encoding added to the words (Vaswani et al. 2017) tells each word where it is, and
past 30 words it says places never seen in training; ALiBi (Press et al. 2022, "Train Short,
Test Long", https://arxiv.org/abs/2108.12409) and RoPE (Su et al. 2021, "RoFormer",
https://arxiv.org/abs/2104.09864) tell each attention only how far apart two words are
(tinyattn/nn/positions.py); with none of them the words are a bag. Each of the four is tried
with every word attending to every word (an encoder, as above) and with each word attending to
itself and the words before it only (causal, as in the language models ALiBi was made for).

We print and plot accuracy against review length, and draw, for one long review, where the
pooling looked and what the LSTMN attended to in its own past. The LSTMN is a Python loop over
the words with attention over every earlier step (time grows with the square of the length),
so it trains on half the batch of the others.
"""
import argparse
import json
import os
import time

import numpy as np

import tinyattn as ta
import tinyattn.nn.functional as F
from tinyattn.data import PAD
from tinyattn.data.long_reviews import LABELS, NEGATIVE, POSITIVE, LongReviews
from tinyattn.models.classifiers import SequenceClassifier

BUCKETS = [(10, 30), (30, 60), (60, 100), (100, 150), (150, 200)]
TRANSFORMER = dict(encoder="transformer", hidden_size=32, dim_feedforward=64)  # sinusoidal positions
MODELS = {  # name -> (SequenceClassifier arguments, batch size relative to --batch); sizes give ~10k weights each
    "LSTM, last state": (dict(encoder="lstm", readout="last", hidden_size=36), 1),
    "LSTM + pooling": (dict(encoder="lstm", hidden_size=32), 1),
    "LSTMN + pooling": (dict(encoder="lstmn", hidden_size=24), 0.5),
    "Transformer + pooling": (TRANSFORMER, 1),
    # the same Transformer with its positions given inside the attention, then each of the three
    # reading left to right (appended: the models above keep their seeds)
    "Transformer + ALiBi": (dict(TRANSFORMER, positional="alibi"), 1),
    "Transformer + RoPE": (dict(TRANSFORMER, positional="rope"), 1),
    "causal + sinusoidal": (dict(TRANSFORMER, causal=True), 1),
    "causal + ALiBi": (dict(TRANSFORMER, positional="alibi", causal=True), 1),
    "causal + RoPE": (dict(TRANSFORMER, positional="rope", causal=True), 1),
    # and with no positions at all: a bag of words, unless the causal mask gives the order away
    "Transformer, no positions": (dict(TRANSFORMER, positional=None), 1),
    "causal, no positions": (dict(TRANSFORMER, positional=None, causal=True), 1),
}
MAIN = ("LSTM, last state", "LSTM + pooling", "LSTMN + pooling", "Transformer + pooling")
POSITIONS = {  # the Transformers compared: {what each word attends to: {positions: model name}}
    "every word": {"sinusoidal": "Transformer + pooling", "ALiBi": "Transformer + ALiBi", "RoPE": "Transformer + RoPE",
                   "none": "Transformer, no positions"},
    "words before": {"sinusoidal": "causal + sinusoidal", "ALiBi": "causal + ALiBi", "RoPE": "causal + RoPE",
                     "none": "causal, no positions"},
}
READING = {"every word": "every word attends to every word",
           "words before": "each word attends to itself and the words before it (causal)"}
TRANSFORMERS = [name for schemes in POSITIONS.values() for name in schemes.values()]


def count_parameters(model):
    return sum(p.data.size for p in model.parameters())


def train(name, model, data, steps, batch, out_dir, resume, compile=True, lr=1e-2):
    """ta.train.fit: progress line, checkpoints in out_dir, exact --resume; a compiled step
    (ta.compile) unless compile=False."""
    opt = ta.optim.Adam(model.parameters(), lr=lr)
    schedule = ta.optim.StepLR(opt, step_size=max(1, 7 * steps // 10), gamma=0.2)

    def loss_fn(tokens, lengths, labels):
        return F.cross_entropy(model(tokens, lengths)[0], labels)

    filename = name.lower().replace(",", "").replace("+", "with").replace(" ", "_")
    history = ta.train.fit(model, opt, loss_fn, steps, batches=lambda step: data.batch(batch), compile=compile,
                           checkpoint=os.path.join(out_dir, f"{filename}.ckpt.npz"),
                           checkpoint_every=50, resume=resume, clip_grad_norm=1.0, scheduler=schedule,
                           rngs={"data": data.rng}, label=f"{name:>22s}")
    if history.stopped:
        raise SystemExit(f"{name}: {history.stopped}")


@ta.no_grad()
def accuracy_by_length(model, test_sets):
    """{(low, high): fraction of reviews classified right}, for test sets {(low, high): (tokens, lengths, labels)}."""
    model.eval()
    return {bucket: float((model(tokens, lengths)[0].data.argmax(-1) == labels).mean())
            for bucket, (tokens, lengths, labels) in test_sets.items()}


def print_table(title, results, columns, rows):
    """columns {heading: model name}: accuracy per length range, then rows {label: {model name: text}}."""
    print(f"\n{title}")
    print(f"{'words':>9s} " + "".join(f"{heading:>23s}" for heading in columns))
    for bucket in BUCKETS:
        print(f"{bucket[0]:>4d}-{bucket[1]:<4d} " + "".join(f"{100 * results[name][bucket]:22.1f}%"
                                                            for name in columns.values()))
    for label, row in rows.items():
        print(f"{label:>9s} " + "".join(f"{row[name]:>23s}" for name in columns.values()))


def plot_accuracy(results, path):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    draw_curves(ax, results)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_positions(results, path):
    """One panel per way of reading (POSITIONS), a curve per kind of positions."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(POSITIONS), figsize=(11, 3.8), sharey=True)
    for ax, (reading, schemes) in zip(axes, POSITIONS.items()):
        draw_curves(ax, {scheme: results[name] for scheme, name in schemes.items() if name in results})
        ax.set_title(f"Transformer: {READING[reading]}", fontsize=9, loc="left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def draw_curves(ax, results):
    middles = [(low + high) / 2 for low, high in BUCKETS]
    for (name, by_length), marker in zip(results.items(), "osD^"):  # other markers: equal curves stay visible
        ax.plot(middles, [100 * by_length[b] for b in BUCKETS], marker=marker, markerfacecolor="none", label=name)
    ax.set_xticks(middles, [f"{low}-{high}" for low, high in BUCKETS])
    ax.set_xlabel("review length (words)")
    ax.set_ylabel("reviews classified right (%)")
    ax.set_ylim(30, 102)
    ax.axhline(50, color="grey", lw=0.8, ls=":")
    ax.grid(alpha=0.3)
    if results:
        ax.legend(fontsize=8)
    else:  # a run that trained none of this panel's models (--only picks some)
        ax.text(0.5, 0.5, "not trained in this run", transform=ax.transAxes, ha="center", va="center", color="grey")


@ta.no_grad()
def draw_one_review(models, data, path):
    """For one long review: the pooling weights of every pooled model over the words, and the
    LSTMN's attention over its own past (between opinion words). Returns the review's words and label."""
    import matplotlib.pyplot as plt

    words, label = data.review(180)
    tokens, lengths, _ = data.encode([(words, label)])
    pooled = {name: model for name, model in models.items() if model.readout == "attention"}
    fig, axes = plt.subplots(len(pooled) + 1, 1, figsize=(14, 2.0 * len(pooled) + 4.5),
                             gridspec_kw={"height_ratios": [1] * len(pooled) + [3]})
    opinions = [i for i, w in enumerate(words) if w in POSITIVE + NEGATIVE]  # the first is the verdict
    names = [("not " if i and words[i - 1] == "not" else "") + words[i] for i in opinions]
    for ax, (name, model) in zip(axes, pooled.items()):
        model.eval()
        _, weights = model(tokens, lengths)
        ax.bar(np.arange(len(words)), weights.data[0], color="tab:blue")
        for i in opinions:
            ax.axvspan(i - 1.5 if words[i - 1] == "not" else i - 0.5, i + 0.5, lw=0, alpha=0.3,
                       color="tab:green" if i == opinions[0] else "tab:orange")
        ax.set_xlim(-0.5, len(words) - 0.5)
        ax.set_ylabel("weight")
        ax.set_title(f"{name}: pooling weights (the verdict shaded green, remarks orange)", fontsize=9, loc="left")
        ax.set_xticks(opinions, names, fontsize=8)
    lstmn = models["LSTMN + pooling"]
    _, past = lstmn.encode(tokens, lengths)
    ax = axes[-1]
    ax.imshow(past.data[0], cmap="viridis", aspect="auto", vmin=0, vmax=max(1e-12, float(past.data[0].max())))
    ax.set_xticks(opinions, names, fontsize=8, rotation=60)
    ax.set_yticks(opinions, names, fontsize=8)
    ax.set_xlabel("earlier word (attended to)")
    ax.set_ylabel("word being read")
    ax.set_title("LSTMN: attention over its own past at each step", fontsize=9, loc="left")
    fig.suptitle(f"one review of {len(words)} words, {LABELS[label]}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return words, label


def main(argv=None):
    ta.set_blas_threads(1)      # small products: one BLAS thread is faster (benchmarks/RESULTS.md, "BLAS threads")
    ta.ops.keep_freed_memory()  # the same arrays every step: malloc reuses them (tinyattn/ops/memory.py)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--steps", type=int, default=1000, help="training steps per model")
    parser.add_argument("--full", action="store_true", help="train 3x longer on batches twice as big")
    parser.add_argument("--batch", type=int, default=16, help="reviews per training step (the LSTMN takes half)")
    parser.add_argument("--test-reviews", type=int, default=200, help="held-out reviews per length range")
    parser.add_argument("--train-max-length", type=int, default=30,
                        help="train on reviews of 10 to this many words (tests go up to 200)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the weights and the training reviews")
    parser.add_argument("--only", nargs="*", choices=list(MODELS), help="train only these models")
    parser.add_argument("--positions", action="store_true",
                        help="train only the Transformers (sinusoidal, ALiBi, RoPE, no positions; both ways, causal)")
    parser.add_argument("--out-dir", default="demo_out/long_reviews", help="checkpoints and pictures go here")
    parser.add_argument("--resume", action="store_true", help="continue from the checkpoints in --out-dir")
    parser.add_argument("--eager", action="store_true", help="train eagerly, not as a compiled step (ta.compile)")
    args = parser.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    steps, batch = (3 * args.steps, 2 * args.batch) if args.full else (args.steps, args.batch)

    test = LongReviews(seed=12345)
    test_sets = {}
    for low, high in BUCKETS:
        lengths = test.rng.integers(low, high + 1, size=args.test_reviews)
        test_sets[(low, high)] = test.encode([test.review(int(n)) for n in lengths])
    only = TRANSFORMERS if args.positions else args.only
    ta.manual_seed(args.seed)
    models, results, seconds = {}, {}, {}
    for index, (name, (options, batch_share)) in enumerate(MODELS.items()):
        if only and name not in only:
            continue
        models[name] = SequenceClassifier(len(test.vocab), 2, pad_id=PAD, **options)
        start = time.perf_counter()
        train(name, models[name], LongReviews(seed=100 * args.seed + index, max_length=args.train_max_length), steps,
              max(1, int(batch * batch_share)), args.out_dir, args.resume, compile=not args.eager)
        seconds[name] = time.perf_counter() - start
        results[name] = accuracy_by_length(models[name], test_sets)

    title = (f"reviews classified right, by length ({args.test_reviews} per range; trained on 10 to "
             f"{args.train_max_length} words; chance is 50%)")
    weights = {name: str(count_parameters(model)) for name, model in models.items()}
    pictures = []
    main_models = {name: name for name in MAIN if name in results}
    if main_models and not args.positions:
        print_table(title + ":", results, main_models, {"weights": weights})
        pictures.append(os.path.join(args.out_dir, "accuracy_by_length.png"))
        plot_accuracy({name: results[name] for name in main_models}, pictures[-1])
    if any(name in results for name in TRANSFORMERS if name not in MAIN):
        print(f"\nthe same Transformer with each kind of positions: {title}:")
        for reading, schemes in POSITIONS.items():
            schemes = {scheme: name for scheme, name in schemes.items() if name in results}
            if schemes:
                print_table(f"Transformer, {READING[reading]}:", results, schemes,
                            {"weights": weights, "train s": {name: f"{s:.0f}" for name, s in seconds.items()}})
        pictures.append(os.path.join(args.out_dir, "positions_by_length.png"))
        plot_positions(results, pictures[-1])
    with open(os.path.join(args.out_dir, "results.json"), "w") as f:  # the figures, for your own tables
        json.dump({"models": {name: {"by_length": {f"{low}-{high}": accuracy for (low, high), accuracy in r.items()},
                                     "weights": int(weights[name]), "train_seconds": seconds[name]}
                              for name, r in results.items()},
                   "positions": POSITIONS}, f, indent=1)
    if "LSTMN + pooling" in models:
        review = os.path.join(args.out_dir, "one_review.png")
        draw_one_review({name: models[name] for name in MAIN if name in models}, test, review)
        pictures.append(review)
    print(f"\nresults: {os.path.join(args.out_dir, 'results.json')}; pictures: {', '.join(pictures)}")
    return results


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # fit has named the checkpoint to resume from
        raise SystemExit(1) from None
