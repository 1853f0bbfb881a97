"""Compiled steps (ta.compile) against eager tinyattn and PyTorch: time per training step, peak memory.

    python benchmarks/bench_compiled.py [--blocks 8] [--steps 5]

Three models, each trained by four engines (eager; compiled with fusion, fuse="exact"; compiled
without fusion; PyTorch) from the same weights on the same batches:
  * the GPT step of bench_gpt.py: char level, block 64, 2 layers, 4 heads, n_embd 64, batch 32
    (inspect.py's characters), against the nanoGPT twin (tests/gpt_twin.py);
  * the composed GRU + additive-attention translator of bench_composed.py (every gate and score
    built from primitive ops, ~700 graph nodes a step), against the same code run on PyTorch;
  * bench_classifier.py's Transformer classifier (2 pre-norm layers, d_model 64, attention pooling,
    batches of 32 reviews of 30-60 words: 8 batches, so up to 8 signatures), against its twin.
A step: zero_grad, forward, backward, clip_grad_norm_(1.0), Adam(W). The compiled engine compiles
zero_grad + forward + backward (clipping reads the norm into Python, so it and the update run after
the replay, as ta.train.fit(compile=True) does). All engines run in one child process with one
thread everywhere; blocks of steps alternate (eager, compiled, PyTorch, then the reverse order...),
and the table gives the median over blocks of ms per step and the ratio to PyTorch. The CPU model
and the load average are printed with the table. Then the peak memory of one step, eager and
compiled (replayed), measured with tracemalloc (numpy reports its arrays to it).
"""
import os
import subprocess
import sys

ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
if "--child" in sys.argv:
    os.environ.update(ONE_THREAD)

import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.append(os.path.join(HERE, "..", "tests"))
import bench_classifier  # noqa: E402
import bench_composed  # noqa: E402
import bench_gpt  # noqa: E402
from _timing import markdown_table  # noqa: E402


def _learn(ta, model_loss, opt, params, compiled, fuse="exact"):
    """The step as three engines run it: the learning part compiled or not, then clip and update."""
    def learn(*batch):
        opt.zero_grad()
        loss = model_loss(*batch)
        loss.backward()
        return loss
    learn = ta.compile(learn, fuse=fuse) if compiled else learn

    def step(*batch):
        loss = learn(*batch)
        ta.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        return loss.item()
    step.learn = learn
    return step


# the engines: eager; compiled with fusion (fuse="exact", the default: eager's bits); compiled without
VARIANTS = (("eager", False, False), ("compiled", True, "exact"), ("compiled, no fusion", True, False))


def gpt_engines():
    import tinyattn as ta

    engines = {}
    for name, compiled, fuse in VARIANTS:
        model, batches, _ = bench_gpt.tinyattn_setup()
        opt = ta.optim.AdamW(model.parameters(), lr=bench_gpt.LR, weight_decay=bench_gpt.DECAY)
        engines[name] = (_learn(ta, lambda x, y, m=model: m(x, y)[1], opt, model.parameters(), compiled, fuse), batches)
    _, torch_batches, torch_step = bench_gpt.torch_setup(model, batches)
    engines["PyTorch"] = (torch_step, torch_batches)
    return engines


def classifier_engines():
    import tinyattn as ta

    engines = {}
    for name, compiled, fuse in VARIANTS:
        model, batches, _ = bench_classifier.tinyattn_setup()
        opt = ta.optim.Adam(model.parameters(), lr=bench_classifier.LR)
        loss = lambda t, l, y, m=model: ta.cross_entropy(m(t, l)[0], y)  # noqa: E731
        engines[name] = (_learn(ta, loss, opt, model.parameters(), compiled, fuse), batches)
    _, torch_batches, torch_step = bench_classifier.torch_setup(model, batches)
    engines["PyTorch"] = (torch_step, torch_batches)
    return engines


