"""Train translators with and without attention on a language pair with long-range reordering.

    python demos/translate.py                         # Bahdanau's attention against none (about 2 min)
    python demos/translate.py --decoder luong --score dot      # one model: none, bahdanau, luong, transformer
    python demos/translate.py --translate "the dog sees a cat" # the trained model, beam search
    echo "a cat likes the fish" | python demos/translate.py --translate -
    python demos/translate.py --vocab                 # the words --translate knows
    python demos/translate.py --compare --short       # every decoder on one budget (about 3 min)
    python demos/translate.py --pair quick            # the small pair: adjectives move behind their noun

The pair (tinyattn/data/reordering.py): "the big dog that sees a cat likes the fish" ->
"aru neko miru no sono inu okii sono sakana suki": verbs go to the end of their clause, relative
clauses in front of their noun, adjectives behind it; sentences of 5 to 50 words. A decoder that
attends can look up the source word it needs at each step (Bahdanau et al. 2015,
https://arxiv.org/abs/1409.0473); one that has only the encoder's final state must carry the
whole sentence in it. The run prints exact match, BLEU and alignment accuracy by sentence
length, and writes pictures and results.json to translate_out/. Checkpoints are written as
training goes: --resume continues an interrupted run exactly, --translate uses them.
"""
import argparse
import json
import os
import sys
import time
from collections import Counter

import numpy as np

import tinyattn as ta
from tinyattn import metrics
from tinyattn.data import TOKEN_IDS, BucketedStream, ReorderingSplits, ToyTranslation, translate_words
from tinyattn.data.reordering import translate as reorder_translate
from tinyattn.models import LuongSeq2Seq, Seq2Seq, TransformerSeq2Seq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # translate_cli.py, beside this file
from translate_cli import ablation_command, compare_command, translate_command, vocab_command  # noqa: E402

BUCKETS = {"hard": [(5, 10), (11, 20), (21, 30), (31, 40), (41, 50)], "quick": [(1, 4), (5, 8), (9, 12), (13, 16)]}
SCORES = {"bahdanau": ["additive", "general", "dot", "scaled_dot", "cosine"], "luong": ["general", "dot", "concat"]}
COMPARED = [("none", None), ("bahdanau", "additive"), ("luong", "dot"), ("luong", "general"), ("luong", "concat"),
            ("transformer", None)]
# The Transformer's recipe (docs/transformer_translator.md): rotary positions in every attention,
# the cross-attention's included, label smoothing 0.1, pre-norm, Adam from 3e-3 with 50 steps of
# warmup and a cosine decay; 600 steps. The recurrent decoders train 1,200 steps. Batches of similar
# lengths from pools of 2 ("pool_batches": 2, BucketedStream; 0: drawn at random): 35 % padding instead
# of 44 %, still mixed enough that 600 steps end at 99-100 % in every bucket on seeds 0, 1, 2, 5, where
# pools of 10 (17 % padding) fell short at 500 and 500 steps of pools of 2 ended at 98 % on seed 0.
TRANSFORMER = {"positions": "rope", "label_smoothing": 0.1, "norm_first": True, "warmup_cosine": True,
               "pool_batches": 2}
STEPS = {"transformer": 600}
LONG_BUCKETS = [(51, 75), (76, 100)]  # --compare's sentences longer than any trained on


class Pair:
    """The data of a run: training stream, test sentences (words, reference, gold alignment or None)."""

    def __init__(self, name, test_per_length):
        self.name = name
        if name == "hard":
            splits = ReorderingSplits(per_length=test_per_length)
            self.train, self.test, self.max_words = splits.train, splits.test, 50
        else:
            self.train, self.max_words = ToyTranslation(max_phrases=4, seed=0), 15
            test = ToyTranslation(max_phrases=4, seed=12345)
            self.test = [(w, t, None) for w, t in (test.sentence() for _ in range(40 * test_per_length))]
        self.source_vocab, self.target_vocab = self.train.source_vocab, self.train.target_vocab

    def reference(self, words):
        return reorder_translate(words)[0] if self.name == "hard" else translate_words(words)


