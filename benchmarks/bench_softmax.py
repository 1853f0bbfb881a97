"""Softmax / log-softmax forward+backward: Numba kernels vs the numpy reference vs PyTorch CPU.

    python benchmarks/bench_softmax.py

Each case runs forward then backward with a fixed random gradient; times are per
forward+backward pair in microseconds, best and median of REPEATS runs after a warm-up.
PyTorch is optional: "torch" times the autograd path (requires_grad, softmax, backward),
"torch raw" the two ATen kernels without autograd (torch._softmax and
torch._softmax_backward_data).
"""
import time

import numpy as np

from tinyattn.ops import reference as R
from tinyattn.ops.kernels import softmax as K

try:
    import torch
except ImportError:  # the benchmark runs without it, with fewer columns
    torch = None

REPEATS = 30
SHAPES = [(64, 8, 32, 32), (4096, 512)]
DTYPES = [np.float32, np.float64]


def _time(f):
    f()  # warm-up (and compile, the first time)
    times = []
    for _ in range(REPEATS):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times) * 1e6, float(np.median(times)) * 1e6


def _cases():
    # (op, shape, dtype, mask shape or None)
    for shape in SHAPES:
        for dtype in DTYPES:
            yield "softmax", shape, dtype, None
            yield "log_softmax", shape, dtype, None
    yield "softmax", (64, 8, 32, 32), np.float32, (64, 1, 1, 32)


def _numpy_and_numba(op, x, g, mask, impl):
    module = K if impl == "numba" else R
    fwd, bwd = getattr(module, op), getattr(module, f"{op}_backward")
    if mask is None:
        return lambda: bwd(fwd(x), g)
    return lambda: bwd(fwd(x, mask), g)


def _torch(op, x, g, mask):
    xt, gt = torch.from_numpy(x), torch.from_numpy(g)
    mt = None if mask is None else torch.from_numpy(mask)
    f = torch.softmax if op == "softmax" else torch.log_softmax

    def autograd():
        xr = xt.clone().requires_grad_()  # a fresh leaf each call (the clone is timed too)
        inp = xr if mt is None else xr.masked_fill(~mt, float("-inf"))
        f(inp, -1).backward(gt)

    def raw():
        with torch.no_grad():
            if op == "softmax":
                inp = xt if mt is None else xt.masked_fill(~mt, float("-inf"))
                y = torch._softmax(inp, -1, False)
                torch._softmax_backward_data(gt, y, -1, xt.dtype)
            else:
                y = torch._log_softmax(xt, -1, False)
                torch._log_softmax_backward_data(gt, y, -1, xt.dtype)

    return autograd, raw


def run(print_table=True):
    """Time every case; return one dict per case (times in µs) and print a markdown table."""
    rng = np.random.default_rng(0)
    rows = []
    for op, shape, dtype, mshape in _cases():
        x = rng.standard_normal(shape).astype(dtype)
        g = rng.standard_normal(shape).astype(dtype)
        mask = None
        if mshape is not None:
            mask = rng.random(mshape) < 0.8
            mask[..., 0] = True  # padding mask: every row keeps its first key
        row = dict(op=op + (" masked" if mask is not None else ""), shape=shape,
                   dtype=np.dtype(dtype).name)
        row["numba"], row["numba_med"] = _time(_numpy_and_numba(op, x, g, mask, "numba"))
        row["numpy"], row["numpy_med"] = _time(_numpy_and_numba(op, x, g, mask, "reference"))
        if torch is not None:
            autograd, raw = _torch(op, x, g, mask)
            row["torch"], row["torch_med"] = _time(autograd)
            row["torch_raw"], row["torch_raw_med"] = _time(raw)
        rows.append(row)
    if print_table:
        print(table(rows))
    return rows


def table(rows):
    has_torch = "torch" in rows[0]
    head = ["op (fwd+bwd)", "shape", "dtype", "numba µs", "numpy µs"]
    if has_torch:
        head += ["torch µs", "torch raw µs"]
    head += ["numpy/numba"] + (["torch/numba", "torch raw/numba"] if has_torch else [])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["op"], "x".join(map(str, r["shape"])), r["dtype"]]
        cols = ["numba", "numpy"] + (["torch", "torch_raw"] if has_torch else [])
        cells += [f"{r[c]:.0f} (med {r[c + '_med']:.0f})" for c in cols]
        cells += [f"{r[c] / r['numba']:.2f}" for c in cols[1:]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\n(best of %d; ratio > 1 means Numba is faster)" % REPEATS


if __name__ == "__main__":
    if torch is not None:
        print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    run()
