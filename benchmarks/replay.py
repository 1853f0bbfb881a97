"""The compiled steps of bench_compiled.py's models, this tree against another, interleaved in one run.

    python benchmarks/replay.py [--base main] [--models composed classifier gpt seq2seq] [--rounds 8] [--steps 5]
                                [--engine compiled|eager]

Each tree (this checkout's tinyattn, and `git archive <base> tinyattn`) runs in a child process of
its own, one thread everywhere, holding bench_compiled.py's engines of every model (warmed up as
bench_compiled.py does: 24 steps, so every batch shape is captured twice and replayed; --engine
eager times bench_compiled.py's eager engine instead). The parent
asks the children in turn for a block of `steps` steps of one engine, the tree that goes first
turning round by round, so a noisy moment of a shared machine falls on both; PyTorch is timed in
both children. The table gives each tree's median (and range) of the rounds' ms per step of the
compiled engine and the median (and range) of the per-round ratios to PyTorch (PyTorch timed in the
same child, just before or after).
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def child(engine, models):
    import torch

    import bench_compiled
    torch.set_num_threads(1)
    runs = {}
    for model in models:
        engines = getattr(bench_compiled, f"{model}_engines")()
        for name in (engine, "PyTorch"):
            run = runs[model, name] = bench_compiled._runner(*engines[name])
            for _ in range(24):
                run()
    print("ready", flush=True)
    for line in sys.stdin:
        model, engine, steps = line.split("|")
        run = runs[model, engine]
        start = time.perf_counter()
        for _ in range(int(steps)):
            run()
        print(f"{(time.perf_counter() - start) / int(steps) * 1e3:.4f}", flush=True)


def spawn(tree, engine, models):
    env = {**os.environ, **ONE_THREAD, "PYTHONPATH": tree}
    process = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", engine, *models], env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=HERE)
    return process


def ask(process, model, engine, steps):
    process.stdin.write(f"{model}|{engine}|{steps}\n")
    process.stdin.flush()
    return float(process.stdout.readline())


def main():
    args = sys.argv[1:]

    def option(flag, default, many=False):
        if flag not in args:
            return default
        at = args.index(flag) + 1
        if not many:
            return args[at]
        end = next((i for i in range(at, len(args)) if args[i].startswith("--")), len(args))
        return args[at:end]

    base, models = option("--base", "main"), option("--models", ["composed", "classifier", "gpt", "seq2seq"], True)
    rounds, steps, engine = int(option("--rounds", "8")), int(option("--steps", "5")), option("--engine", "compiled")
    folder = tempfile.mkdtemp()
    subprocess.run(f"git -C {ROOT} archive {base} tinyattn | tar -x -C {folder}", shell=True, check=True)
    trees = {"this tree": ROOT, base: folder}
    load = os.getloadavg()[0]
    children = {name: spawn(tree, engine, models) for name, tree in trees.items()}
    for process in children.values():
        assert process.stdout.readline().strip() == "ready"
    ms = {(name, model, kind): [] for name in trees for model in models for kind in (engine, "PyTorch")}
    for round_ in range(rounds):
        order = list(trees) if round_ % 2 == 0 else list(trees)[::-1]
        for model in models:
            for name in order:
                for kind in (engine, "PyTorch") if round_ % 2 == 0 else ("PyTorch", engine):
                    ms[name, model, kind].append(ask(children[name], model, kind, steps))
    for process in children.values():
        process.stdin.close()
        process.wait()
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    print(f"CPU: {cpu}; one thread; load average before {load:.1f}, after {os.getloadavg()[0]:.1f}; "
          f"{rounds} rounds of {steps} steps, trees alternating; base = {base}\n")
    print(f"| model | tree | {engine} ms/step | PyTorch ms/step | {engine} / PyTorch (per round) "
          f"| {engine} / this tree's (per round) |")
    print("|---|---|---|---|---|---|")
    for model in models:
        for name in trees:
            mine, torch_ms = ms[name, model, engine], ms[name, model, "PyTorch"]
            print(f"| {model} | {name} | {_spread(mine, 2)} | {statistics.median(torch_ms):.2f} | "
                  f"{_spread([a / b for a, b in zip(mine, torch_ms)])} | "
                  f"{_spread([a / b for a, b in zip(mine, ms['this tree', model, engine])])} |")


def _spread(values, digits=3):
    """The median and (range) of `values`."""
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


if __name__ == "__main__":
    if "--child" in sys.argv:
        os.environ.update(ONE_THREAD)
        sys.path.insert(0, HERE)
        child(sys.argv[sys.argv.index("--child") + 1], sys.argv[sys.argv.index("--child") + 2:])
    else:
        main()
