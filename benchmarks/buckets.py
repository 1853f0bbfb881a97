"""Time to 99 % in every length bucket: the Transformer translator, in batches of similar lengths or
random ones, against Bahdanau's decoder (demos/translate.py's recipes, the hard pair).

    python benchmarks/buckets.py                   # seeds 0 and 1, every model once per seed
    python benchmarks/buckets.py --seeds 0 1 2 --every 50
    python benchmarks/buckets.py --per-step 20     # only the seconds a step, the models taking turns
    python benchmarks/buckets.py --seeds 0 1 2 --full --models bahdanau transformer transformer-p5-600-lr0.004

Each run trains one model as the demo does (compiled, one BLAS thread, batches of 64) and every
`--every` steps decodes the demo's test sentences greedily; the time is the training time
(evaluations left out) at the first evaluation with >= 99 % exact match in every length bucket,
and the run stops there ("-" if its whole budget never got there). The models alternate within
each seed, so that the machine's load falls on all of them alike. Also printed: the share of
positions that are padding, the batch shapes (the compiled step's signatures), the seconds a step.
--full trains each Transformer on to the end of its steps (a recipe is a fixed budget: reaching 99 % once
is not staying there) and prints its exact match by bucket at the end; its time is still to the first 99 %.
MODELS holds the demo's recipes and variants of the Transformer's (pools, steps, learning rate).
"""
import argparse
import io
import os
import platform
import runpy
import statistics
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the demo

import tinyattn as ta  # noqa: E402
from tinyattn import metrics  # noqa: E402
from tinyattn.data import BucketedStream  # noqa: E402

DEMO = runpy.run_path(str(Path(__file__).resolve().parents[1] / "demos" / "translate.py"))
# name: (decoder, score, changes to the demo's recipe: TRANSFORMER's keys, and "steps", "lr", "warmup");
# transformer-pP-N[-lrR]: pools of P batches (BucketedStream, P = 0: random batches), N steps, Adam from R
MODELS = {"bahdanau": ("bahdanau", "additive", {}), "transformer": ("transformer", None, {}),  # the demo's recipes
          # the two of docs/transformer_translator.md's first measurement (500 steps, the recipe's until 2026-11-27)
          "transformer bucketed": ("transformer", None, {"pool_batches": 10, "steps": 500}),
          "transformer random": ("transformer", None, {"pool_batches": 0, "steps": 500}),
          **{f"transformer-p{p}-{n}": ("transformer", None, {"pool_batches": p, "steps": n})
             for p in (0, 2, 4, 5, 10) for n in (400, 500, 600, 700, 800)},
          **{f"transformer-p{p}-{n}-lr{lr:g}": ("transformer", None, {"pool_batches": p, "steps": n, "lr": lr})
             for p in (2, 5, 10) for n in (300, 400, 500, 600) for lr in (2e-3, 4e-3, 5e-3, 6e-3)}}


