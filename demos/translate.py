"""Train a toy translator with and without attention, and look at what attention learned.

    python demos/translate.py                  # about 90 s on 2 cores
    python demos/translate.py --score general  # Luong's score instead of Bahdanau's additive one

The task (tinyattn/data/toy_translation.py): "big red cat sees small dog" -> "chat rouge grand
voit chien petit": word for word, but adjectives move behind their noun in mirror order. Two
GRU encoder-decoders learn it: one attends over the encoder states at every step (Bahdanau et
al. 2015, https://arxiv.org/abs/1409.0473), one has only the encoder's final state. We print their accuracy by sentence length,
draw the attention weights of one sentence, and plot accuracy against length.
Checkpoints are written as training goes, so --resume continues an interrupted run exactly.
"""
import argparse
import os

# Small matrix products: one BLAS thread beats two here, whose hand-offs cost more than they
# save (benchmarks/RESULTS.md, "The demo"). Set before numpy loads; your own setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import tinyattn as ta
from tinyattn.data import EOS, TOKEN_IDS, ToyTranslation, translate_words
from tinyattn.models import Seq2Seq


def train(name, model, data, steps, batch, out_dir, resume=False, lr=3e-3, checkpoint_every=100):
    """Teacher-forced training with ta.train.fit: progress line, checkpoints, exact --resume."""
    opt = ta.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(step):
        return model.loss(*data.batch(batch))

    history = ta.train.fit(model, opt, loss_fn, steps, checkpoint=os.path.join(out_dir, f"{name}.ckpt.npz"),
                           checkpoint_every=checkpoint_every, resume=resume, clip_grad_norm=1.0,
                           rngs={"data": data.rng}, label=f"{name:>14s}")
    if history.stopped:
        raise SystemExit(f"{name}: {history.stopped}")
    return model


def accuracy_by_length(model, data, pairs):
    """{source length: fraction of sentences translated exactly}, and the overall fraction."""
    correct = {}
    with ta.no_grad():
        for i in range(0, len(pairs), 128):
            chunk = pairs[i:i + 128]
            source, lengths, _ = data.encode_pairs(chunk)
            tokens, _ = model.translate(source, lengths)
            for (words, reference), row in zip(chunk, tokens):
                hits = correct.setdefault(len(words), [0, 0])
                hits[0] += data.target_vocab.decode(row) == reference
                hits[1] += 1
    by_length = {n: hit / total for n, (hit, total) in sorted(correct.items())}
    overall = sum(h for h, _ in correct.values()) / sum(t for _, t in correct.values())
    return by_length, overall


def show_attention(model, data, words, path):
    source, lengths, _ = data.encode_pairs([(words, [])])
    with ta.no_grad():
        tokens, weights = model.translate(source, lengths)
    steps = list(tokens[0])
    if EOS in steps:
        steps = steps[:steps.index(EOS) + 1]  # every step up to and with the first </s>
    written = [data.target_vocab.words[t] for t in steps]
    ta.viz.attention_heatmap(weights[0, :len(steps), :len(words)], x_labels=words, y_labels=written,
                             path=path, title="where the decoder looked for each word it wrote",
                             xlabel="source word (key)", ylabel="word written (query)")
    return data.target_vocab.decode(tokens[0])


def plot_accuracy(results, path):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for name, by_length in results.items():
        ax.plot(list(by_length), [100 * a for a in by_length.values()], marker="o", label=name)
    ax.set_xlabel("source sentence length (words)")
    ax.set_ylabel("sentences exactly right (%)")
    ax.set_ylim(-5, 105)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--steps", type=int, default=400, help="training steps per model (batches of --batch)")
    parser.add_argument("--batch", type=int, default=64, help="sentence pairs per training step")
    parser.add_argument("--score", default="additive", choices=["additive", "general", "dot", "scaled_dot", "cosine"],
                        help="attention score: additive = Bahdanau, general = Luong")
    parser.add_argument("--no-baseline", action="store_true", help="train only the model with attention")
    parser.add_argument("--test-sentences", type=int, default=600, help="held-out sentences for the accuracy table")
    parser.add_argument("--out-dir", default="translate_out", help="checkpoints and pictures go here")
    parser.add_argument("--resume", action="store_true", help="continue from the checkpoints in --out-dir")
    args = parser.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)

    test_data = ToyTranslation(max_phrases=4, seed=12345)
    test_pairs = [test_data.sentence() for _ in range(args.test_sentences)]
    models = {f"{args.score} attention": args.score}
    if not args.no_baseline:
        models["no attention"] = None
    results, overall = {}, {}
    for index, (name, score) in enumerate(models.items()):
        ta.manual_seed(index)
        data = ToyTranslation(max_phrases=4, seed=index)
        model = Seq2Seq(len(data.source_vocab), len(data.target_vocab), **TOKEN_IDS, attention=score)
        train(name.replace(" ", "_"), model, data, args.steps, args.batch, args.out_dir, args.resume)
        results[name], overall[name] = accuracy_by_length(model, test_data, test_pairs)
        if score is not None:
            attention_model = model

    print("\nsentences translated exactly, by source length:")
    print("length " + "".join(f"{name:>22s}" for name in results))
    for n in results[next(iter(results))]:
        print(f"{n:6d} " + "".join(f"{100 * r.get(n, 0):21.0f}%" for r in results.values()))
    print("   all " + "".join(f"{100 * a:21.0f}%" for a in overall.values()))

    example = "big old dog sees happy green bird likes new car".split()
    heatmap = os.path.join(args.out_dir, "attention.png")
    produced = show_attention(attention_model, test_data, example, heatmap)
    print(f"\n{' '.join(example)}\n  -> {' '.join(produced)}\n  (expected {' '.join(translate_words(example))})")
    curve = os.path.join(args.out_dir, "accuracy_by_length.png")
    plot_accuracy(results, curve)
    print(f"\npictures: {heatmap} (attention weights), {curve} (accuracy against length)")
    return overall


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # fit has named the checkpoint to resume from
        raise SystemExit(1) from None
