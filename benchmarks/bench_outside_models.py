"""Training steps of models nobody here tuned for (outside_models.py): tinyattn against PyTorch,
and against older trees of tinyattn, in one process, interleaved, 1 thread; each tree eager and,
where it has ta.compile, compiled (the four calls of a step as one compiled step; "main /
this tree" then sets compiled against compiled).

    python benchmarks/bench_outside_models.py [--rounds 20] [--steps 5] [--trees e402398 23529ae]
    python benchmarks/bench_outside_models.py --profile gru_attention [--steps 30]

A step: zero_grad, forward, the loss, backward, Adam. Every engine starts from PyTorch's
initial weights on the same batches, and its first two losses must equal PyTorch's (to 1e-5,
float32) before anything is timed. Each round times a block of `steps` steps of every engine,
model after model, the engine that goes first turning round by round, so a noisy moment of a
shared machine falls on all of them; the table gives each engine's median and range of the
rounds' ms per step, and the median (and range) of the per-round ratios to PyTorch and to
this tree. An older tree is `git archive <commit> tinyattn` of this repository, imported as
tinyattn_<commit> (as compare_trees.py does); a model an older tree cannot run is reported, not
adapted. All thread pools are set to 1 before numpy loads and torch.set_num_threads(1).
"""
import os
import subprocess
import sys

ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
if __name__ == "__main__":  # before numpy is imported: thread pools read these once
    os.environ.update(ONE_THREAD)

import argparse  # noqa: E402
import importlib  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.append(os.path.join(HERE, ".."))  # the checkout's tinyattn, after PYTHONPATH's

import outside_models  # noqa: E402
from _timing import markdown_table  # noqa: E402

MODELS = list(outside_models.SIZES)


def import_tree(commit):
    """tinyattn as it was at `commit`, imported as tinyattn_<commit>; or an error message."""
    folder = tempfile.mkdtemp()
    archive = subprocess.run(["git", "-C", os.path.join(HERE, ".."), "archive", commit, "tinyattn"],
                             capture_output=True)
    if archive.returncode:
        return f"git archive {commit}: {archive.stderr.decode().strip()}"
    subprocess.run(["tar", "-x", "-C", folder], input=archive.stdout, check=True)
    os.rename(os.path.join(folder, "tinyattn"), os.path.join(folder, f"tinyattn_{commit}"))
    sys.path.insert(0, folder)
    return importlib.import_module(f"tinyattn_{commit}")


def engines(name, trees):
    """{engine: step function} for model `name`, each checked against PyTorch; and notes on the left-outs."""
    import tinyattn

    data = outside_models.batches(name)
    torch_step, weights = outside_models.torch_trainer(name, data)
    runs, notes = {"PyTorch": torch_step}, []
    reference = [torch_step(0), torch_step(1)]
    packages = [("main", tinyattn)] + list(trees.items())
    for label, package, compiled in ([(label, package, False) for label, package in packages]
                                     + [(label + ", compiled", package, True) for label, package in packages
                                        if not isinstance(package, str) and hasattr(package, "compile")]):
        if isinstance(package, str):  # its import failed: measure() reports it once
            continue
        try:
            step = outside_models.tinyattn_trainer(name, package, weights, data, compiled)
            losses = [step(0), step(1)]
        except Exception as error:  # an older tree that lacks something the model calls
            notes.append(f"{label} cannot run {name}: {type(error).__name__}: {error}")
            continue
        for ours, theirs in zip(losses, reference):
            if abs(ours - theirs) > 1e-5 * max(1.0, abs(theirs)):
                raise AssertionError(f"{name} on {label}: loss {ours:.7f}, PyTorch {theirs:.7f}")
        runs[label] = step
    return runs, notes


def measure(rounds, steps, commits):
    import torch

    torch.set_num_threads(1)
    load_before = os.getloadavg()
    trees = {commit: import_tree(commit) for commit in commits}
    runs, notes = {}, [f"{commit}: {tree}" for commit, tree in trees.items() if isinstance(tree, str)]
    for name in MODELS:
        runs[name], model_notes = engines(name, trees)
        notes += model_notes
    for name, model_runs in runs.items():  # warm-up: Numba loads its kernels, allocators settle
        for step in model_runs.values():
            for i in range(3):
                step(i)
    times = {name: {engine: [] for engine in model_runs} for name, model_runs in runs.items()}
    for r in range(rounds):
        for name, model_runs in runs.items():
            order = list(model_runs)
            for engine in order[r % len(order):] + order[:r % len(order)]:
                step, start = model_runs[engine], time.perf_counter()
                for i in range(steps):
                    step(r * steps + i)
                times[name][engine].append((time.perf_counter() - start) / steps * 1e3)
    load_after = os.getloadavg()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores; torch {torch.__version__}, threads: torch "
          f"{torch.get_num_threads()}, OPENBLAS/OMP/MKL/NUMBA_NUM_THREADS=1")
    print(f"{rounds} rounds of {steps} steps per engine and model, interleaved; load average (1, 5, 15 min) "
          f"before {_load(load_before)}, after {_load(load_after)}; ms per step, median (range) of the rounds\n")
    for note in notes:
        print(f"- {note}")
    rows = []
    for name, by_engine in times.items():
        for engine, samples in by_engine.items():
            row = {"model": name, "engine": engine, "ms per step": _spread(samples)}
            if engine != "PyTorch":
                row["/ PyTorch (per round)"] = _spread([a / b for a, b in zip(samples, by_engine["PyTorch"])], 2)
            same_kind = "main, compiled" if engine.endswith(", compiled") else "main"  # eager with eager
            if engine not in ("PyTorch", same_kind) and same_kind in by_engine:
                row["main / this tree (per round)"] = _spread(
                    [a / b for a, b in zip(by_engine[same_kind], samples)], 2)
            rows.append(row)
    print(markdown_table(rows, ["model", "engine", "ms per step", "/ PyTorch (per round)",
                                "main / this tree (per round)"]))
    return times


def _spread(values, digits=1):
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def _load(load):
    return ", ".join(f"{v:.2f}" for v in load)


def profile(name, steps, top=25):
    """cProfile of `steps` training steps of tinyattn's model `name` (after a warm-up): the costs to cut."""
    import cProfile
    import pstats

    import torch

    import tinyattn

    torch.set_num_threads(1)
    data = outside_models.batches(name)
    _, weights = outside_models.torch_trainer(name, data)
    step = outside_models.tinyattn_trainer(name, tinyattn, weights, data)
    for i in range(5):
        step(i)
    profiler = cProfile.Profile()
    profiler.enable()
    for i in range(steps):
        step(i)
    profiler.disable()
    print(f"cProfile of {steps} steps of {name} on tinyattn, load average {_load(os.getloadavg())}")
    stats = pstats.Stats(profiler).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--steps", type=int, default=5, help="steps per engine in a round")
    parser.add_argument("--trees", nargs="*", default=["e402398", "23529ae"], help="older commits to compare")
    parser.add_argument("--profile", choices=MODELS, help="profile this model's tinyattn step instead")
    args = parser.parse_args()
    if args.profile:
        profile(args.profile, args.steps)
    else:
        measure(args.rounds, args.steps, args.trees)
