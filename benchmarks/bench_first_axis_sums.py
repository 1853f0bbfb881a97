"""Sums over the first axes: ops/kernels/sums.py's ones-product against numpy's own, interleaved.

    python benchmarks/bench_first_axis_sums.py [--rounds 15] [--threads 1]

For each shape and dtype, four ways to sum over the leading axes: the kernel (`sum_over`: a
product ones(N) @ x(N, C)), numpy's `x.sum(axis)`, `np.add.reduce(x, axis)` (the same reduction
without the method's argument handling) and the door of ops/arrays.py (what tinyattn runs: the
kernel or numpy's sum, as fast_path.py routes it). Each round times every way of every case
once (the ways in turn, the order reversed every other round), each for ~20 ms of calls, timed
by the thread's CPU time (the machine is shared: waiting for a core is not counted; with one
BLAS thread all the work is this thread's); printed per case, µs per call: the median over the
rounds and its range, and x.sum's time over the kernel's. One BLAS thread by default, as
ta.train.fit trains (--threads N for N; then --wall, as CPU time misses the other threads).
"""
import argparse
import os
import statistics
import time

import numpy as np

import tinyattn as ta
from tinyattn.ops.arrays import sum_over as door
from tinyattn.ops.kernels.sums import sum_over as kernel

CASES = [((64, 192), (0,)),          # a Linear's bias gradient: batch 64, 192 outputs
         ((32 * 64, 64), (0,)),      # a bias gradient over batch x time rows (32 x 64 tokens, 64 wide)
         ((128, 192), (0,)),         # the threshold: 128 rows
         ((2048, 256), (0,)),
         ((64, 12, 64), (0,)),
         ((64, 12, 64), (0, 1))]
WAYS = {"kernel": lambda x, axes: kernel(x, axes),
        "x.sum": lambda x, axes: x.sum(axis=axes),
        "np.add.reduce": lambda x, axes: np.add.reduce(x, axis=axes),
        "door": lambda x, axes: door(x, axes)}


CLOCK = time.thread_time  # --wall: time.perf_counter


def _per_call_us(fn, x, axes, seconds=0.02):
    loops, elapsed = 1, 0.0
    while elapsed < seconds:
        loops *= 2
        start = CLOCK()
        for _ in range(loops):
            fn(x, axes)
        elapsed = CLOCK() - start
    return elapsed / loops * 1e6


def run(rounds=15, threads=1):
    ta.set_blas_threads(threads)
    rng = np.random.default_rng(0)
    cases = [(shape, axes, dtype, rng.standard_normal(shape).astype(dtype))
             for shape, axes in CASES for dtype in (np.float32, np.float64)]
    for _, axes, _, x in cases:  # warm-up: the door's kernel loads
        for fn in WAYS.values():
            fn(x, axes)
    times = {(i, way): [] for i in range(len(cases)) for way in WAYS}
    load_before = os.getloadavg()[0]
    for r in range(rounds):
        for i, (_, axes, _, x) in enumerate(cases):
            for way in (list(WAYS) if r % 2 == 0 else list(WAYS)[::-1]):
                times[i, way].append(_per_call_us(WAYS[way], x, axes))
    print(f"{rounds} interleaved rounds; BLAS threads {ta.blas_threads()}; {CLOCK.__name__}; load average (1 min) {load_before:.1f} "
          f"before, {os.getloadavg()[0]:.1f} after; µs per call, median (range)\n")
    print("| shape, axes, dtype | " + " | ".join(WAYS) + " | x.sum / kernel |")
    print("|---|" + "---|" * (len(WAYS) + 1))
    for i, (shape, axes, dtype, _) in enumerate(cases):
        cells = [f"{statistics.median(times[i, w]):.2f} ({min(times[i, w]):.2f}-{max(times[i, w]):.2f})" for w in WAYS]
        ratio = statistics.median(times[i, "x.sum"]) / statistics.median(times[i, "kernel"])
        print(f"| {shape} over {axes}, {np.dtype(dtype).name} | " + " | ".join(cells) + f" | {ratio:.2f}x |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="rounds, every way of every case in each")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (ta.set_blas_threads)")
    parser.add_argument("--wall", action="store_true", help="wall-clock time instead of the thread's CPU time")
    args = parser.parse_args()
    CLOCK = time.perf_counter if args.wall else time.thread_time
    run(args.rounds, args.threads)
