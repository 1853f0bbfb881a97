"""The engine's cost in several versions of tinyattn at once, timed in one process, interleaved.

    git archive <commit> tinyattn | tar -x -C /tmp/before        # each version's package
    python benchmarks/compare_engines.py 15 before=/tmp/before after=.

Each label=folder names a copy of the package ("." is this checkout). Three measures, each in
rounds that alternate the order of the versions so that a noisy moment hits them all:
  * the 1,000-node chains of bench_overhead.py, forward and backward per node;
  * one intermediate (64, 11, 128) tensor used by 26 later nodes (as encoder states are in an
    attention decoder), forward + backward: what summing its gradient costs (measured before
    the model below has run: see the comment in run());
  * the composed translation model of bench_composed.py, forward and backward (no optimiser).
Medians and ranges over the rounds; the last column is the median over rounds of each
version's time over the first version's. Thread pools are set to 1 before numpy loads.
"""
import os
import sys

os.environ.update({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                   "NUMBA_NUM_THREADS": "1"})  # before numpy is imported: thread pools read these once

import importlib  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import bench_composed  # noqa: E402
import bench_overhead  # noqa: E402
from _timing import markdown_table  # noqa: E402


def _import_copy(tree, name):
    if tree == ".":
        import tinyattn
        return tinyattn
    folder = tempfile.mkdtemp()
    shutil.copytree(os.path.join(tree, "tinyattn"), os.path.join(folder, name))
    sys.path.insert(0, folder)
    return importlib.import_module(name)


def _shared_intermediate(ta):
    rng = np.random.default_rng(0)
    x = ta.tensor(rng.standard_normal((64, 11, 128)).astype(np.float32), requires_grad=True)
    weights = [rng.standard_normal((64, 11, 1)).astype(np.float32) for _ in range(26)]

    def run():
        states = x * 1.0
        total = (states * weights[0]).sum()
        for w in weights[1:]:
            total = total + (states * w).sum()
        total.backward()
    return run


def _composed(ta, label):
    from tinyattn.data.toy_translation import PAD, ToyTranslation

    data = ToyTranslation(seed=0)
    batches = [data.batch(bench_composed.BATCH) for _ in range(4)]
    weights = bench_composed._weights(len(data.source_vocab), len(data.target_vocab), PAD)
    ops = bench_composed._tinyattn_ops(ta, label)
    params = {name: ops.tensor(array.copy()) for name, array in weights.items()}
    times = {"fwd": 0.0, "bwd": 0.0}

    def run():
        for batch in batches:
            start = time.perf_counter()
            loss = bench_composed.translation_loss(ops, params, *batch, PAD)
            middle = time.perf_counter()
            loss.backward()
            times["fwd"] += middle - start
            times["bwd"] += time.perf_counter() - middle
    return run, times


def _row(what, samples, first):
    row = {"what": what}
    for label, values in samples.items():
        ratio = statistics.median(v / f for v, f in zip(values, samples[first]))
        row[label] = f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f}) [{ratio:.2f}]"
    return row


def _interleaved(runs, rounds, repeats=1):
    """{label: [ms per call, one per round]}, the order of the versions alternating by round."""
    samples = {label: [] for label in runs}
    for r in range(rounds):
        for label in (list(runs) if r % 2 == 0 else list(runs)[::-1]):
            start = time.perf_counter()
            for _ in range(repeats):
                runs[label]()
            samples[label].append((time.perf_counter() - start) / repeats * 1e3)
    return samples


def run(versions, rounds=15):
    modules = {label: _import_copy(tree, f"tinyattn_{label}") for label, tree in versions.items()}
    bench_overhead.run_chains(modules, rounds)
    # Before the composed model: once a process has freed big arrays, glibc keeps more memory
    # around and allocating a fresh (64, 11, 128) array gets cheaper; here it is not yet so.
    shared = {label: _shared_intermediate(ta) for label, ta in modules.items()}
    for fn in shared.values():
        fn()
    shared_ms = _interleaved(shared, rounds, repeats=5)
    composed = {label: _composed(ta, label) for label, ta in modules.items()}
    for step, _ in composed.values():
        step()
    forward_ms, backward_ms = ({label: [] for label in modules} for _ in range(2))
    for r in range(rounds):
        for label in (list(modules) if r % 2 == 0 else list(modules)[::-1]):
            step, times = composed[label]
            times.update(fwd=0.0, bwd=0.0)
            step()
            forward_ms[label].append(times["fwd"] / 4 * 1e3)
            backward_ms[label].append(times["bwd"] / 4 * 1e3)
    first = next(iter(modules))
    rows = [_row("one (64, 11, 128) intermediate used 26 times, fwd+bwd ms", shared_ms, first),
            _row("composed translation model, forward ms per step", forward_ms, first),
            _row("composed translation model, backward ms per step", backward_ms, first)]
    print(f"\n{rounds} interleaved rounds; load average {os.getloadavg()[0]:.1f}; median (min-max) "
          f"[median of per-round ratios to {first}]\n")
    print(markdown_table(rows, list(rows[0])))


if __name__ == "__main__":
    run(dict(arg.split("=", 1) for arg in sys.argv[2:]), int(sys.argv[1]))
