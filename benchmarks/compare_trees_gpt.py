"""bench_gpt.py's GPT training step with two versions of tinyattn and PyTorch, in one process, interleaved.

    git archive <commit> tinyattn | tar -x -C /tmp/before      # the older version's package
    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/compare_trees_gpt.py /tmp/before [rounds] [steps] [--cpu]

As compare_trees.py, so both versions see the same noise: the older copy is imported as
tinyattn_before, and the three engines (before, after, PyTorch on one thread) take turns in
blocks of steps on the same batches (_twin_steps.time_blocks), each engine's first loss
checked against PyTorch's. Prints median ms per step with the range of block medians, and the
ratios to PyTorch and after / before. --cpu times each step by the process's CPU time instead
of the wall clock: on a shared, loaded machine the wall clock mostly measures waiting for a core.
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.append(os.path.join(HERE, "..", "tests"))  # gpt_twin.py
import _twin_steps  # noqa: E402
import bench_gpt  # noqa: E402
from compare_trees import _import_copy  # noqa: E402

import tinyattn  # noqa: E402


def run(tree, rounds=5, steps=10, cpu=False):
    import torch

    torch.set_num_threads(1)
    runs = {}
    for name, package in (("before", _import_copy(tree)), ("after", tinyattn)):
        engines, (ours, theirs) = _twin_steps.compare_engines(lambda: bench_gpt.tinyattn_setup(0, package),
                                                              bench_gpt.torch_setup)
        runs[name] = engines["tinyattn"]
    runs["PyTorch"] = engines["PyTorch"]
    for step, batches in runs.values():  # warm-up: Numba loads (or compiles) its kernels
        for b in batches[1:4]:
            step(*b)
    load = os.getloadavg()[0]
    times = _twin_steps.time_blocks(runs, rounds, steps, time.process_time if cpu else time.perf_counter)
    summary = {name: _twin_steps.summary(blocks) for name, blocks in times.items()}
    print(f"| engine | ms/step, {'CPU time' if cpu else 'wall clock'} (median, block range) | / PyTorch |")
    print("|---|---|---|")
    for name, (median, low, high) in summary.items():
        print(f"| {name} | {median:.1f} ({low:.1f}-{high:.1f}) | {median / summary['PyTorch'][0]:.2f} |")
    print(f"\nafter / before {summary['after'][0] / summary['before'][0]:.2f}; {rounds} rounds of {steps} steps per "
          f"engine, one thread each; load average {load:.1f} before, {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[2:] if a != "--cpu"]
    run(sys.argv[1], *numbers, cpu="--cpu" in sys.argv)
