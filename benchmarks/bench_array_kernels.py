"""The facts the array functions rely on, measured again: the small kernels against numpy's own call,
malloc's page faults, and what a __getattr__ would cost every Tensor attribute read. 1 thread.

    python benchmarks/bench_array_kernels.py [--rounds 7]

  sums                 ops/kernels/sums.py's sum_over (a product with ones) against x.sum(axis)
  broadcast products   ops/kernels/broadcast_products.py's multiply against numpy's x * s
  outer product        ops/kernels/matmul.py's matmul on (64, 14, 1) @ (64, 1, 128) against a * b
                       and np.matmul
  grad_where           autograd/rules_elementwise.py's product with the mask (and its NaN check)
                       against np.where(keep, g, 0)
  page faults          bench_seq2seq.py's tinyattn step, 40 steps after 10, minor page faults and
                       ms a step, malloc keeping freed memory (ops/memory.py) and TINYATTN_MALLOC=system,
                       each in its own process, alternating
  attribute reads      t.data; t._ctx; t.requires_grad on a Tensor and on a subclass with a
                       __getattr__ (why autograd/spellings.py uses class attributes instead)

Each timing is the median over --rounds of the best of 5 timeit runs, the two sides alternating;
float32. A ratio is numpy's time over the kernel's (> 1: the kernel wins).
"""
import argparse
import os
import resource
import subprocess
import sys
import time
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import numpy as np  # noqa: E402
from _timing import markdown_table  # noqa: E402

import tinyattn as ta  # noqa: E402
from tinyattn.autograd.rules_elementwise import grad_where  # noqa: E402
from tinyattn.ops.kernels import broadcast_products, matmul, sums  # noqa: E402

FAULT_STEPS, FAULT_WARMUP = 40, 10


def _best_us(fn, number):
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def _pair(name, kernel, numpy_side, rounds, number=2000):
    kernel(), numpy_side()  # Numba compiles (or loads) before the timing
    times = ([], [])
    for r in range(rounds):
        for side in ((0, 1) if r % 2 == 0 else (1, 0)):
            times[side].append(_best_us((kernel, numpy_side)[side], number))
    ours, theirs = (float(np.median(t)) for t in times)
    return {"row": name, "kernel us": f"{ours:.1f} ({min(times[0]):.1f}-{max(times[0]):.1f})",
            "numpy us": f"{theirs:.1f} ({min(times[1]):.1f}-{max(times[1]):.1f})",
            "numpy / kernel": f"{theirs / ours:.2f}"}


def kernel_rows(rounds):
    rng = np.random.default_rng(0)

    def f32(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    rows = []
    for shape, axes in (((64, 12, 64), (2,)), ((64, 12, 64), (1,)), ((64, 12, 64), (0,)), ((32, 64, 64), (0, 1)),
                        ((64, 192), (0,))):
        x = f32(*shape)
        rows.append(_pair(f"sum {shape} over {axes}", lambda x=x, a=axes: sums.sum_over(x, a),
                          lambda x=x, a=axes: x.sum(axis=a), rounds))
    for x, s in ((f32(768, 128), f32(768, 1)), (f32(768, 64), f32(64))):
        rows.append(_pair(f"broadcast product {x.shape} * {s.shape}",
                          lambda x=x, s=s: broadcast_products.multiply(x, s),
                          lambda x=x, s=s: x * s, rounds))
    g, keep = f32(64, 256, 256), rng.random((64, 256, 256)) < 0.5
    rows.append(_pair("grad_where (64, 256, 256) against np.where", lambda: grad_where(keep, g),
                      lambda: np.where(keep, g, 0), rounds, number=20))
    a, b = f32(64, 14, 1), f32(64, 1, 128)
    rows.append(_pair("outer product (64, 14, 1) @ (64, 1, 128) against a * b", lambda: matmul.matmul(a, b),
                      lambda: a * b, rounds))
    rows.append(_pair("outer product (64, 14, 1) @ (64, 1, 128) against np.matmul", lambda: matmul.matmul(a, b),
                      lambda: np.matmul(a, b), rounds))
    return rows


def attribute_rows(rounds):
    class WithGetattr(ta.Tensor):
        __slots__ = ()  # Tensor's layout, so an existing tensor can take this class

        def __getattr__(self, name):
            raise AttributeError(name)

    plain = ta.tensor(np.ones(3))
    hooked = ta.tensor(np.ones(3))
    hooked.__class__ = WithGetattr
    reads = "t.data; t._ctx; t.requires_grad"
    times = ([], [])
    for r in range(rounds):
        for side in ((0, 1) if r % 2 == 0 else (1, 0)):
            t = (plain, hooked)[side]
            times[side].append(min(timeit.repeat(reads, globals={"t": t}, number=200_000, repeat=5)) / 200_000 * 1e9)
    return [{"row": f"three Tensor attribute reads, {label}", "ns": f"{np.median(t):.1f} ({min(t):.1f}-{max(t):.1f})"}
            for label, t in zip(("as tinyattn's Tensor is", "a subclass with a __getattr__"), times)]


def _faults_child():
    import bench_seq2seq

    _, batches, step = bench_seq2seq.tinyattn_setup()
    for i in range(FAULT_WARMUP):
        step(*batches[i % len(batches)])
    before, start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.perf_counter()
    for i in range(FAULT_STEPS):
        step(*batches[i % len(batches)])
    seconds = time.perf_counter() - start
    print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / FAULT_STEPS, seconds / FAULT_STEPS * 1e3)


def fault_rows(processes):
    results = {"kept": [], "system": []}
    for r in range(processes):
        for setting in (("kept", "system") if r % 2 == 0 else ("system", "kept")):
            env = dict(os.environ, TINYATTN_MALLOC="system" if setting == "system" else "")
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--faults-child"], env=env,
                                 capture_output=True, text=True, check=True).stdout.split()
            results[setting].append((float(out[0]), float(out[1])))
    rows = []
    for setting, label in (("kept", "malloc keeping freed memory (the default in fit)"),
                           ("system", "TINYATTN_MALLOC=system")):
        faults, ms = zip(*results[setting])
        rows.append({"row": f"page faults, {label}", "minor page faults a step": f"{np.median(faults):.0f} "
                     f"({min(faults):.0f}-{max(faults):.0f})",
                     "ms a step": f"{np.median(ms):.2f} ({min(ms):.2f}-{max(ms):.2f})"})
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--faults-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.faults_child:
        _faults_child()
    else:
        load_before = os.getloadavg()[0]
        kernels, faults = kernel_rows(args.rounds), fault_rows(max(2, args.rounds // 2))
        reads = attribute_rows(args.rounds)
        print(f"{args.rounds} rounds, the two sides alternating; load average {load_before:.2f} before, "
              f"{os.getloadavg()[0]:.2f} after; BLAS threads {ta.blas_threads()}\n")
        print(markdown_table(kernels, ["row", "kernel us", "numpy us", "numpy / kernel"]) + "\n")
        print(markdown_table(faults, ["row", "minor page faults a step", "ms a step"]) + "\n")
        print(markdown_table(reads, ["row", "ns"]))
