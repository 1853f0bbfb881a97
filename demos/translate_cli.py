"""The other modes of demos/translate.py: --translate (use a trained model), --vocab, --compare, --ablation.

--translate never trains: it loads translate_out/NAME.ckpt.npz (the checkpoint of `translate.py
--decoder NAME`), beam-decodes each sentence and prints the translation with its attention as
a text table. Whatever is wrong (an unknown word, an empty or too long sentence, no checkpoint,
a checkpoint of another model) is one line on stderr and a non-zero exit, never a traceback.
--vocab lists the words a sentence may use. --ablation trains the Transformer's recipe with each
ingredient switched off alone.
"""
import difflib
import json
import os
import sys
import textwrap

import tinyattn as ta

SHADES = " .:-=+*#%@"  # weight 0 .. 1 in ten steps


class Refusal(Exception):
    """A message for the user, one line."""


def load_model(args, decoder, score, Pair, build, model_name):
    name = model_name(decoder, score)
    path = os.path.join(args.out_dir, f"{name}.ckpt.npz")
    if not os.path.exists(path):
        flags = f" --decoder {decoder}" + (f" --score {score}" if name != decoder else "")
        raise Refusal(f"no trained model at {path}: train it first with `python demos/translate.py{flags}`")
    config_path = os.path.join(args.out_dir, f"{name}.json")
    config = json.load(open(config_path)) if os.path.exists(config_path) else {}
    if config.get("pair", args.pair) != args.pair or config.get("hidden", args.hidden) != args.hidden:
        raise Refusal(f"{path} was trained with --pair {config.get('pair')} --hidden {config.get('hidden')}; "
                      f"pass the same to use it")
    pair = Pair(args.pair, 1)
    model = build(decoder, score, pair, args.hidden)
    trained_with = config.get("positions", "sinusoidal")  # a Transformer saved before rotary positions says none
    if decoder == "transformer" and trained_with != model.positions_kind:
        # the parameters would load (positions have none) and translate wrongly without a word
        raise Refusal(f"{path} was trained with {trained_with} positions, this Transformer uses {model.positions_kind}: "
                      "train it again with `python demos/translate.py --decoder transformer`")
    try:
        state = ta.load(path)
        model.load_state_dict(state["model"])
    except Exception as error:  # whatever the file holds, the user gets one line
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise Refusal(f"{path} does not fit a --decoder {decoder} model of this pair ({first[:160]})") from None
    model.eval()
    return model, pair


def check_words(words, pair):
    if not words:
        raise Refusal("empty sentence: nothing to translate")
    if len(words) > pair.max_words:
        raise Refusal(f"{len(words)} words: the model was trained on sentences of at most {pair.max_words}")
    known = known_words(pair)
    unknown = list(dict.fromkeys(w for w in words if w not in known))  # each once, in the order typed
    if unknown:
        named = "; ".join(f"{word!r} (nearest known: {', '.join(difflib.get_close_matches(word, known, n=3, cutoff=0.0))})"
                          for word in unknown)
        raise Refusal(f"unknown word{'s' * (len(unknown) > 1)} {named}; --vocab lists the {len(known)} words it knows")


def known_words(pair):
    """The source words a sentence may use (the special tokens <pad> <s> </s> are not words)."""
    return [w for w in pair.source_vocab.words if not w.startswith("<")]


def vocab_command(args, Pair):
    """--vocab: the words --translate accepts for this --pair, one line, alphabetical; trains nothing."""
    words = sorted(known_words(Pair(args.pair, 1)))
    print(f"--pair {args.pair}: the {len(words)} words --translate knows\n" + textwrap.fill(" ".join(words), 100))
    return 0


def attention_table(source_words, written, weights):
    """One row per written word: the source word it looked at most, then a shade per source word."""
    width = max(len(w) for w in written) if written else 4
    lines = [" " * (width + 22) + "".join(str(i % 10) for i in range(len(source_words))) +
             "   (source positions; shade = weight, ' ' 0 .. '@' 1)"]
    for word, row in zip(written, weights):
        top = int(row.argmax())
        shades = "".join(SHADES[min(int(w * len(SHADES)), len(SHADES) - 1)] for w in row)
        lines.append(f"{word:>{width}s} <- {source_words[top]:>10s} {row[top]:4.2f}  {shades}")
    return "\n".join(lines)


def translate_one(model, pair, line, beam):
    words = line.lower().split()
    check_words(words, pair)
    source, lengths, _ = pair.train.encode_pairs([(words, [])])
    with ta.no_grad():
        (best,) = model.decode(source, lengths, beam_size=beam)
    written = pair.target_vocab.decode(best.tokens)
    print(" ".join(written))
    if best.attention is not None:
        shown = written + ["</s>"] * best.ended
        print(attention_table(words, shown, best.attention[:len(shown), :len(words)]))
    try:
        expected = pair.reference(words)
        print(f"(the grammar's translation: {' '.join(expected)}; "
              f"{'the same' if expected == written else 'they differ'})")
    except (ValueError, KeyError):
        print("(not a sentence of the grammar: no reference translation)")


