"""A character-level GPT learns to write Python by reading the Python standard library's source.

    python demos/gpt.py                                  # about 30 s on 2 quiet cores; gpt_out/
    python demos/gpt.py --prompt "def " --tokens 300     # sample from the saved model, no training
    python demos/gpt.py --text FILE                      # any text file instead of the standard library
    python demos/gpt.py --resume                         # continue an interrupted run exactly (same arguments)

The text is on every machine that has Python: the source files of a fixed list of standard library
modules (STDLIB_FILES below, read from sysconfig.get_paths()["stdlib"]), joined in that order, so
a run is repeatable on one Python version (another version's files differ a little). The first
90 % trains, the last 10 % is held out. The model is ta.models.GPT (nanoGPT's architecture and
names) over the characters of the text, trained as nanoGPT trains: AdamW with weight decay on the
matrices only, linear warmup then cosine decay of the learning rate, gradients clipped to norm 1.

The figure to watch is validation bits per character: the cross-entropy on the held-out text in
bits (log2), predicting each character from the block_size before it. Two baselines count
characters in the training split: a unigram (each character's frequency, add-one smoothed) and a
bigram (the frequency of a character after the one before it, add-one smoothed). A model that
beats the bigram has learned something past "which letter follows which". Every --eval-every
steps the run prints the validation figure and a short sample from a fixed prompt ("def " for the
standard library, the opening word of a --text file), so you can watch the indentation, then the
keywords, then the names appear.

A small text is learned by heart: the training loss keeps falling while the validation figure
turns and rises, and the model gets worse at text it has not seen. The run says so when the
validation figure has stayed above its lowest for three evaluations, keeps the weights of that
lowest evaluation (gpt.best.npz) and writes its last sample, and --prompt's, from them.

It writes to --out-dir: the checkpoint of the last step (gpt.ckpt.npz; --resume), the best weights
(gpt.best.npz; --prompt), config.json (sizes and the characters), results.json and learning.png
(training and validation bits/char against both baselines).
"""
import argparse
import json
import math
import os
import sys
import sysconfig
import time

import numpy as np

import tinyattn as ta
from tinyattn.models import GPT

# Pure-Python modules with ordinary code, docstrings and comments; the last ones are held out.
STDLIB_FILES = ["textwrap.py", "string.py", "fnmatch.py", "glob.py", "heapq.py", "bisect.py", "functools.py",
                "copy.py", "abc.py", "queue.py", "dataclasses.py", "fractions.py", "difflib.py", "argparse.py",
                "random.py", "contextlib.py", "collections/__init__.py", "json/decoder.py", "json/encoder.py",
                "pprint.py"]
MODEL_ARGS = ("n_layer", "n_head", "n_embd", "block_size")
SAMPLE_PROMPT = "def "
RISING_EVALUATIONS = 3   # evaluations above the lowest before the run calls it memorising ...
RISING_MARGIN = 1.03     # ... each more than 3 % above it, so a flat, noisy curve is not named


def stdlib_text():
    """The STDLIB_FILES of this Python joined in order, each after a blank line: (text, paths)."""
    folder = sysconfig.get_paths()["stdlib"]
    paths = [os.path.join(folder, name) for name in STDLIB_FILES]
    missing = [path for path in paths if not os.path.exists(path)]
    if missing:
        raise SystemExit(f"gpt: this Python has no source for {', '.join(missing)} (a stripped install?); "
                         "train on any text file with --text FILE")
    texts = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            texts.append(f.read())
    return "\n\n".join(texts), paths


class Corpus:
    """The text's characters as ids, split 90 / 10 into training and validation; batches of the
    training split at random offsets from its own generator (fit saves it with the checkpoint)."""

    def __init__(self, text, chars, seed):
        self.chars = chars
        self.index = {c: i for i, c in enumerate(chars)}
        ids = self.encode(text)
        cut = int(0.9 * len(ids))
        self.train, self.val = ids[:cut], ids[cut:]
        self.rng = np.random.default_rng(seed)

    def encode(self, text):
        return np.array([self.index[c] for c in text], dtype=np.int64)

    def decode(self, ids):
        return "".join(self.chars[i] for i in ids)

    def batch(self, n, block):
        """(x, y) (n, block) int64: y is x moved one character on, the character to predict."""
        starts = self.rng.integers(0, len(self.train) - block, size=n)
        rows = starts[:, None] + np.arange(block + 1)
        chunk = self.train[rows]
        return chunk[:, :-1], chunk[:, 1:]


