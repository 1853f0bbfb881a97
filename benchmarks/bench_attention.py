"""Scaled dot-product attention, forward + backward: fused node vs composed ops vs PyTorch CPU.

Shapes from the attention issue: (B=32, T=12, d=64) and (B=8, H=4, T=128, d=32), float32.
Run: python benchmarks/bench_attention.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import markdown_table, time_us  # noqa: E402

import tinyattn as ta  # noqa: E402
import tinyattn.nn.functional as F  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

SHAPES = [(32, 12, 64), (8, 4, 128, 32)]


def _case(shape, fn):
    rng = np.random.default_rng(0)
    *lead, T, d = shape
    q, k, v = (ta.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True) for _ in range(3))
    g = rng.standard_normal(shape).astype(np.float32)

    def run():
        out, _ = fn(q, k, v)
        out.backward(g)
    return run


def _torch_case(shape):
    q, k, v = (torch.randn(*shape, requires_grad=True) for _ in range(3))
    g = torch.randn(*shape)

    def run():
        torch.nn.functional.scaled_dot_product_attention(q, k, v).backward(g)
    return run


def run():
    if torch is not None:
        torch.set_num_threads(2)
    rows = []
    for shape in SHAPES:
        row = {"shape (..., T, d)": str(shape),
               "fused µs": time_us(_case(shape, F.scaled_dot_product_attention)),
               "composed µs": time_us(_case(shape, F.scaled_dot_product_attention_reference))}
        row["composed / fused"] = row["composed µs"] / row["fused µs"]
        if torch is not None:
            row["PyTorch µs"] = time_us(_torch_case(shape))
            row["PyTorch / fused"] = row["PyTorch µs"] / row["fused µs"]
        rows.append(row)
    print(markdown_table(rows, ["shape (..., T, d)", "fused µs", "composed µs", "PyTorch µs", "composed / fused", "PyTorch / fused"]))
    return rows


if __name__ == "__main__":
    run()
