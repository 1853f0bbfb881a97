"""GRU speed: one cell step and a 30-step layer, forward + backward, fused vs reference vs PyTorch.

Shapes from the recurrent issue: batch 64, input 96, hidden 64, float32.
Run: python benchmarks/bench_recurrent.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import markdown_table, time_us  # noqa: E402

import tinyattn as ta  # noqa: E402
import tinyattn.nn as nn  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

B, I, H, T = 64, 96, 64, 30


def _tinyattn_cases(fused):
    ta.manual_seed(0)
    rng = np.random.default_rng(0)
    cell, layer = nn.GRUCell(I, H), nn.GRU(I, H, batch_first=True)
    x = ta.tensor(rng.standard_normal((B, I)).astype(np.float32), requires_grad=True)
    h = ta.tensor(rng.standard_normal((B, H)).astype(np.float32), requires_grad=True)
    xs = ta.tensor(rng.standard_normal((B, T, I)).astype(np.float32), requires_grad=True)

    def cell_step():
        with ta.fused(fused):
            cell(x, h).sum().backward()

    def layer_run():
        with ta.fused(fused):
            out, h_n = layer(xs)
        out.sum().backward()

    return cell_step, layer_run


def _torch_cases():
    torch.manual_seed(0)
    cell, layer = torch.nn.GRUCell(I, H), torch.nn.GRU(I, H, batch_first=True)
    x = torch.randn(B, I, requires_grad=True)
    h = torch.randn(B, H, requires_grad=True)
    xs = torch.randn(B, T, I, requires_grad=True)
    return (lambda: cell(x, h).sum().backward()), (lambda: layer(xs)[0].sum().backward())


def run():
    fused_cell, fused_layer = _tinyattn_cases(True)
    ref_cell, ref_layer = _tinyattn_cases(False)
    rows = [{"case": f"GRUCell step B={B} I={I} H={H}", "fused µs": time_us(fused_cell), "reference µs": time_us(ref_cell)},
            {"case": f"GRU layer T={T}", "fused µs": time_us(fused_layer), "reference µs": time_us(ref_layer)}]
    if torch is not None:
        torch.set_num_threads(2)
        torch_cell, torch_layer = _torch_cases()
        rows[0]["PyTorch µs"], rows[1]["PyTorch µs"] = time_us(torch_cell), time_us(torch_layer)
    for row in rows:
        row["reference / fused"] = row["reference µs"] / row["fused µs"]
        if "PyTorch µs" in row:
            row["PyTorch / fused"] = row["PyTorch µs"] / row["fused µs"]
    print(markdown_table(rows, ["case", "fused µs", "reference µs", "PyTorch µs", "reference / fused", "PyTorch / fused"]))
    return rows


if __name__ == "__main__":
    run()