def windows(val, block):
    """The held-out ids as rows of block + 1 characters (the tail shorter than a row is left out):
    each row's characters after its first are predicted, each from the ones before it in its row."""
    rows = (len(val) - 1) // block
    return val[np.arange(rows)[:, None] * block + np.arange(block + 1)]


def baselines(train, rows, vocab):
    """Bits per character of add-one smoothed unigram and bigram counts of train on the characters
    the model is scored on (rows[:, 1:]); the bigram reads the character before each."""
    unigram = np.bincount(train, minlength=vocab) + 1.0
    unigram /= unigram.sum()
    pairs = np.zeros((vocab, vocab))
    np.add.at(pairs, (train[:-1], train[1:]), 1.0)
    pairs += 1.0
    pairs /= pairs.sum(axis=1, keepdims=True)
    return {"unigram": float(-np.log2(unigram[rows[:, 1:]]).mean()),
            "bigram": float(-np.log2(pairs[rows[:, :-1], rows[:, 1:]]).mean())}


@ta.no_grad()
def val_bits_per_char(model, rows, batch=64):
    """The model's mean cross-entropy in bits on rows[:, 1:], each character given the ones before it."""
    model.eval()
    total = 0.0
    for i in range(0, len(rows), batch):
        chunk = rows[i:i + batch]
        total += model(chunk[:, :-1], chunk[:, 1:])[1].item() * len(chunk)
    return total / len(rows) / math.log(2)


def sample(model, corpus, prompt, tokens, temperature, top_k, seed):
    """prompt and `tokens` characters the model writes after it (the same for the same seed)."""
    model.eval()
    out = model.generate(corpus.encode(prompt)[None], tokens, temperature=temperature, top_k=top_k,
                         rng=np.random.default_rng(seed))
    return corpus.decode(out[0])


def text_prompt(text):
    """The opening of the text, its first word and the character after it (at most 16 characters):
    samples start as the text does, with characters the model has seen."""
    words = text.split(maxsplit=1)
    if not words:
        return text[:1]
    first = words[0][:15]
    after = text[text.index(first) + len(first):][:1]
    return first + after


def rising_since(curve, evaluations=RISING_EVALUATIONS, margin=RISING_MARGIN):
    """The step of the lowest validation figure in curve [(step, bits)], if the last `evaluations`
    figures all came after it and each is more than `margin` times it; else None."""
    if len(curve) <= evaluations:
        return None
    best = min(range(len(curve)), key=lambda i: curve[i][1])
    recent = curve[-evaluations:]
    if best < len(curve) - evaluations and all(bits > margin * curve[best][1] for _, bits in recent):
        return curve[best][0]
    return None


def rising_warning(step):
    return (f"validation loss rising since step {step}: the model is memorising a small text; "
            "try --steps or a larger text")


def nanogpt_groups(model, weight_decay):
    """nanoGPT's configure_optimizers: matrices (embeddings included) decay, biases and LayerNorm gains do not."""
    params = [p for _, p in model.named_parameters()]
    return [{"params": [p for p in params if p.ndim >= 2], "weight_decay": weight_decay},
            {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0}]


def warmup_cosine(warmup, steps, floor=0.1):
    """nanoGPT's get_lr as a factor of the peak rate: linear warmup, then cosine down to `floor`."""
    def factor(count):
        if count < warmup:
            return (count + 1) / warmup
        progress = min(1.0, (count - warmup) / max(1, steps - warmup))
        return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress))
    return factor


