"""What Python's cycle collector costs a training step, at Python's own threshold and higher ones,
in one process, interleaved, 1 thread (it decided that tinyattn leaves the collector alone).

    python benchmarks/bench_gc_threshold.py [--rounds 20] [--steps 5]

The models are benchmarks/outside_models.py's, written as a PyTorch user writes them, on tinyattn
(PyTorch gives their initial weights, so it must be installed). Each round times a block of
`steps` steps of every model under each setting of gc.set_threshold's first number, the setting
that goes first turning round by round; the table gives the median (range) ms per step and the
median of the per-round ratios to Python's default (700).
"""
import os
import sys

ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
if __name__ == "__main__":  # before numpy is imported: thread pools read these once
    os.environ.update(ONE_THREAD)

import argparse  # noqa: E402
import gc  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import outside_models  # noqa: E402
from _timing import markdown_table  # noqa: E402

PYTHON_DEFAULT = 700  # CPython 3.10-3.12's first threshold (3.13: 2,000)
SETTINGS = {"Python's 700": PYTHON_DEFAULT, "2,000": 2000, "5,000": 5000, "collector off": None}


def measure(rounds, steps, models=("gru_attention", "transformer", "attention_only", "seq2seq")):
    import torch

    import tinyattn

    torch.set_num_threads(1)
    _, *rest = gc.get_threshold()
    trainers = {}
    for name in models:
        data = outside_models.batches(name)
        _, weights = outside_models.torch_trainer(name, data)
        trainers[name] = outside_models.tinyattn_trainer(name, tinyattn, weights, data)
        for i in range(3):
            trainers[name](i)
    times = {(name, setting): [] for name in models for setting in SETTINGS}
    load_before = os.getloadavg()
    for r in range(rounds):
        order = list(SETTINGS)
        order = order[r % len(order):] + order[:r % len(order)]
        for name, step in trainers.items():
            for setting in order:
                threshold = SETTINGS[setting]
                if threshold is None:
                    gc.disable()
                else:
                    gc.enable()
                    gc.set_threshold(threshold, *rest)
                start = time.perf_counter()
                for i in range(steps):
                    step(r * steps + i)
                times[name, setting].append((time.perf_counter() - start) / steps * 1e3)
    gc.enable()
    gc.set_threshold(PYTHON_DEFAULT, *rest)
    print(f"{rounds} rounds of {steps} steps, interleaved, 1 thread; load average before "
          f"{', '.join(f'{v:.2f}' for v in load_before)}, after "
          f"{', '.join(f'{v:.2f}' for v in os.getloadavg())}\n")
    rows = []
    for name in models:
        python = times[name, "Python's 700"]
        for setting in SETTINGS:
            samples = times[name, setting]
            ratios = [a / b for a, b in zip(samples, python)]
            rows.append({"model": name, "first threshold": setting,
                         "ms per step": f"{statistics.median(samples):.2f} ({min(samples):.2f}-{max(samples):.2f})",
                         "/ Python's 700 (per round)": f"{statistics.median(ratios):.3f} ({min(ratios):.2f}-{max(ratios):.2f})"})
    print(markdown_table(rows, ["model", "first threshold", "ms per step", "/ Python's 700 (per round)"]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()
    measure(args.rounds, args.steps)
