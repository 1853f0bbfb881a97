"""How the translation model's training step grows with batch size and source length.

    python benchmarks/bench_scaling.py            # 3-4 minutes on 2 cores

The model of bench_seq2seq.py (tinyattn's Seq2Seq and its PyTorch twin, one thread each), on
random sentences of one fixed length: the source has S words, the target S + 2 tokens. Two
sweeps: batch B in (1, 4, 16, 64, 256) at S = 15, and S in (5, 15, 30, 60) at B = 64. Each
point runs in a fresh process: a warm-up step on a tiny batch (Numba loads its kernels, PyTorch
its allocator), then a few steps (forward, backward, clip, Adam) of the point's size, of which
the median time after the first and the peak memory: the growth of the process's peak
resident size (ru_maxrss) over its size before them, so that both engines are measured alike. Prints a markdown table; writes benchmarks/scaling.png.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BATCHES, LENGTHS = (1, 4, 16, 64, 256), (5, 15, 30, 60)
STEPS = 4


def _point(engine, batch, length, steps):
    """(median ms per step, peak MB above the size before the first step), in this process."""
    import resource
    import time

    import numpy as np
    import torch

    sys.path.insert(0, HERE)
    from bench_seq2seq import tinyattn_setup, torch_setup

    torch.set_num_threads(1)
    model, _, tiny_step = tinyattn_setup(batch=2)
    rng = np.random.default_rng(0)
    source_vocab, target_vocab = model.encoder.embedding.weight.shape[0], model.decoder.embedding.weight.shape[0]

    def sentences(batch, length):
        source = rng.integers(3, source_vocab, (batch, length))
        target = np.concatenate([np.full((batch, 1), model.bos_id), rng.integers(3, target_vocab, (batch, length)),
                                 np.full((batch, 1), model.eos_id)], axis=1)
        arrays = (source, np.full(batch, length), target)
        return tuple(torch.from_numpy(a) for a in arrays) if engine == "PyTorch" else arrays

    step = torch_setup(model, [])[2] if engine == "PyTorch" else tiny_step
    step(*sentences(1, 2))  # warm-up
    arrays = sentences(batch, length)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    times = []
    for _ in range(steps + 1):
        start = time.perf_counter()
        step(*arrays)
        times.append((time.perf_counter() - start) * 1e3)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return float(np.median(times[1:])), (peak - before) / 1024  # ru_maxrss is in KiB on Linux


def measure(engine, batch, length, steps=STEPS):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    out = subprocess.run([sys.executable, __file__, "--point", engine, str(batch), str(length), str(steps)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    fig, axes = plt.subplots(2, 2, figsize=(9, 6.5))
    for col, (sweep, key, label) in enumerate((("batch", "B", "batch size (source length 15)"),
                                               ("length", "S", "source length (batch 64)"))):
        points = [r for r in rows if r["sweep"] == sweep]
        for engine, marker in (("tinyattn", "o"), ("PyTorch", "s")):
            xs = [r[key] for r in points if r["engine"] == engine]
            axes[0, col].plot(xs, [r["ms"] for r in points if r["engine"] == engine], marker=marker, label=engine)
            axes[1, col].plot(xs, [r["MB"] for r in points if r["engine"] == engine], marker=marker, label=engine)
        for row, ylabel in ((0, "ms per training step"), (1, "peak memory of the steps (MB)")):
            ax = axes[row, col]
            ax.set_xscale("log")
            ax.set_yscale("log" if row == 0 else "linear")
            ax.set_xticks(sorted({r[key] for r in points}))
            for axis in (ax.xaxis, ax.yaxis):  # plain numbers on the log axes
                axis.set_major_formatter(ScalarFormatter())
                axis.set_minor_formatter(NullFormatter())
            ax.set_xlabel(label)
            ax.set_ylabel(ylabel)
            ax.grid(alpha=0.3)
            ax.legend()
    fig.suptitle("Seq2Seq training step (1 thread each)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def run(steps=STEPS, png=os.path.join(HERE, "scaling.png")):
    rows = []
    points = [("batch", b, 15) for b in BATCHES] + [("length", 64, s) for s in LENGTHS]
    for sweep, batch, length in points:
        for engine in ("tinyattn", "PyTorch"):
            ms, mb = measure(engine, batch, length, steps)
            rows.append({"sweep": sweep, "engine": engine, "B": batch, "S": length, "ms": ms, "MB": mb})
    print("| B | S | tinyattn ms | PyTorch ms | tinyattn / PyTorch | tinyattn MB | PyTorch MB |")
    print("|---|---|---|---|---|---|---|")
    for i in range(0, len(rows), 2):
        ours, theirs = rows[i], rows[i + 1]
        print(f"| {ours['B']} | {ours['S']} | {ours['ms']:.1f} | {theirs['ms']:.1f} | {ours['ms'] / theirs['ms']:.2f} "
              f"| {ours['MB']:.1f} | {theirs['MB']:.1f} |")
    plot(rows, png)
    print(f"\npicture: {os.path.relpath(png)}")
    return rows


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--point":
        engine, batch, length, steps = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
        ms, mb = _point(engine, batch, length, steps)
        print(json.dumps([ms, mb]))
    else:
        run()
