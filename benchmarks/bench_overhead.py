"""Per-op overhead: a tiny op's forward + backward in tinyattn vs raw numpy vs PyTorch.

On tiny (4, 4) tensors the arithmetic costs almost nothing, so this measures what the
autograd machinery itself costs per op: building the graph node, the backward walk, and
accumulating .grad. The chain of 20 tanh shows the cost per node of a longer walk.
Run: python benchmarks/bench_overhead.py
"""
import os
import sys

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


def run():
    if torch is not None:
        torch.set_num_threads(2)
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
    run()