def plot_learning(curve, train_loss, base, path, best=None):
    """Training loss (every step, train_loss in nats) and validation (curve [(step, bits)]) in bits
    per character on one axis that shows every point, both baselines, and the best evaluation
    (step, bits) marked when it is not the last. Writes path; returns the (closed) figure."""
    import matplotlib.pyplot as plt

    train_bits = np.asarray(train_loss) / math.log(2)
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    ax.plot(np.arange(1, len(train_bits) + 1), train_bits, lw=0.8, alpha=0.6, label="training (bits/char)")
    ax.plot([s for s, _ in curve], [v for _, v in curve], marker=".", label="validation (bits/char)")
    for name, style in (("unigram", ":"), ("bigram", "--")):
        ax.axhline(base[name], color="grey", ls=style, lw=1)
        ax.text(curve[-1][0], base[name], f"{name} {base[name]:.2f}", ha="right", va="bottom", fontsize=8)
    if best is not None and best[0] != curve[-1][0]:
        ax.axvline(best[0], color="black", ls=":", lw=1)
        ax.annotate(f"best: step {best[0]}, {best[1]:.2f}", best, xytext=(4, -12), textcoords="offset points",
                    fontsize=8)
    top = max([*train_bits, *(v for _, v in curve), *base.values()])
    ax.set(xlabel="training step", ylabel="bits per character", ylim=(0, 1.05 * top))
    ax.set_title("bits per character on the training and the held-out text (lower is better)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return fig


def parse(argv):
    files = f"The standard library files, in {sysconfig.get_paths()['stdlib']}, in order: {', '.join(STDLIB_FILES)}"
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=files,
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--text", help="train on this UTF-8 text file instead of the standard library's source")
    parser.add_argument("--steps", type=int, default=1200, help="training steps")
    parser.add_argument("--batch", type=int, default=32, help="sequences per step")
    parser.add_argument("--block-size", type=int, default=64, help="characters of context")
    parser.add_argument("--n-layer", type=int, default=2, help="Transformer blocks")
    parser.add_argument("--n-head", type=int, default=4, help="attention heads per block")
    parser.add_argument("--n-embd", type=int, default=64, help="width of the residual stream")
    parser.add_argument("--lr", type=float, default=1e-2, help="peak learning rate (AdamW)")
    parser.add_argument("--warmup", type=int, default=50, help="steps of linear warmup before the cosine decay")
    parser.add_argument("--weight-decay", type=float, default=0.1, help="AdamW's decay of the matrices")
    parser.add_argument("--eval-every", type=int, default=100, help="steps between validation and a sample")
    parser.add_argument("--seed", type=int, default=0, help="seeds the weights, the batches and the samples")
    parser.add_argument("--resume", action="store_true", help="continue from the checkpoint in --out-dir")
    parser.add_argument("--eager", action="store_true", help="train eagerly, not as a compiled step (ta.compile)")
    parser.add_argument("--prompt", help="sample from the saved checkpoint after this text; trains nothing")
    parser.add_argument("--tokens", type=int, default=300, help="characters --prompt writes")
    parser.add_argument("--temperature", type=float, default=0.8, help="sampling temperature (> 0)")
    parser.add_argument("--top-k", type=int, default=None, help="sample among the k likeliest characters only")
    parser.add_argument("--out-dir", default="gpt_out", help="checkpoint, results.json and learning.png go here")
    args = parser.parse_args(argv)
    for name in ("steps", "batch", "block_size", "n_layer", "n_head", "n_embd", "eval_every", "warmup"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if args.n_embd % args.n_head:
        parser.error(f"--n-embd {args.n_embd} must be a multiple of --n-head {args.n_head}")
    if not args.temperature > 0 or (args.top_k is not None and args.top_k < 1) or args.tokens < 0:
        parser.error("--temperature must be > 0, --top-k at least 1 and --tokens at least 0")
    return parser, args


def load_text(parser, args):
    """(text, what it is): the --text file or the standard library's source; bad files exit 2."""
    if args.text is None:
        text, paths = stdlib_text()
        return text, {"source": "stdlib", "python": sys.version.split()[0], "files": paths}
    if not os.path.isfile(args.text):
        parser.error(f"--text {args.text}: no such file")
    try:
        with open(args.text, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as error:
        parser.error(f"--text {args.text}: not UTF-8 text ({error})")
    if len(text) < 10 * (args.block_size + 1):
        parser.error(f"--text {args.text} has {len(text)} characters; with --block-size {args.block_size} it needs "
                     f"at least {10 * (args.block_size + 1)} (10 x (block size + 1): the held-out last 10 % must "
                     "fill one window of block size + 1)")
    return text, {"source": os.path.abspath(args.text), "files": [os.path.abspath(args.text)]}


def prompt_only(parser, args):
    """--prompt: the saved model (its best weights, else the last step's) writes after the prompt; nothing trained."""
    config_path, checkpoint = os.path.join(args.out_dir, "config.json"), os.path.join(args.out_dir, "gpt.ckpt.npz")
    best_path = os.path.join(args.out_dir, "gpt.best.npz")
    if not (os.path.exists(config_path) and os.path.exists(checkpoint)):
        parser.error(f"--prompt: no trained model in {args.out_dir}/ (config.json and gpt.ckpt.npz); "
                     "train first: python demos/gpt.py")
    with open(config_path) as f:
        config = json.load(f)
    unknown = sorted(set(args.prompt) - set(config["chars"]))
    if unknown:
        parser.error(f"--prompt: the model never saw the characters {unknown} (it knows {len(config['chars'])}: "
                     f"the characters of its training text)")
    if not args.prompt:
        parser.error("--prompt: give at least one character to start from")
    model = GPT(len(config["chars"]), **{k: config[k] for k in MODEL_ARGS})
    model.load_state_dict(ta.load(best_path if os.path.exists(best_path) else checkpoint)["model"])
    corpus = Corpus("", config["chars"], 0)
    print(sample(model, corpus, args.prompt, args.tokens, args.temperature, args.top_k, args.seed))


def main(argv=None):
    ta.set_blas_threads(1)      # small products: one BLAS thread is faster (benchmarks/RESULTS.md, "BLAS threads")
    ta.ops.keep_freed_memory()  # the same arrays every step: malloc reuses them (tinyattn/ops/memory.py)
    parser, args = parse(argv)
    if args.prompt is not None:
        return prompt_only(parser, args)
    text, source = load_text(parser, args)
    os.makedirs(args.out_dir, exist_ok=True)
    chars = sorted(set(text))
    config = {"chars": "".join(chars), **{k: getattr(args, k) for k in MODEL_ARGS}, "text": source}
    config_path = os.path.join(args.out_dir, "config.json")
    if args.resume and os.path.exists(config_path):
        with open(config_path) as f:
            if json.load(f) != config:
                parser.error(f"--resume: {config_path} describes another text or model size; "
                             "resume with the arguments of the first run, or start afresh without --resume")
    with open(config_path, "w") as f:
        json.dump(config, f, indent=1)

    ta.manual_seed(args.seed)
    corpus = Corpus(text, chars, args.seed)
    model = GPT(len(chars), args.block_size, args.n_layer, args.n_head, args.n_embd)
    held_out = windows(corpus.val, args.block_size)
    base = baselines(corpus.train, held_out, len(chars))
    prompt = SAMPLE_PROMPT if args.text is None else text_prompt(text)
    checkpoint, best_path = os.path.join(args.out_dir, "gpt.ckpt.npz"), os.path.join(args.out_dir, "gpt.best.npz")
    weights = sum(p.data.size for p in model.parameters())
    print(f"{len(text):,} characters ({len(chars)} different): {len(corpus.train):,} to train on, {len(corpus.val):,} "
          f"held out\nGPT: {args.n_layer} layers, {args.n_head} heads, n_embd {args.n_embd}, block {args.block_size}: "
          f"{weights:,} weights\nbaselines on the held-out text: unigram {base['unigram']:.3f} bits/char, bigram "
          f"{base['bigram']:.3f}\n")

    samples, sample_steps, warned = [], [], []
    # a resumed run's earlier evaluations count towards "rising"
    seen = (list(ta.load(checkpoint)["evaluations"].get("val_bits_per_char", []))
            if args.resume and os.path.exists(checkpoint) else [])

    def evaluate(step):
        bits = val_bits_per_char(model, held_out)
        samples.append(sample(model, corpus, prompt, 80, 0.8, None, args.seed))
        sample_steps.append(step)
        print(f"\nstep {step}: validation {bits:.3f} bits/char; sample: {samples[-1]!r}", flush=True)
        seen.append((step, bits))
        since = rising_since(seen)
        if since is not None and not warned:
            print(rising_warning(since), flush=True)
            warned.append(step)
        return {"val_bits_per_char": bits}

    opt = ta.optim.AdamW(nanogpt_groups(model, args.weight_decay), lr=args.lr, betas=(0.9, 0.99))
    schedule = ta.optim.LambdaLR(opt, warmup_cosine(args.warmup, args.steps))
    start = time.perf_counter()
    history = ta.train.fit(model, opt, lambda x, y: model(x, y)[1], args.steps,
                           batches=lambda step: corpus.batch(args.batch, args.block_size),
                           compile=not args.eager,  # a compiled step (ta.compile); --eager turns it off
                           checkpoint=checkpoint, checkpoint_every=100, keep_best="val_bits_per_char",
                           best_checkpoint=best_path,
                           resume=args.resume, clip_grad_norm=1.0, scheduler=schedule, rngs={"data": corpus.rng},
                           evaluate=evaluate, evaluate_every=args.eval_every, label="gpt")
    seconds = time.perf_counter() - start
    if history.stopped:
        raise SystemExit(f"gpt: {history.stopped}")
    curve = history.evaluations["val_bits_per_char"]
    best_step, best_bits = history.best or curve[-1]  # a finished run resumed from a checkpoint without "best"
    since = rising_since(curve)
    weights_of = ""
    if best_step != curve[-1][0]:  # validation went up after its lowest: sample from the weights of then
        model.load_state_dict(ta.load(best_path)["model"])
        weights_of = f", with the weights of step {best_step} (the lowest validation, {best_bits:.3f} bits/char)"
    final = sample(model, corpus, prompt, 300, 0.8, None, args.seed)
    print(f"\nsample (temperature 0.8) from {prompt!r}{weights_of}:\n{final}\n\nvalidation {curve[-1][1]:.3f} "
          f"bits/char after {args.steps} steps ({seconds:.0f} s); unigram {base['unigram']:.3f}, bigram "
          f"{base['bigram']:.3f}")
    if since is not None:
        print(rising_warning(since))
    results = {"steps": args.steps, "train_seconds": seconds, "val_bits_per_char": curve[-1][1], "baselines": base,
               "samples": samples + [final], "sample_steps": sample_steps + [args.steps],
               "curve": [list(pair) for pair in curve], "train_loss": history.losses, "prompt": prompt,
               "best": {"step": best_step, "val_bits_per_char": best_bits}, "rising_since": since,
               "weights": weights,
               "characters": len(text), "vocab_size": len(chars), "text": source,
               "model": {k: getattr(args, k) for k in MODEL_ARGS}}
    with open(os.path.join(args.out_dir, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    plot_learning(curve, history.losses, base, os.path.join(args.out_dir, "learning.png"), best=history.best)
    row = held_out[0]  # a held-out window: every head's attention on it, and where its loss pushes them
    ta.viz.attention_page(model, row[:-1], os.path.join(args.out_dir, "heads.html"), targets=row[1:],
                          labels=list(corpus.decode(row[:-1])))
    print(f"\nresults: {os.path.join(args.out_dir, 'results.json')}; picture: "
          f"{os.path.join(args.out_dir, 'learning.png')}; heads (open in a browser): "
          f"{os.path.join(args.out_dir, 'heads.html')}")
    return results


if __name__ == "__main__":
    main()
