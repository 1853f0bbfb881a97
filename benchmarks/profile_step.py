"""Where a compiled training step's time goes: cProfile of one of bench_compiled.py's models, grouped.

    python benchmarks/profile_step.py composed|classifier|gpt|seq2seq [--steps 40] [--engine compiled|eager]

The step is bench_compiled.py's (zero_grad, forward, backward compiled; clipping and Adam after),
one thread (`import tinyattn` gives OpenBLAS one; torch and Numba are set to one). The profile's
own time per function (tottime) is summed into groups: the BLAS products, the Numba kernels
(tinyattn/ops/kernels/), other numpy calls, the generated replay, tinyattn's Python by folder, and
the rest; then the top entries. cProfile adds a cost to
every Python call, so Python's share reads high: the groups say where to look, not a step's time.

Then a floor: the products (ops/arrays.py matmul) of one eager step are recorded with their arrays
(a compiled step makes the same ones; fusion leaves products alone) and each is timed alone, numpy's
np.matmul and torch.matmul on the same memory taking turns, beside PyTorch's whole step. numpy's
products alone, over PyTorch's step, is a ratio this model cannot go below, whatever else gets
faster, unless its products do.
"""
import argparse
import cProfile
import os
import pstats
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_compiled  # noqa: E402
import numpy as np  # noqa: E402

from tinyattn.ops import arrays  # noqa: E402
from _timing import markdown_table  # noqa: E402

ENGINES = {"composed": bench_compiled.composed_engines, "classifier": bench_compiled.classifier_engines,
           "gpt": bench_compiled.gpt_engines, "seq2seq": bench_compiled.seq2seq_engines}
PRODUCTS = {"matmul", "dot", "einsum", "tensordot", "inner", "vdot"}


def group(filename, name):
    """The group a profile entry's own time belongs to. numpy's ufuncs (np.matmul, a * b) make no
    profile entry of their own: their time is their caller's, so ops/reference.py's one-line
    wrappers stand for them, and the generated replay's own time holds the ufuncs it calls inline."""
    path = filename.replace(os.sep, "/")
    if "tinyattn/ops/kernels/" in path:
        return "Numba kernels (ops/kernels/)"
    if path.endswith("tinyattn/ops/reference.py"):
        return ("BLAS products (ops/reference.py matmul: np.matmul)" if name in PRODUCTS
                else "numpy calls through ops/reference.py")
    if filename == "~":
        return "numpy methods and functions" if "numpy" in name else "Python built-ins"
    if "numpy" in path:
        return "numpy methods and functions"
    if "/tinyattn/" in path:
        return "tinyattn Python: " + path.split("/tinyattn/", 1)[1].split("/")[0].replace(".py", "") + "/"
    if path.startswith("<"):
        return "the generated replay (with the ufuncs it calls inline)"
    return "other Python"


def _short(filename):
    """A profile entry's file as a reader finds it: from the repository or from site-packages."""
    if filename == "~":
        return ""
    path = filename.replace(os.sep, "/")
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1]
    return os.path.relpath(filename, os.path.dirname(HERE))


def profile(model, steps, engine="compiled"):
    import torch

    torch.set_num_threads(1)
    step, batches = ENGINES[model]()[engine]
    run = bench_compiled._runner(step, batches)
    for _ in range(24):  # as bench_compiled.measure: Numba, then two captures of every batch shape
        run()
    start = time.perf_counter()
    for _ in range(steps):
        run()
    plain_ms = (time.perf_counter() - start) / steps * 1e3
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(steps):
        run()
    profiler.disable()
    stats = pstats.Stats(profiler)
    groups, entries, total = {}, [], 0.0
    for (filename, line, name), (_, calls, tottime, _, _) in stats.stats.items():
        key = group(filename, name)
        seconds, count = groups.get(key, (0.0, 0))
        groups[key] = (seconds + tottime, count + calls)
        entries.append((tottime, calls, f"{_short(filename)}{':' + str(line) if line else ''} {name}".strip(), key))
        total += tottime
    rows = [{"group": key, "ms per step": f"{seconds / steps * 1e3:.2f}", "share": f"{seconds / total:.0%}",
             "calls per step": f"{count / steps:.0f}"}
            for key, (seconds, count) in sorted(groups.items(), key=lambda item: -item[1][0])]
    print(f"{engine} step of {model}: {plain_ms:.2f} ms per step unprofiled, {total / steps * 1e3:.2f} ms "
          f"under cProfile; {steps} steps, load average {os.getloadavg()[0]:.2f}\n")
    print(markdown_table(rows, ["group", "ms per step", "share", "calls per step"]))
    print()
    top = [{"function (own time)": where.replace("|", "/"), "ms per step": f"{t / steps * 1e3:.2f}",
            "calls per step": f"{c / steps:.0f}", "group": key}
           for t, c, where, key in sorted(entries, reverse=True)[:12]]
    print(markdown_table(top, ["function (own time)", "ms per step", "calls per step", "group"]))


def _products(model):
    """The (a, b) of every arrays.matmul call one eager step of `model` makes (after a warm-up)."""
    step, batches = ENGINES[model]()["eager"]
    run = bench_compiled._runner(step, batches)
    run()
    calls, door = [], arrays.matmul

    def record(a, b):
        calls.append((a, b))  # the arrays themselves (kept alive by the list): their layout is what is timed
        return door(a, b)
    arrays.matmul = record
    try:
        run()
    finally:
        arrays.matmul = door
    return calls


def products_floor(model, repeats=20, rounds=5):
    """numpy's and torch's time for one step's products, each alone, and PyTorch's whole step."""
    import torch

    calls = _products(model)
    pairs = [((lambda a=a, b=b: np.matmul(a, b)),
              (lambda a=torch.from_numpy(a), b=torch.from_numpy(b): torch.matmul(a, b))) for a, b in calls]
    step, batches = ENGINES[model]()["PyTorch"]
    torch_step = bench_compiled._runner(step, batches)
    for _ in range(5):
        torch_step()

    def ms(fn, n):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        return (time.perf_counter() - start) / n * 1e3
    numpy_ms, torch_ms, step_ms = [], [], []
    for r in range(rounds):  # the sides take turns going first
        sides = [(numpy_ms, 0), (torch_ms, 1)][::1 if r % 2 == 0 else -1]
        for times, side in sides:
            times.append(sum(ms(pair[side], repeats) for pair in pairs))
        step_ms.append(ms(torch_step, 10))
    numpy_ms, torch_ms, step_ms = (sorted(x)[len(x) // 2] for x in (numpy_ms, torch_ms, step_ms))
    print(f"\nThe floor: one step's {len(calls)} products, each timed alone on its own arrays (median of "
          f"{rounds} rounds): numpy {numpy_ms:.2f} ms, torch.matmul {torch_ms:.2f} ms (numpy / torch "
          f"{numpy_ms / torch_ms:.2f}); PyTorch's whole step {step_ms:.2f} ms. numpy's products alone are "
          f"**{numpy_ms / step_ms:.2f}** of PyTorch's step: with everything else free, this model's ratio to "
          f"PyTorch could not go below that with numpy's BLAS.")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=sorted(ENGINES))
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--engine", choices=["compiled", "eager", "PyTorch"], default="compiled")
    args = parser.parse_args()
    profile(args.model, args.steps, args.engine)
    products_floor(args.model)