def translate_command(args, decoder, score, Pair, build, model_name):
    try:
        model, pair = load_model(args, decoder, score, Pair, build, model_name)
    except Refusal as refusal:
        print(f"translate.py: {refusal}", file=sys.stderr)
        raise SystemExit(2) from None
    lines = sys.stdin.read().splitlines() if args.translate == "-" else [args.translate]
    failed = 0
    for line in lines:
        try:
            translate_one(model, pair, line, args.beam)
        except Refusal as refusal:
            print(f"translate.py: {refusal}", file=sys.stderr)
            failed += 1
    if failed:
        raise SystemExit(1)
    return 0


def compare_command(args, compared, run, long_buckets):
    """Every decoder trained on the same data, each on its default budget (or --steps, or --short's
    300); tested on 5-50 words and on longer sentences than any trained on; report.md, a bar chart."""
    from tinyattn.data import ReorderingSplits

    if args.short:
        args.steps = 300
    args.out_dir = os.path.join(args.out_dir, "compare")
    longer = None
    if args.pair == "hard":  # 51-100 words, none of them seen in training (which stops at 50)
        lo, hi = long_buckets[0][0], long_buckets[-1][1]
        longer = ReorderingSplits(per_length=max(1, args.test_per_length // 2), dev_per_length=0, min_length=lo,
                                  max_length=hi, seed=1).test
    results = run(args, compared, longer=longer)
    steps = {r["steps"] for r in results.values()}
    budget = f"{steps.pop()} steps" if len(steps) == 1 else "each decoder's default steps (the `steps` column)"
    lines = [f"Every decoder on {budget} of {args.batch} sentence pairs, pair `{args.pair}`, "
             f"test: {args.test_per_length} sentences of each length, greedy decoding.", "",
             "| decoder | steps | exact % | BLEU | alignment % | parameters | training (s) |", "|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        o = r["overall"]
        align = "-" if o["align"] is None else f"{100 * o['align']:.1f}"
        lines.append(f"| {name} | {r['steps']} | {100 * o['exact']:.1f} | {o['bleu']:.1f} | {align} | {r['parameters']} | "
                     f"{r['train_seconds']:.0f} |")
    lines += ["", "Exact match (%) by source length:", ""] + _exact_table(results)
    if longer:
        lines += ["", f"Longer than any training sentence ({len(longer)} sentences of 51-100 words), exact match (%):",
                  ""] + _exact_table(results, "longer")
    report = os.path.join(args.out_dir, "report.md")
    with open(report, "w") as f:
        f.write("\n".join(lines) + "\n")
    _bars(results, os.path.join(args.out_dir, "compare.png"))
    print("\n" + "\n".join(lines) + f"\n\nwritten: {report}, {os.path.join(args.out_dir, 'compare.png')}")
    return results


def _exact_table(results, key="by_length", seconds=False):
    """Markdown rows: exact match (%) of each model in each length bucket (and its training time)."""
    buckets = list(next(iter(results.values()))[key])
    rows = ["| model | " + " | ".join(buckets) + " |" + " training (s) |" * seconds,
            "|---|" + "---|" * (len(buckets) + seconds)]
    for name, r in results.items():
        rows.append(f"| {name} | " + " | ".join(f"{100 * r[key][b]['exact']:.1f}" for b in buckets) + " |"
                    + f" {r['train_seconds']:.0f} |" * seconds)
    return rows


ABLATED = {  # name: (what is switched off, the recipe's entry that does it)
    "no_cross_rope": ("rotary in the cross-attention (self-attention keeps it)", {"positions": "rope_self"}),
    "sinusoidal": ("rotary at all: sinusoidal positions added to the embeddings", {"positions": "sinusoidal"}),
    "no_warmup_cosine": ("warmup + cosine: 3e-3 dropping to a fifth for the last 40 %", {"warmup_cosine": False}),
    "no_label_smoothing": ("label smoothing", {"label_smoothing": 0.0}),
    "post_norm": ("pre-norm: post-norm layers, the paper's", {"norm_first": False}),
}


def ablation_command(args, recipe, run):
    """The Transformer's recipe, then each ingredient switched off alone, all from the same initial
    weights and data: results.json and ablation.md in OUT_DIR/ablation/."""
    args.out_dir = os.path.join(args.out_dir, "ablation")
    variants = {"recipe": recipe, **{name: {**recipe, **change} for name, (_, change) in ABLATED.items()}}
    results = run(args, [], variants=variants)
    steps = next(iter(results.values()))["steps"]
    lines = [f"The Transformer translator's recipe ({', '.join(f'{k}={v}' for k, v in recipe.items())}), "
             f"{steps} steps of {args.batch} sentence pairs, pair `{args.pair}`; each row below switches one "
             "ingredient off. Exact match (%) by source length, greedy decoding:", ""] + _exact_table(results, seconds=True)
    lines += ["", "Switched off:", ""] + [f"- `{name}`: {what}" for name, (what, _) in ABLATED.items()]
    report = os.path.join(args.out_dir, "ablation.md")
    with open(report, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n" + "\n".join(lines) + f"\n\nwritten: {report}")
    return results


def _bars(results, path):
    import matplotlib.pyplot as plt

    names = list(results)
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
    for ax, (key, label, scale) in zip(axes, [("exact", "exact match (%)", 100), ("bleu", "BLEU", 1),
                                              ("align", "alignment accuracy (%)", 100)]):
        values = [scale * (results[n]["overall"][key] or 0) for n in names]
        ax.barh(names, values, color="tab:blue")
        ax.set_xlabel(label)
        ax.set_xlim(0, 100)
        ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
