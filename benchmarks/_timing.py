"""Shared timing helper for the benchmark scripts: median of repeated best-effort runs.

Importing it also gives numpy's BLAS one thread and turns on malloc's reuse of freed memory, as
ta.train.fit does when training starts (tinyattn/ops/blas_threads.py, memory.py; importing
tinyattn does neither): the benchmarks time training steps as fit runs them.
"""
import time

import tinyattn
import tinyattn.ops

tinyattn.set_blas_threads(1)
tinyattn.ops.keep_freed_memory()


def time_us(fn, min_time=0.05, repeats=7):
    """Median over `repeats` runs of fn's mean time in microseconds (after a warm-up call)."""
    fn()
    loops, elapsed = 1, 0.0
    while True:  # find a loop count that takes at least min_time
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            break
        loops *= 2
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        samples.append((time.perf_counter() - start) / loops * 1e6)
    samples.sort()
    return samples[len(samples) // 2]


def markdown_table(rows, columns):
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(_fmt(row.get(c, "")) for c in columns) + " |")
    return "\n".join(lines)


def _fmt(value):
    if isinstance(value, float):
        return f"{value:.3g}" if value < 100 else f"{value:.0f}"
    return str(value)