def composed_engines():
    import tinyattn as ta
    from tinyattn.data.toy_translation import PAD, ToyTranslation

    data = ToyTranslation(seed=0)
    batches = [data.batch(bench_composed.BATCH) for _ in range(4)]
    weights = bench_composed._weights(len(data.source_vocab), len(data.target_vocab), PAD)
    engines = {}
    for name, compiled, fuse in VARIANTS:
        ops = bench_composed._tinyattn_ops()
        # ops.linear is LinearFunction.apply bound once; ta.compile sees an op through Function.apply
        # looked up when it is called (as tinyattn's own layers call it)
        ops.linear = lambda *args: ta.nn.LinearFunction.apply(*args)
        ops.embedding = lambda w, ids, pad: ta.nn.EmbeddingFunction.apply(w, ids, pad)
        params = {key: ops.tensor(array.copy()) for key, array in weights.items()}
        opt = ops.adam(list(params.values()))
        loss = lambda s, l, t, p=params, o=ops: bench_composed.translation_loss(o, p, s, l, t, PAD)  # noqa: E731
        engines[name] = (_learn(ta, loss, opt, list(params.values()), compiled, fuse), batches)
    engines["PyTorch"] = (bench_composed._trainer(bench_composed._torch_ops(), weights, batches, PAD), None)
    return engines


def _runner(step, batches):
    position = [0]

    def one():
        if batches is None:
            return step()
        batch = batches[position[0] % len(batches)]
        position[0] += 1
        return step(*batch)
    return one


def _peak(fn):
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2 ** 20


def measure(name, engines, blocks, steps):
    runs = {key: _runner(step, batches) for key, (step, batches) in engines.items()}
    first = {}  # the slowest warm-up call: for a compiled engine, its first replay (fused loops compiled or loaded)
    for key, run in runs.items():  # warm-up: Numba, then two captures of every batch shape (8 batches at most)
        for _ in range(24):
            start = time.perf_counter()
            run()
            first[key] = max(first.get(key, 0.0), time.perf_counter() - start)
    samples = {key: [] for key in runs}
    order = list(runs)
    for block in range(blocks):
        for key in (order if block % 2 == 0 else order[::-1]):
            start = time.perf_counter()
            for _ in range(steps):
                runs[key]()
            samples[key].append((time.perf_counter() - start) / steps * 1e3)
    torch_ms = np.median(samples["PyTorch"])
    rows = []
    for key, values in samples.items():
        ratios = [a / b for a, b in zip(values, samples["PyTorch"])]
        rows.append({"model": name, "engine": key, "ms per step": f"{np.median(values):.2f} ({min(values):.2f}-{max(values):.2f})",
                     "/ PyTorch": f"{np.median(values) / torch_ms:.2f}",
                     "per-block ratio": f"{np.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"})
    eager_mb, compiled_mb = _peak(runs["eager"]), _peak(runs["compiled"])
    learn = engines["compiled"][0].learn
    replays = sum(entry.replays for entry in learn.entries.values())
    for row in rows:
        row["slowest warm-up call s"] = f"{first[row['engine']]:.2f}"
    return rows, (name, eager_mb, compiled_mb, replays, learn.explain())


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or "unknown"


def child(blocks, steps):
    import numba
    import torch

    torch.set_num_threads(1)
    load_before = os.getloadavg()[0]
    rows, memory = [], []
    for name, engines in (("GPT (block 64, 2 layers, n_embd 64, batch 32)", gpt_engines()),
                          ("composed GRU + additive attention (batch 64)", composed_engines()),
                          ("Transformer classifier (bench_classifier.py's)", classifier_engines())):
        table, peak = measure(name, engines, blocks, steps)
        rows += table
        memory.append(peak)
    print(f"CPU: {cpu_model()}; threads: torch {torch.get_num_threads()}, numba {numba.get_num_threads()}, "
          f"OPENBLAS/OMP/MKL_NUM_THREADS=1; load average before {load_before:.1f}, after {os.getloadavg()[0]:.1f}; "
          f"{blocks} blocks of {steps} steps per engine, alternating\n")
    print(markdown_table(rows, ["model", "engine", "ms per step", "/ PyTorch", "per-block ratio", "slowest warm-up call s"]))
    print()
    print(markdown_table([{"model": n, "eager peak MB": f"{e:.2f}", "compiled peak MB": f"{c:.2f}",
                           "compiled / eager": f"{c / e:.2f}", "replays": r} for n, e, c, r, _ in memory],
                         ["model", "eager peak MB", "compiled peak MB", "compiled / eager", "replays"]))
    for name, *_, text in memory:
        print(f"\n{name}, step.explain():\n{text}")


if __name__ == "__main__":
    def _option(flag, default):
        return int(sys.argv[sys.argv.index(flag) + 1]) if flag in sys.argv else default

    if "--child" in sys.argv:
        child(_option("--blocks", 8), _option("--steps", 5))
    else:
        subprocess.run([sys.executable, os.path.abspath(__file__), "--child", *sys.argv[1:]],
                       env={**os.environ, **ONE_THREAD}, check=True)