def recipe_of(name):
    """(decoder, score, recipe): the demo's recipe (TRANSFORMER, STEPS, lr 3e-3, warmup as its train();
    the recurrent decoders' batches drawn at random) with the model's changes."""
    decoder, score, changes = MODELS[name]
    steps = changes.get("steps", DEMO["STEPS"].get(decoder, 1200))
    demo = DEMO["TRANSFORMER"] if decoder == "transformer" else {"pool_batches": 0}
    recipe = {**demo, "steps": steps, "lr": 3e-3, "warmup": min(50, steps // 4), **changes}
    return decoder, score, recipe

class Reached(Exception):
    """Raised from fit's evaluate at the first evaluation with every bucket at the target."""

def exact_by_bucket(model, pair):
    hyps, refs = [], []
    with ta.no_grad():
        model.eval()
        for i in range(0, len(pair.test), 128):
            chunk = pair.test[i:i + 128]
            source, lengths, _ = pair.train.encode_pairs([(w, t) for w, t, _ in chunk])
            hyps += [pair.target_vocab.decode(h.tokens) for h in model.decode(source, lengths)]
            refs += [t for _, t, _ in chunk]
    lengths = [len(w) for w, _, _ in pair.test]
    return metrics.by_length(metrics.exact_match, lengths, DEMO["BUCKETS"]["hard"], hyps, refs)

def one_run(name, seed, every, target, pair, full=False):
    """Train one model; full: on to the end of its steps (the time is still that of the first evaluation at
    the target), and its exact match by bucket at the end."""
    decoder, score, recipe = recipe_of(name)
    steps, pool_batches = recipe["steps"], recipe["pool_batches"]
    ta.manual_seed(seed)
    model = DEMO["build"](decoder, score, pair, 64, recipe)
    opt = ta.optim.Adam(model.parameters(), lr=recipe["lr"])
    schedule = (ta.optim.WarmupCosine(opt, warmup_steps=recipe["warmup"], total_steps=steps) if decoder == "transformer" else
                ta.optim.StepLR(opt, step_size=int(0.6 * steps), gamma=0.2))
    stream = BucketedStream(pair.train, 64, pool_batches, multiple=8) if pool_batches else None
    padded, shapes = [0, 0], set()  # real positions, all positions (source and target); batch shapes

    def batches(step):
        batch = stream(step) if stream else pair.train.batch(64)
        source, lengths, target = batch
        padded[0] += int(lengths.sum() + (target != 0).sum())
        padded[1] += source.size + target.size
        shapes.add((source.shape, target.shape))  # one compiled signature each
        return batch

    spent = {"evaluating": 0.0, "at": None, "seconds": None, "last": None, "start": time.perf_counter()}

    def evaluate(step):
        begin = time.perf_counter()
        exact = spent["last"] = exact_by_bucket(model, pair)
        reached = min(exact.values()) >= target
        if reached and spent["at"] is None:  # the training time up to this evaluation
            spent["at"], spent["seconds"] = step, begin - spent["start"] - spent["evaluating"]
        spent["evaluating"] += time.perf_counter() - begin
        if reached and not full:
            raise Reached
        return {"worst": min(exact.values())}

    try:
        ta.train.fit(model, opt, model.loss, steps, batches=batches, compile=True, clip_grad_norm=1.0,
                     scheduler=schedule, evaluate=evaluate, evaluate_every=every, stream=io.StringIO())
    except Reached:
        pass
    seconds = time.perf_counter() - spent["start"] - spent["evaluating"]
    done = spent["at"] if spent["at"] and not full else steps
    end = exact_by_bucket(model, pair) if full and steps % every else spent["last"]
    return {"seconds": spent["seconds"], "train_seconds": seconds, "step": spent["at"], "steps": steps,
            "per_step": seconds / done, "padding": 1 - padded[0] / padded[1], "shapes": len(shapes), "end": end}

def per_step(names, rounds, block=10, warmup=60):
    """Seconds a training step (batch drawn, compiled step, clipping, Adam) of each model, its captures
    done (`warmup` steps first), in blocks of `block` steps taking turns: the load falls on all alike."""
    from tinyattn.nn.utils import clip_grad_norm_
    from tinyattn.train.learning_step import learning_step

    runs = {}
    for name in names:
        decoder, score, recipe = recipe_of(name)
        pool_batches = recipe["pool_batches"]
        pair = DEMO["Pair"]("hard", 1)
        ta.manual_seed(0)
        model = DEMO["build"](decoder, score, pair, 64, recipe)
        opt = ta.optim.Adam(model.parameters(), lr=recipe["lr"])
        learn = learning_step(model.loss, opt, True, lambda loss, _: loss)
        stream = BucketedStream(pair.train, 64, pool_batches, multiple=8) if pool_batches else None
        runs[name] = (model, opt, learn, stream or (lambda step, pair=pair: pair.train.batch(64)), [0], [])

    def steps(name, count):
        model, opt, learn, batches, done, _ = runs[name]
        model.train()
        for _ in range(count):
            done[0] += 1
            learn(*batches(done[0]))
            clip_grad_norm_(opt.params, 1.0)
            opt.step()

    for name in names:
        steps(name, warmup)
    for _ in range(rounds):
        for name in names:
            begin = time.perf_counter()
            steps(name, block)
            runs[name][5].append((time.perf_counter() - begin) / block)
    print(f"\nseconds a step after {warmup} steps of captures, median (range) of {rounds} blocks of {block}:")
    base = runs[names[0]][5]
    for name in names:
        times = runs[name][5]
        ratios = [t / b for t, b in zip(times, base)]
        signatures = runs[name][2].explain().splitlines()[0]
        print(f"{name:>22s}: {statistics.median(times):.4f} ({min(times):.4f}-{max(times):.4f}), against {names[0]} "
              f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}); {signatures}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--every", type=int, default=50, help="evaluate every this many steps")
    parser.add_argument("--target", type=float, default=0.99)
    parser.add_argument("--models", nargs="+", default=list(MODELS)[:3], choices=list(MODELS), metavar="NAME",
                        help="models of MODELS (default: the first three)")
    parser.add_argument("--full", action="store_true", help="the Transformers train all their steps (the time is "
                                                            "still to the first evaluation at the target) and print "
                                                            "their exact match (per cent) by bucket at the end")
    parser.add_argument("--per-step", type=int, metavar="ROUNDS", help="only the seconds a step (no accuracy): "
                                                                        "ROUNDS blocks of 10 steps of each model")
    args = parser.parse_args()
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor())
    print(f"{cpu}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at the start")
    if args.per_step:
        per_step(args.models, args.per_step)
        print(f"load {os.getloadavg()[0]:.1f} at the end")
        return
    rows = {name: [] for name in args.models}
    for seed in args.seeds:
        for name in args.models:
            pair = DEMO["Pair"]("hard", 10)  # a fresh stream: every model sees the same sentences
            full = args.full and MODELS[name][0] == "transformer"
            r = one_run(name, seed, args.every, args.target, pair, full)
            rows[name].append(r)
            reached = f"{r['seconds']:.1f} s at step {r['step']}" if r["seconds"] else "not reached"
            end = f"; at step {r['steps']} ({r['train_seconds']:.1f} s): " + " ".join(
                f"{100 * v:.0f}" for v in r["end"].values()) if full else ""
            print(f"seed {seed} {name:>22s}: {reached}; {r['per_step']:.3f} s a step, padding {100 * r['padding']:.0f} %, "
                  f"{r['shapes']} batch shapes, load {os.getloadavg()[0]:.1f}{end}", flush=True)
    print(f"\nmedian (range) seconds to >= {100 * args.target:.0f} % in every bucket, and against bahdanau:")
    base = [r["seconds"] for r in rows.get("bahdanau", [])]
    for name, runs in rows.items():
        times = [r["seconds"] for r in runs]
        if None in times:
            print(f"{name:>22s}: not reached in {times.count(None)} of {len(times)} runs")
            continue
        line = f"{name:>22s}: {statistics.median(times):.1f} ({min(times):.1f}-{max(times):.1f})"
        if base and None not in base and name != "bahdanau":
            ratios = [t / b for t, b in zip(times, base)]  # the same seed's pair, run side by side
            line += f", ratio {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"
        print(line)
    print(f"load {os.getloadavg()[0]:.1f} at the end")

if __name__ == "__main__":
    main()
