"""Time to 99 % in every length bucket: the Transformer translator, in batches of similar lengths or
random ones, against Bahdanau's decoder (demos/translate.py's recipes, the hard pair).

    python benchmarks/buckets.py                   # seeds 0 and 1, every model once per seed
    python benchmarks/buckets.py --seeds 0 1 2 --every 50
    python benchmarks/buckets.py --per-step 20     # only the seconds a step, the models taking turns

Each run trains one model as the demo does (compiled, one BLAS thread, batches of 64) and every
`--every` steps decodes the demo's test sentences greedily; the time is the training time
(evaluations left out) at the first evaluation with >= 99 % exact match in every length bucket,
and the run stops there ("-" if its whole budget never got there). The models alternate within
each seed, so that the machine's load falls on all of them alike. Also printed: the share of
positions that are padding, the batch shapes (the compiled step's signatures), the seconds a step.
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
MODELS = {"bahdanau": ("bahdanau", "additive", 0), "transformer bucketed": ("transformer", None, 10),
          "transformer random": ("transformer", None, 0)}

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

def one_run(name, seed, every, target, pair):
    decoder, score, pool_batches = MODELS[name]
    steps = DEMO["STEPS"].get(decoder, 1200)
    ta.manual_seed(seed)
    model = DEMO["build"](decoder, score, pair, 64)
    opt = ta.optim.Adam(model.parameters(), lr=3e-3)
    schedule = (ta.optim.WarmupCosine(opt, warmup_steps=50, total_steps=steps) if decoder == "transformer" else
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

    spent = {"evaluating": 0.0, "at": None}

    def evaluate(step):
        begin = time.perf_counter()
        exact = exact_by_bucket(model, pair)
        spent["evaluating"] += time.perf_counter() - begin
        if min(exact.values()) >= target:
            spent["at"] = step
            raise Reached
        return {"worst": min(exact.values())}

    start = time.perf_counter()
    try:
        ta.train.fit(model, opt, model.loss, steps, batches=batches, compile=True, clip_grad_norm=1.0,
                     scheduler=schedule, evaluate=evaluate, evaluate_every=every, stream=io.StringIO())
    except Reached:
        pass
    seconds = time.perf_counter() - start - spent["evaluating"]
    done = spent["at"] or steps
    return {"seconds": seconds if spent["at"] else None, "train_seconds": seconds, "step": spent["at"],
            "per_step": seconds / done, "padding": 1 - padded[0] / padded[1], "shapes": len(shapes)}

def per_step(names, rounds, block=10, warmup=60):
    """Seconds a training step (batch drawn, compiled step, clipping, Adam) of each model, its captures
    done (`warmup` steps first), in blocks of `block` steps taking turns: the load falls on all alike."""
    from tinyattn.nn.utils import clip_grad_norm_
    from tinyattn.train.learning_step import learning_step

    runs = {}
    for name in names:
        decoder, score, pool_batches = MODELS[name]
        pair = DEMO["Pair"]("hard", 1)
        ta.manual_seed(0)
        model = DEMO["build"](decoder, score, pair, 64)
        opt = ta.optim.Adam(model.parameters(), lr=3e-3)
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
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
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
            r = one_run(name, seed, args.every, args.target, pair)
            rows[name].append(r)
            reached = f"{r['seconds']:.1f} s at step {r['step']}" if r["seconds"] else "not reached"
            print(f"seed {seed} {name:>22s}: {reached}; {r['per_step']:.3f} s a step, padding {100 * r['padding']:.0f} %, "
                  f"{r['shapes']} batch shapes, load {os.getloadavg()[0]:.1f}", flush=True)
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
