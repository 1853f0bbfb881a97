"""A model's training step in tinyattn against its PyTorch twin: the timing harness that
bench_seq2seq.py and bench_classifier.py share (each supplies only its `engines()`).

Each thread count runs in its own process (OpenBLAS reads its thread count at start-up). In
that process the engines take turns in blocks of steps (A B B A ...), never step by step: an
engine's idle threads keep spinning for a while after its last call and would slow the other
one down. Both engines see the same batches in a round.
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np


def compare_engines(tinyattn_setup, torch_setup, *args):
    """(runs, losses) of tinyattn's model, tinyattn_setup(*args) -> (model, batches, step), and its
    twin, torch_setup(model, batches) -> (twin, batches, step), after checking that their first
    losses agree: the twin must start where tinyattn starts."""
    model, batches, tiny_step = tinyattn_setup(*args)
    _, torch_batches, torch_step = torch_setup(model, batches)
    ours, theirs = tiny_step(*batches[0]), torch_step(*torch_batches[0])
    if abs(ours - theirs) > 1e-5 * max(1.0, abs(theirs)):
        raise AssertionError(f"first-step losses differ: tinyattn {ours:.7f}, PyTorch {theirs:.7f}")
    return {"tinyattn": (tiny_step, batches), "PyTorch": (torch_step, torch_batches)}, (ours, theirs)


def time_blocks(runs, rounds, steps, clock=time.perf_counter):
    """{engine: list of per-block lists of step times (ms)}, the engines taking turns by block (ABBA...).
    clock=time.process_time counts this process's CPU time: on a loaded machine, what the step
    computes rather than how long it waited for a core (fair only when each engine uses one thread)."""
    times = {name: [] for name in runs}
    position = 0
    for r in range(rounds):
        order = list(runs) if r % 2 == 0 else list(runs)[::-1]
        for name in order:
            step, batches = runs[name]
            block = []
            for i in range(steps):
                start = clock()
                step(*batches[(position + i) % len(batches)])
                block.append((clock() - start) * 1e3)
            times[name].append(block)
            time.sleep(0.2)  # let the engine's worker threads fall asleep before the other starts
        position += steps
    return times


def summary(blocks):
    """(median over every step, lowest block median, highest block median), in ms."""
    medians = [float(np.median(b)) for b in blocks]
    return float(np.median(np.concatenate(blocks))), min(medians), max(medians)


def _child(engines, threads, rounds, steps):
    import torch

    import tinyattn

    torch.set_num_threads(threads)
    runs, (ours, theirs) = engines()
    for step, batches in runs.values():  # warm-up: Numba loads its kernels, allocators settle
        for b in batches[1:4]:
            step(*b)
    times = time_blocks(runs, rounds, steps)
    tiny, pt = summary(times["tinyattn"]), summary(times["PyTorch"])
    print("\t".join(f"{v:.7f}" for v in (*tiny, *pt, ours, theirs)) + "\t"
          + os.path.realpath(os.path.dirname(tinyattn.__file__)))


def _measure(script, threads, rounds, steps):
    """One thread count in a fresh process: (tinyattn summary, PyTorch summary, losses, package folder)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads), NUMBA_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, script, "--child", str(threads), "--rounds", str(rounds),
                          "--steps", str(steps)], env=env, capture_output=True, text=True, check=True)
    fields = out.stdout.strip().splitlines()[-1].split("\t")
    values = [float(f) for f in fields[:8]]
    return tuple(values[0:3]), tuple(values[3:6]), tuple(values[6:8]), fields[8]


def run(script, rounds=5, steps=15, thread_counts=(1, 2)):
    """Print the table of `script`'s model, one row per thread count; returns {threads: (tinyattn, PyTorch)}."""
    rows = {}
    load = os.getloadavg()[0]
    print("| threads per engine | tinyattn ms/step (median, block range) | PyTorch ms/step | tinyattn / PyTorch |")
    print("|---|---|---|---|")
    for threads in thread_counts:
        tiny, pt, losses, package = _measure(script, threads, rounds, steps)
        rows[threads] = tiny, pt
        print(f"| {threads} | {tiny[0]:.1f} ({tiny[1]:.1f}-{tiny[2]:.1f}) | {pt[0]:.1f} ({pt[1]:.1f}-{pt[2]:.1f}) "
              f"| {tiny[0] / pt[0]:.2f} |")
    best_tiny = min(rows.values(), key=lambda r: r[0][0])[0][0]
    best_torch = min(rows.values(), key=lambda r: r[1][0])[1][0]
    print(f"\nbest of each: tinyattn {best_tiny:.1f} ms, PyTorch {best_torch:.1f} ms, ratio {best_tiny / best_torch:.2f}"
          f"  (first-step loss {losses[0]:.7f} vs {losses[1]:.7f}; {rounds} rounds of {steps} steps per engine; "
          f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after; tinyattn from {package})")
    return rows


def main(script, doc, engines):
    """The command line of a benchmark script: `script [--rounds R] [--steps S] [--threads 1 2]`."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="blocks per engine, alternating")
    parser.add_argument("--steps", type=int, default=15, help="training steps per block")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="thread counts, one process each")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    # the repository as a fallback only, after PYTHONPATH and site-packages: PYTHONPATH=<folder> picks
    # the package to time (an A/B of two versions), which the checkout must not shadow
    sys.path.append(os.path.join(os.path.dirname(os.path.abspath(script)), ".."))
    if args.child is not None:
        _child(engines, args.child, args.rounds, args.steps)
    else:
        run(script, args.rounds, args.steps, tuple(args.threads))
