"""Benchmark the experimental Numba matmul kernel (experiments/matmul_numba.py) against
tinyattn.ops.arrays.matmul (what the package runs: BLAS), numpy's BLAS directly, and torch.

Run `python benchmarks/bench_matmul.py`. Each timing is the best of REPEATS rounds, each
averaging enough calls to last ~20 ms, after a warm-up call (which also JIT-compiles or loads
the kernel from cache). The best, not the mean, because the machine is shared: noise only ever
adds time. Numba, dispatcher and BLAS are timed round-robin (see best_times). Prints a
markdown table; run() returns its rows.
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "experiments"))

import matmul_numba  # noqa: E402
from tinyattn.ops import arrays as mm  # noqa: E402

try:
    import torch
except ImportError:  # optional
    torch = None

SHAPES = [
    ((64, 128), (128, 128)),
    ((64, 12, 64), (64, 64, 12)),  # attention-sized batch: 64 small products
    ((256, 256), (256, 256)),
    ((512, 512), (512, 512)),
]
DTYPES = [np.float32, np.float64]
REPEATS = 15
TARGET_SECONDS = 0.02


def best_times(fns, *args):
    """Best per-call seconds of each fn in `fns` (a dict name -> fn) over REPEATS rounds.

    Each round times every fn in turn, in a loop sized to ~TARGET_SECONDS, so a burst of load
    from elsewhere on the machine hits one round of every fn rather than all rounds of one."""
    calls = {}
    for name, fn in fns.items():
        fn(*args)  # warm up: compile / load from cache, fault in memory
        start = time.perf_counter()
        fn(*args)
        calls[name] = max(1, int(TARGET_SECONDS / max(time.perf_counter() - start, 1e-7)))
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(REPEATS):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(calls[name]):
                fn(*args)
            best[name] = min(best[name], (time.perf_counter() - start) / calls[name])
    return best


def flops(a_shape, b_shape):
    batch = np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    return 2 * int(np.prod(batch)) * a_shape[-2] * a_shape[-1] * b_shape[-1]


def run(shapes=SHAPES, dtypes=DTYPES):
    """Time every shape and dtype; print a markdown table and return its rows as dicts."""
    rng = np.random.default_rng(0)
    cases, rows = [], []
    for a_shape, b_shape in shapes:
        for dtype in dtypes:
            a = rng.standard_normal(a_shape).astype(dtype)
            b = rng.standard_normal(b_shape).astype(dtype)
            cases.append((a, b))
            row = {"shape": f"{a_shape}@{b_shape}", "dtype": np.dtype(dtype).name}
            times = best_times({"numba": matmul_numba.matmul_numba, "dispatch": mm.matmul,
                                "blas": np.matmul}, a, b)
            for name, seconds in times.items():
                row[f"{name}_us"] = seconds * 1e6
            row["dispatch_to"] = "blas"
            gflop = flops(a_shape, b_shape) / 1e9
            row["numba_gflops"] = gflop / (row["numba_us"] * 1e-6)
            row["blas_gflops"] = gflop / (row["blas_us"] * 1e-6)
            row["numba_over_blas"] = row["blas_us"] / row["numba_us"]  # throughput ratio
            rows.append(row)
    # torch last: its OpenMP threads keep spinning for a while after each call and would
    # steal a core from OpenBLAS's threads if it were interleaved with the others.
    if torch is not None:
        for row, (a, b) in zip(rows, cases):
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            row["torch_us"] = best_times({"torch": torch.matmul}, ta, tb)["torch"] * 1e6
    print_table(rows)
    return rows


def print_table(rows):
    has_torch = any("torch_us" in r for r in rows)
    head = ["shape", "dtype", "numba µs", "dispatch µs (→)", "BLAS µs"]
    head += ["torch µs"] if has_torch else []
    head += ["numba GFLOP/s", "BLAS GFLOP/s", "numba/BLAS"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        cells = [r["shape"], r["dtype"], f"{r['numba_us']:.1f}",
                 f"{r['dispatch_us']:.1f} ({r['dispatch_to']})", f"{r['blas_us']:.1f}"]
        cells += [f"{r.get('torch_us', float('nan')):.1f}"] if has_torch else []
        cells += [f"{r['numba_gflops']:.1f}", f"{r['blas_gflops']:.1f}",
                  f"{r['numba_over_blas']:.2f}"]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    run()
