"""BLAS threads: a training step of two small models and two plain matmuls, under three settings.

    python benchmarks/bench_blas_threads.py                  # the machine as it is
    python benchmarks/bench_blas_threads.py --busy 2         # plus 2 busy processes (killed at the end)

The settings, each in its own process started the way a user's script starts (numpy imported
before tinyattn):
  numpy's default         nothing set (importing tinyattn sets nothing): one OpenBLAS thread per core
  OPENBLAS_NUM_THREADS=1  set before numpy loads
  ta.set_blas_threads(1)  called after the import (what ta.train.fit and the demos do)
The workloads: a GPT training step (bench_gpt.py's model: 2 layers, 4 heads, 64 wide, batch 32 x 64
characters, AdamW), the translation model's step (bench_seq2seq.py's: GRU encoder, GRUCell decoder
with additive attention, batch 64, Adam), and float32 matmuls of 256 x 256 and 1024 x 1024.

The three processes stay alive and take turns by block (A B C, C B A, ...), each block a few
steps of every workload, so a noisy moment falls on all three; a waiting process sleeps on its
pipe, its idle OpenBLAS threads asleep too. Printed: per workload and setting, the median step
time over every step, the range of the block medians and the mean (the mean is what a training
run pays: a few very slow steps barely move the median); the threads each process runs.
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SETTINGS = {"numpy's default": {}, "OPENBLAS_NUM_THREADS=1": {"OPENBLAS_NUM_THREADS": "1"},
            "ta.set_blas_threads(1)": {}}  # {environment}; the last child calls it (--set-one-thread)
STEPS = {"GPT step": 5, "seq2seq (GRU) step": 5, "matmul 256": 40, "matmul 1024": 5}  # per block


def _workloads():
    """{name: callable}: one step of each workload, ready (warmed up)."""
    sys.path.insert(0, HERE)
    import bench_gpt
    import bench_seq2seq

    _, gpt_batches, gpt_step = bench_gpt.tinyattn_setup()
    _, s2s_batches, s2s_step = bench_seq2seq.tinyattn_setup()
    rng = np.random.default_rng(0)
    a256, b256 = (rng.standard_normal((256, 256), dtype=np.float32) for _ in range(2))
    a1k, b1k = (rng.standard_normal((1024, 1024), dtype=np.float32) for _ in range(2))
    counter = iter(range(10 ** 9))
    work = {"GPT step": lambda: gpt_step(*gpt_batches[next(counter) % len(gpt_batches)]),
            "seq2seq (GRU) step": lambda: s2s_step(*s2s_batches[next(counter) % len(s2s_batches)]),
            "matmul 256": lambda: a256 @ b256, "matmul 1024": lambda: a1k @ b1k}
    for fn in work.values():  # warm-up: Numba loads its kernels, malloc settles
        for _ in range(3):
            fn()
    return work


def _child(set_one_thread):
    """Serve blocks: read a line from the parent, run one block of every workload, answer its times."""
    import tinyattn as ta

    if set_one_thread:
        ta.set_blas_threads(1)
    work = _workloads()
    threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else -1
    print(f"ready\t{ta.blas_threads()}\t{threads}", flush=True)
    for _ in sys.stdin:
        times = {}
        for name, fn in work.items():
            block = []
            for _ in range(STEPS[name]):
                start = time.perf_counter()
                fn()
                block.append((time.perf_counter() - start) * 1e3)
            times[name] = block
        print(repr(times), flush=True)


def _start(setting):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    env.update(SETTINGS[setting])
    flags = ["--set-one-thread"] if setting == "ta.set_blas_threads(1)" else []
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child"] + flags, env=env, text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    _, blas, threads = child.stdout.readline().rstrip("\n").split("\t")
    return child, blas, threads


def run(rounds=6, busy=0):
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
    try:
        time.sleep(1.0 if busy else 0.0)
        load_before = os.getloadavg()[0]
        children = {name: _start(name) for name in SETTINGS}
        blocks = {name: {w: [] for w in STEPS} for name in SETTINGS}
        for r in range(rounds):
            for name in (list(SETTINGS) if r % 2 == 0 else list(SETTINGS)[::-1]):
                child = children[name][0]
                child.stdin.write("go\n")
                child.stdin.flush()
                for w, block in eval(child.stdout.readline()).items():
                    blocks[name][w].append(block)
                time.sleep(0.2)  # the idle workers of this process fall asleep before the next starts
        load_after = os.getloadavg()[0]
        for child, _, _ in children.values():
            child.stdin.close()
            child.wait()
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    print(f"{rounds} rounds, blocks interleaved; {busy} extra busy processes; load average (1 min) "
          f"{load_before:.1f} before, {load_after:.1f} after; ms, median over all steps (range of block medians), mean\n")
    print("| workload | " + " | ".join(SETTINGS) + " |")
    print("|---|" + "---|" * len(SETTINGS))
    print("| BLAS threads (ta.blas_threads()) / threads in the process | "
          + " | ".join(f"{children[n][1]} / {children[n][2]}" for n in SETTINGS) + " |")
    for w in STEPS:
        cells = []
        for name in SETTINGS:
            medians = [float(np.median(b)) for b in blocks[name][w]]
            steps = np.concatenate(blocks[name][w])
            cells.append(f"{np.median(steps):.2f} ({min(medians):.2f}-{max(medians):.2f}), mean {steps.mean():.2f}")
        print(f"| {w} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6, help="blocks per setting, interleaved")
    parser.add_argument("--busy", type=int, default=0, help="busy processes to load the machine with")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--set-one-thread", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.append(os.path.join(HERE, ".."))  # the repository, after PYTHONPATH (as _twin_steps.py)
    if args.child:
        _child(args.set_one_thread)
    else:
        run(args.rounds, args.busy)