def model_name(decoder, score):
    """Where a model's checkpoint and figures go: none, bahdanau (its additive score), bahdanau_dot,
    luong_general, transformer, ..."""
    plain = score is None or decoder in ("none", "transformer") or (decoder, score) == ("bahdanau", "additive")
    return decoder if plain else f"{decoder}_{score}"


def build(decoder, score, pair, hidden, recipe=None):
    """The model; a Transformer follows TRANSFORMER, or `recipe` (an ablation's variant of it)."""
    V, W = len(pair.source_vocab), len(pair.target_vocab)
    if decoder == "luong":
        return LuongSeq2Seq(V, W, **TOKEN_IDS, hidden_size=hidden, score=score)
    if decoder == "transformer":
        recipe = recipe or TRANSFORMER
        return TransformerSeq2Seq(V, W, **TOKEN_IDS, d_model=hidden, positions=recipe["positions"],
                                  label_smoothing=recipe["label_smoothing"], norm_first=recipe["norm_first"])
    return Seq2Seq(V, W, **TOKEN_IDS, hidden_size=hidden, attention=None if decoder == "none" else score)


def train(name, model, pair, args, out_dir, steps, warmup_cosine, pool_batches=0):
    """Teacher-forced training with ta.train.fit (progress line, checkpoints, exact --resume).
    Adam from 3e-3 (--lr); with warmup_cosine (the Transformer's) 50 steps of linear warmup, then
    a cosine decay to 0; otherwise the rate drops to a fifth for the last 40 % of the steps.
    pool_batches > 0: batches of similar lengths (BucketedStream), else drawn at random."""
    opt = ta.optim.Adam(model.parameters(), lr=args.lr or 3e-3)
    if warmup_cosine:
        schedule = ta.optim.WarmupCosine(opt, warmup_steps=min(50, steps // 4), total_steps=steps)
    else:
        schedule = ta.optim.StepLR(opt, step_size=max(1, int(0.6 * steps)), gamma=0.2)
    start = time.perf_counter()
    # checkpoints every 100 steps fall between pools (of 2, or 10): --resume continues the bucketed stream exactly
    batches = (BucketedStream(pair.train, args.batch, pool_batches, multiple=8) if pool_batches
               else lambda step: pair.train.batch(args.batch))
    history = ta.train.fit(model, opt, model.loss, steps, batches=batches,
                           compile=not args.eager,  # a compiled step (ta.compile); --eager turns it off
                           checkpoint=os.path.join(out_dir, f"{name}.ckpt.npz"), checkpoint_every=100,
                           resume=args.resume, clip_grad_norm=1.0, scheduler=schedule,
                           rngs={"data": pair.train.rng}, label=f"{name:>16s}")
    if history.stopped:
        raise SystemExit(f"{name}: {history.stopped}")
    with open(os.path.join(out_dir, f"{name}.json"), "w") as f:
        json.dump({"decoder": name, "pair": pair.name, "hidden": args.hidden, "steps": steps,
                   **({"positions": model.positions_kind} if isinstance(model, TransformerSeq2Seq) else {})}, f)
    return history, time.perf_counter() - start


def evaluate(model, pair, beam=1, test=None, buckets=None):
    """Exact match, BLEU and alignment accuracy on the test sentences (or `test`, in `buckets`,
    without alignment), overall and by length."""
    hyps, refs, looks, golds = [], [], [], []
    examples = pair.test if test is None else test
    with ta.no_grad():
        model.eval()
        for i in range(0, len(examples), 128):
            chunk = examples[i:i + 128]
            source, lengths, target = pair.train.encode_pairs([(w, t) for w, t, _ in chunk])
            hyps += [pair.target_vocab.decode(h.tokens) for h in model.decode(source, lengths, beam_size=beam)]
            refs += [t for _, t, _ in chunk]
            if (test is None and chunk[0][2] is not None
                    and not (isinstance(model, Seq2Seq) and model.decoder.attention_kind is None)):
                weights = model.teacher_forced_weights(source, lengths, target)  # where it looks to write word t
                looks += [w[:len(g), :len(s)] for w, (s, _, g) in zip(weights, chunk)]
                golds += [g for _, _, g in chunk]
    lengths = [len(w) for w, _, _ in examples]
    figures = {"exact": (metrics.exact_match, hyps, refs), "bleu": (metrics.corpus_bleu, hyps, refs)}
    if looks:
        figures["align"] = (metrics.alignment_accuracy, looks, golds)
    result = {"by_length": {}, "overall": {}}
    for key, (metric, *columns) in figures.items():
        result["overall"][key] = metric(*columns)
        for bucket, value in metrics.by_length(metric, lengths, buckets or BUCKETS[pair.name], *columns).items():
            result["by_length"].setdefault(bucket, {})[key] = value
    for row in result["by_length"].values():
        row.setdefault("align", None)
    result["overall"].setdefault("align", None)
    result["align_misses"] = alignment_misses(looks, golds, refs)
    return result


def alignment_misses(looks, golds, refs):
    """{target word: how often the attention's peak missed its gold source word}, most missed first."""
    missed = Counter(words[t] for weights, gold, words in zip(looks, golds, refs)
                     for t, (row, g) in enumerate(zip(weights, gold)) if row.argmax() != g)
    return dict(missed.most_common())


def print_table(results):
    names = list(results)
    print("\nby source length (words): exact match %, BLEU, alignment accuracy % (greedy decoding)")
    print(f"{'words':>7s}" + "".join(f"{name:>26s}" for name in names))
    buckets = list(results[names[0]]["by_length"]) + ["all"]
    for bucket in buckets:
        cells = []
        for name in names:
            r = results[name]["overall"] if bucket == "all" else results[name]["by_length"][bucket]
            align = "    -" if r["align"] is None else f"{100 * r['align']:5.1f}"
            cells.append(f"{100 * r['exact']:9.1f} {r['bleu']:6.1f} {align}")
        print(f"{bucket:>7s}" + "".join(f"{c:>26s}" for c in cells))


def plot_curves(results, histories, path_accuracy, path_loss):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
    for name, r in results.items():
        buckets = list(r["by_length"])
        middles = [np.mean([int(x) for x in b.split("-")]) for b in buckets]
        axes[0].plot(middles, [100 * r["by_length"][b]["exact"] for b in buckets], marker="o", label=name)
        axes[1].plot(middles, [r["by_length"][b]["bleu"] for b in buckets], marker="o", label=name)
    axes[0].set(ylabel="sentences exactly right (%)", ylim=(-5, 105))
    axes[1].set(ylabel="BLEU", ylim=(-5, 105))
    for ax in axes:
        ax.set_xlabel("source sentence length (words)")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path_accuracy, dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for name, history in histories.items():
        ax.plot(np.arange(1, len(history.losses) + 1), history.losses, label=name, lw=0.8)
    ax.set(xlabel="training step", ylabel="cross-entropy (per word)", yscale="log")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path_loss, dpi=110)
    plt.close(fig)


def draw_alignment(model, pair, words, gold, path):
    """Attention of the beam-decoded translation of one sentence, the gold source word of each
    written word marked with a circle (where it should look)."""
    import matplotlib.pyplot as plt

    source, lengths, _ = pair.train.encode_pairs([(words, [])])
    (best,) = model.decode(source, lengths, beam_size=4)
    written = pair.target_vocab.decode(best.tokens) + ["</s>"] * best.ended
    fig = ta.viz.attention_heatmap(best.attention[:len(written), :len(words)], x_labels=words, y_labels=written,
                                   title="where the decoder looked (circles: the gold source word)",
                                   xlabel="source word", ylabel="word written")
    ax = fig.axes[0]
    marks = [(g, j) for j, g in enumerate(gold) if j < len(written)]
    ax.scatter([g for g, _ in marks], [j for _, j in marks], s=30, facecolors="none", edgecolors="red", lw=1)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return written


def write_pages(model, pair, words, out_dir):
    """Two pages for a browser: the model's attention on one test sentence while it reads the
    reference (weights and -dL/dscores), and the backward walk of that sentence's loss, node by
    node, built from primitive ops (ta.fused(False)) so that every attention step is in it."""
    reference = pair.reference(words)
    source, lengths, target = pair.train.encode_pairs([(words, reference)])
    ta.viz.attention_page(model, (source[0], target[0]), os.path.join(out_dir, "attention.html"),
                          labels=(words, ["<s>"] + reference + ["</s>"]))
    with ta.fused(False):
        loss = model.loss(source, lengths, target)
    loss.backward(retain_graph=True)
    ta.viz.walk_page(loss, os.path.join(out_dir, "walk.html"), params=dict(model.named_parameters()))
    model.zero_grad()  # these gradients were for looking at


def run(args, decoders, variants=None, longer=None):
    """Train and test each (decoder, score); `variants` {name: Transformer recipe} instead trains
    one Transformer per recipe, all from the same initial seed (the ablation); `longer`: test
    sentences longer than any trained on, scored in LONG_BUCKETS as results[name]["longer"]."""
    out_dir = args.out_dir
    os.makedirs(out_dir, exist_ok=True)
    pair = Pair(args.pair, args.test_per_length)
    results, histories = {}, {}
    runs = [(model_name(d, s), d, s, None) for d, s in decoders] if variants is None else \
        [(name, "transformer", None, recipe) for name, recipe in variants.items()]
    for index, (name, decoder, score, recipe) in enumerate(runs):
        ta.manual_seed(args.seed + (index if variants is None else 0))
        model = build(decoder, score, pair, args.hidden, recipe)
        steps = args.steps or STEPS.get(decoder, 1200)
        warmup_cosine = decoder == "transformer" and (recipe or TRANSFORMER)["warmup_cosine"]
        pool_batches = (recipe or TRANSFORMER)["pool_batches"] if decoder == "transformer" else 0
        histories[name], seconds = train(name, model, pair, args, out_dir, steps, warmup_cosine, pool_batches)
        results[name] = evaluate(model, pair)
        results[name].update(train_seconds=seconds, steps=steps,
                             parameters=int(sum(p.data.size for p in model.parameters())))
        if longer:
            results[name]["longer"] = evaluate(model, pair, test=longer, buckets=LONG_BUCKETS)["by_length"]
        if decoder != "none":
            attending = model
    print_table(results)
    words = sum(len(gold) for _, _, gold in pair.test) if pair.name == "hard" else 0
    for name, r in results.items():
        if r["overall"]["align"] is not None:  # has attention, and the pair has gold alignments
            misses = sum(r["align_misses"].values())
            most = list(r["align_misses"].items())[:1]  # (word, count) of the most missed word, if any
            worst = "".join(f"; {count} of them writing {word!r}, which the references hold "
                            f"{sum(reference.count(word) for _, reference, _ in pair.test)} times"
                            for word, count in most)
            print(f"{name}: its attention peaked off the gold source word for {misses} of {words} target words{worst}")
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump({"models": results}, f, indent=1)
    plot_curves(results, histories, os.path.join(out_dir, "accuracy_by_length.png"),
                os.path.join(out_dir, "loss.png"))
    if any(d != "none" for d, _ in decoders):
        words, _, gold = max(pair.test, key=lambda example: len(example[0]))  # the longest test sentence
        gold = gold if gold is not None else []  # the quick pair has no gold alignment
        written = draw_alignment(attending, pair, words, gold, os.path.join(out_dir, "attention.png"))
        print(f"\n{' '.join(words)}\n  -> {' '.join(written)}\n  (expected {' '.join(pair.reference(words))})")
        write_pages(attending, pair, words, out_dir)
    print(f"\nwritten to {out_dir}/: results.json, accuracy_by_length.png, loss.png"
          + (", attention.png, attention.html, walk.html (open them in a browser)"
             if any(d != "none" for d, _ in decoders) else ""))
    return results


def at_least_one(text):
    """argparse type: a whole number >= 1 (a beam, batch or size of 0 has nothing to work with)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is too small: give 1 or more")
    return value


def main(argv=None):
    ta.set_blas_threads(1)      # small products: one BLAS thread is faster (benchmarks/RESULTS.md, "BLAS threads")
    ta.ops.keep_freed_memory()  # the same arrays every step: malloc reuses them (tinyattn/ops/memory.py)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--pair", default="hard", choices=["hard", "quick"], help="language pair")
    parser.add_argument("--decoder", choices=["none", "bahdanau", "luong", "transformer"],
                        help="train (or, with --translate, use) this one model; default: bahdanau and none")
    parser.add_argument("--score", help="attention score: bahdanau additive|general|dot|scaled_dot|cosine "
                                        "(default additive), luong dot|general|concat (default general)")
    parser.add_argument("--steps", type=at_least_one, help="training steps per model (batches of --batch); default "
                                                           "1200, the Transformer's 600")
    parser.add_argument("--batch", type=at_least_one, default=64, help="sentence pairs per training step")
    parser.add_argument("--lr", type=float, help="Adam's first learning rate (default 3e-3)")
    parser.add_argument("--hidden", type=at_least_one, default=64, help="GRU size per direction; the Transformer's d_model")
    parser.add_argument("--seed", type=int, default=0, help="seed of the initial weights (model i of a run: seed + i); "
                                                            "the sentences stay the same")
    parser.add_argument("--test-per-length", type=int, default=10, help="test sentences of each length")
    parser.add_argument("--out-dir", default="translate_out", help="checkpoints, pictures, results.json")
    parser.add_argument("--resume", action="store_true", help="continue from the checkpoints in --out-dir")
    parser.add_argument("--eager", action="store_true", help="train eagerly, not as a compiled step (ta.compile)")
    parser.add_argument("--translate", metavar="TEXT", help='translate TEXT with the trained model ("-": one '
                                                           "sentence per line from stdin); trains nothing")
    parser.add_argument("--vocab", action="store_true", help="list the words --translate knows (for --pair); "
                                                             "trains nothing")
    parser.add_argument("--beam", type=at_least_one, default=4, help="beam size for --translate")
    parser.add_argument("--compare", action="store_true", help="every decoder on one budget: report.md, compare.png and "
                                                               "checkpoints in OUT_DIR/compare/ (translate_out/compare/)")
    parser.add_argument("--short", action="store_true", help="with --compare: 300 steps each (about 3 minutes)")
    parser.add_argument("--ablation", action="store_true", help="the Transformer's recipe with each ingredient off "
                                                                "alone: results.json and ablation.md in OUT_DIR/ablation/")
    args = parser.parse_args(argv)
    if args.score and args.decoder not in SCORES:
        parser.error("--score goes with --decoder bahdanau or --decoder luong")
    if args.score and args.score not in SCORES[args.decoder]:
        parser.error(f"--decoder {args.decoder} takes --score {', '.join(SCORES[args.decoder])}")
    score = args.score or {"bahdanau": "additive", "luong": "general"}.get(args.decoder)
    if args.vocab:
        return vocab_command(args, Pair)
    if args.translate is not None:
        return translate_command(args, args.decoder or "bahdanau", score or "additive", Pair, build, model_name)
    if args.compare:
        return compare_command(args, COMPARED, run, LONG_BUCKETS)
    if args.ablation:
        return ablation_command(args, TRANSFORMER, run)
    decoders = [(args.decoder, score)] if args.decoder else [("bahdanau", "additive"), ("none", None)]
    return run(args, decoders)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # fit has named the checkpoint to resume from
        raise SystemExit(1) from None
