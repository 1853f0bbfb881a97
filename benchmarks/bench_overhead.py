"""Per-op overhead: a tiny op's forward + backward in tinyattn vs raw numpy vs PyTorch.

On tiny (4, 4) tensors the arithmetic costs almost nothing, so this measures what the
autograd machinery itself costs per op: building the graph node, the backward walk, and
accumulating .grad. The chain of 20 tanh shows the cost per node of a longer walk.

The chains of 1,000 nodes time the forward (building the graph) and the backward (the walk)
apart, per node, against PyTorch at 1 thread: rounds alternate between the two (tinyattn
first in even rounds, PyTorch first in odd ones), each round the median of 5 builds and 5
backwards; the table gives the median and range over the rounds.

Run: python benchmarks/bench_overhead.py [--rounds 15]
"""
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import markdown_table, time_us  # noqa: E402

import tinyattn as ta  # noqa: E402

try:
    import torch
except ImportError:  # PyTorch is optional: the comparison column is left out
    torch = None


def _cases(ta=ta):
    """The timed cases, built with the tinyattn module given (compare_trees.py passes another copy)."""
    rng = np.random.default_rng(0)
    a_np, b_np = rng.standard_normal((2, 4, 4)).astype(np.float32)
    g_np = np.ones((4, 4), np.float32)
    a, b = ta.tensor(a_np, requires_grad=True), ta.tensor(b_np, requires_grad=True)

    def numpy_add():  # the same math by hand: y = a + b; da = g; db = g
        y = a_np + b_np
        return y, g_np.copy(), g_np.copy()

    def numpy_tanh():
        y = np.tanh(a_np)
        return g_np * (1 - y * y)

    def numpy_matmul():
        y = a_np @ b_np
        return y, g_np @ b_np.T, a_np.T @ g_np

    def tanh_chain(x, length=20):
        for _ in range(length):
            x = x.tanh()
        return x

    cases = {
        "add (4,4), fwd+bwd": (lambda: (a + b).backward(g_np), numpy_add),
        "tanh (4,4), fwd+bwd": (lambda: a.tanh().backward(g_np), numpy_tanh),
        "matmul (4,4)@(4,4), fwd+bwd": (lambda: (a @ b).backward(g_np), numpy_matmul),
        "mul + sum to scalar, fwd+bwd": (lambda: (a * b).sum().backward(), None),
        "chain of 20 tanh (4,4), fwd+bwd": (lambda: tanh_chain(a).backward(g_np), None),
    }
    torch_cases = {}
    if torch is not None:
        ta_, tb_ = (torch.tensor(x, requires_grad=True) for x in (a_np, b_np))
        tg = torch.tensor(g_np)
        torch_cases = {
            "add (4,4), fwd+bwd": lambda: (ta_ + tb_).backward(tg),
            "tanh (4,4), fwd+bwd": lambda: ta_.tanh().backward(tg),
            "matmul (4,4)@(4,4), fwd+bwd": lambda: (ta_ @ tb_).backward(tg),
            "mul + sum to scalar, fwd+bwd": lambda: (ta_ * tb_).sum().backward(),
            "chain of 20 tanh (4,4), fwd+bwd": lambda: tanh_chain(ta_).backward(tg),
        }
    return cases, torch_cases


def chain_timers(module, length=1000):
    """{chain name: (build, backward)} for tinyattn or PyTorch (`module`): a chain of `length`
    (4, 4) nodes; build() makes the graph, backward(output) walks it."""
    rng = np.random.default_rng(0)
    x_np, w_np = rng.standard_normal((2, 4, 4)).astype(np.float32) * 0.5
    g_np = np.ones((4, 4), np.float32)
    if module is torch:
        x, w = (torch.tensor(a, requires_grad=True) for a in (x_np, w_np))
        g = torch.tensor(g_np)
    else:
        x, w = (module.tensor(a, requires_grad=True) for a in (x_np, w_np))
        g = g_np

    def tanh_chain():  # one input per node, nothing summed: the walk at its leanest
        y = x
        for _ in range(length):
            y = y.tanh()
        return y

    def mul_chain():  # two inputs per node; w's gradient is summed over all 1,000 uses
        y = x
        for _ in range(length):
            y = y * w
        return y

    def reshape_chain():  # a view: next to no arithmetic, so this is the engine's own cost
        y = x
        for _ in range(length):
            y = y.reshape(4, 4)
        return y

    return {name: (build, lambda y: y.backward(g)) for name, build in
            [("tanh", tanh_chain), ("mul by one leaf", mul_chain), ("reshape (a view)", reshape_chain)]}


def _time_chain(build, backward, repeats=5):
    """Median µs per node of `repeats` builds and of `repeats` backwards."""
    forward_us, backward_us = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        y = build()
        middle = time.perf_counter()
        backward(y)
        end = time.perf_counter()
        forward_us.append(middle - start)
        backward_us.append(end - middle)
    return statistics.median(forward_us), statistics.median(backward_us)


def run_chains(engines, rounds=15, length=1000):
    """Interleaved rounds of the 1,000-node chains for {engine name: module}; one table row per chain."""
    timers = {name: chain_timers(module, length) for name, module in engines.items()}
    chains = list(next(iter(timers.values())))
    samples = {(name, chain, part): [] for name in engines for chain in chains for part in ("fwd", "bwd")}
    for name in engines:  # warm-up: first calls, Numba, caches
        for build, backward in timers[name].values():
            _time_chain(build, backward, 1)
    for r in range(rounds):
        order = list(engines) if r % 2 == 0 else list(engines)[::-1]
        for chain in chains:
            for name in order:
                fwd, bwd = _time_chain(*timers[name][chain])
                samples[name, chain, "fwd"].append(fwd / length * 1e6)
                samples[name, chain, "bwd"].append(bwd / length * 1e6)
    rows = []
    for chain in chains:
        row = {"chain of 1,000 (4,4) nodes": chain}
        for name in engines:
            for part in ("fwd", "bwd"):
                values = samples[name, chain, part]
                row[f"{name} {part} µs/node"] = (f"{statistics.median(values):.2f} "
                                                  f"({min(values):.2f}-{max(values):.2f})")
        rows.append(row)
    print(f"{rounds} interleaved rounds; load average {os.getloadavg()[0]:.1f}; median (min-max) µs per node\n")
    print(markdown_table(rows, list(rows[0])))
    return rows


def run(rounds=15):
    if torch is not None:
        torch.set_num_threads(1)
    run_chains({"tinyattn": ta, **({"PyTorch": torch} if torch is not None else {})}, rounds)
    print()
    cases, torch_cases = _cases()
    rows = []
    for name, (tiny, raw) in cases.items():
        row = {"op": name, "tinyattn µs": time_us(tiny)}
        if raw is not None:
            row["numpy math only µs"] = time_us(raw)
        if name in torch_cases:
            row["PyTorch µs"] = time_us(torch_cases[name])
            row["tinyattn / PyTorch"] = row["tinyattn µs"] / row["PyTorch µs"]
        rows.append(row)
    print(markdown_table(rows, ["op", "tinyattn µs", "numpy math only µs", "PyTorch µs", "tinyattn / PyTorch"]))
    return rows


if __name__ == "__main__":
    run(int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 15)
