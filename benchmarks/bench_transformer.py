"""One TransformerEncoderLayer, forward + backward: tinyattn against PyTorch CPU, same weights.

d_model 64, 4 heads, feed-forward 128, batch 32 x 40 tokens, dropout 0, float32, post-norm and
pre-norm, relu. Both on ONE thread (BLAS, OpenMP, Numba and torch.set_num_threads(1)), so the
figures compare the two implementations rather than two thread pools. Rounds are interleaved
(tinyattn, PyTorch, tinyattn, ...) so that a noisy moment on the VM hits both; the table gives
the median and the range over the rounds.

Run: python benchmarks/bench_transformer.py [--rounds 15]
(It measures in a fresh child process, where the thread settings can still take effect.)
"""
import os
import subprocess
import sys

ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
if "--child" in sys.argv:  # before numpy is imported: thread pools read these once
    os.environ.update(ONE_THREAD)

import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _timing import markdown_table  # noqa: E402

B, T, D, HEADS, FF = 32, 40, 64, 4, 128


def _pair(norm_first):
    """A tinyattn layer and a PyTorch layer with the same weights, their inputs and upstream gradient."""
    import torch

    import tinyattn as ta
    import tinyattn.nn as nn

    ta.manual_seed(0)
    ours = nn.TransformerEncoderLayer(D, HEADS, dim_feedforward=FF, dropout=0.0, norm_first=norm_first,
                                   batch_first=True)
    theirs = torch.nn.TransformerEncoderLayer(D, HEADS, dim_feedforward=FF, dropout=0.0, norm_first=norm_first,
                                              batch_first=True)
    theirs.load_state_dict({k: torch.tensor(v) for k, v in ours.state_dict().items()})
    rng = np.random.default_rng(0)
    x, g = rng.standard_normal((B, T, D)).astype(np.float32), rng.standard_normal((B, T, D)).astype(np.float32)
    x_ours, x_theirs = ta.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)

    def run_ours():
        out = ours(x_ours)
        out.backward(g)
        return out.data

    def run_theirs():
        out = theirs(x_theirs)
        out.backward(torch.tensor(g))
        return out.detach().numpy()

    return run_ours, run_theirs


def _time_ms(fn, loops):
    start = time.perf_counter()
    for _ in range(loops):
        fn()
    return (time.perf_counter() - start) / loops * 1e3


def measure(rounds):
    import numba
    import torch

    torch.set_num_threads(1)
    rows = []
    for norm_first in (False, True):
        run_ours, run_theirs = _pair(norm_first)
        difference = float(np.abs(run_ours() - run_theirs()).max())  # also the warm-up (Numba compiles)
        loops = max(1, int(0.2 / max(_time_ms(run_ours, 1), 1e-3) * 1e3))  # about 0.2 s per sample
        samples = {"tinyattn": [], "PyTorch": []}
        for _ in range(rounds):
            samples["tinyattn"].append(_time_ms(run_ours, loops))
            samples["PyTorch"].append(_time_ms(run_theirs, loops))
        ours, theirs = np.median(samples["tinyattn"]), np.median(samples["PyTorch"])
        rows.append({"layer": "pre-norm" if norm_first else "post-norm",
                     "tinyattn ms": f"{ours:.2f} ({min(samples['tinyattn']):.2f}-{max(samples['tinyattn']):.2f})",
                     "PyTorch ms": f"{theirs:.2f} ({min(samples['PyTorch']):.2f}-{max(samples['PyTorch']):.2f})",
                     "tinyattn / PyTorch": f"{ours / theirs:.2f}", "max abs out difference": f"{difference:.1e}"})
    print(f"{rounds} interleaved rounds of {loops} calls each; threads: torch {torch.get_num_threads()}, "
          f"numba {numba.get_num_threads()}, OPENBLAS/OMP/MKL_NUM_THREADS=1; median (min-max)\n")
    print(markdown_table(rows, ["layer", "tinyattn ms", "PyTorch ms", "tinyattn / PyTorch", "max abs out difference"]))


def run(rounds=15):
    """Measure in a child process (the thread settings must come before numpy loads) and print its table."""
    try:
        import torch  # noqa: F401
    except ImportError:
        print("PyTorch is not installed: nothing to compare against (pip install torch)")
        return
    child = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", "--rounds", str(rounds)],
                           env={**os.environ, **ONE_THREAD}, capture_output=True, text=True, check=True)
    print(child.stdout, end="")


if __name__ == "__main__":
    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 15
    if "--child" in sys.argv:
        measure(rounds)
    else:
        run(rounds)
