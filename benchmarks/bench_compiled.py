"""Compiled steps (ta.compile) against eager tinyattn and PyTorch: time per training step, peak memory.

    python benchmarks/bench_compiled.py [--blocks 8] [--steps 5]
    python benchmarks/bench_compiled.py --profile [--steps 40]   # where a compiled step's time goes

Four models, each trained by four engines (eager; compiled with fusion, fuse="exact"; compiled
without fusion; PyTorch) from the same weights on the same batches:
  * the GPT step of bench_gpt.py: char level, block 64, 2 layers, 4 heads, n_embd 64, batch 32
    (inspect.py's characters), against the nanoGPT twin (tests/gpt_twin.py);
  * the composed GRU + additive-attention translator of bench_composed.py (every gate and score
    built from primitive ops, ~700 graph nodes a step), against the same code run on PyTorch;
  * bench_classifier.py's Transformer classifier (2 pre-norm layers, d_model 64, attention pooling,
    batches of 32 reviews of 30-60 words: 8 batches, so up to 8 signatures), against its twin;
  * bench_seq2seq.py's hand-fused translation model (Seq2Seq: fused GRU encoder, fused attentive
    GRU decoder, batch 64), against its torch.nn twin.
A step: zero_grad, forward, backward, clip_grad_norm_(1.0), Adam(W). The compiled engine compiles
zero_grad + forward + backward (clipping reads the norm into Python, so it and the update run after
the replay, as ta.train.fit(compile=True) does). All engines run in one child process with one
thread everywhere; blocks of steps alternate (eager, compiled, PyTorch, then the reverse order...),
and the table gives the median over blocks of ms per step and the ratio to PyTorch. The CPU model
and the load average are printed with the table. Then the peak memory of one step, eager and
compiled (replayed), measured with tracemalloc (numpy reports its arrays to it).

--profile instead times a compiled step by kind of work (each function the generated replay calls,
through a timing wrapper whose own cost is measured and taken off; clipping and Adam around it),
and times the replay's products alone with numpy's BLAS and with torch.matmul on the same arrays.
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
import bench_seq2seq  # noqa: E402
from _timing import markdown_table  # noqa: E402
from tinyattn.compile.seams import ArrayCall  # noqa: E402


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
    step.learn, step.opt, step.params = learn, opt, params
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


def seq2seq_engines():
    import tinyattn as ta

    engines = {}
    for name, compiled in (("eager", False), ("compiled", True)):
        model, batches, _ = bench_seq2seq.tinyattn_setup()
        opt = ta.optim.Adam(model.parameters(), lr=3e-3)
        engines[name] = (_learn(ta, model.loss, opt, model.parameters(), compiled), batches)
    _, torch_batches, torch_step = bench_seq2seq.torch_setup(model, batches)
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
        ops.linear = lambda *args: ta.nn.layers.LinearFunction.apply(*args)
        ops.embedding = lambda w, ids, pad: ta.nn.layers.EmbeddingFunction.apply(w, ids, pad)
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


# --- --profile: where a compiled step's time goes --------------------------------------------
UNTIMED = {"asarray", "as_tuple", "tensor", "generator", "fail", "replay", "__builtins__"}  # Python's own work


def _kind(name, function):
    """What a function bound in a replay's namespace is, for the profile's rows."""
    if name == "same":
        return "guards inside the replay (values read into Python)"
    if name == "add_to_grad":
        return "gradients into .grad (add_to_grad)"
    if getattr(function, "__name__", "") in ("forward", "backward"):
        return "op rules run whole (their numpy and kernels)"
    if getattr(function, "__name__", "") in ("matmul", "dot", "einsum", "tensordot"):
        return "BLAS products (arrays.matmul, np.dot...)"
    if isinstance(function, ArrayCall) or name.rsplit("_", 2)[-2:-1] in (["kernel"], ["reference"]):
        return "other ops/arrays.py calls (a Numba kernel or its numpy reference)"  # bound at capture: name_kernel_12
    if name.startswith("Optimizer_"):
        return "opt.zero_grad (in the replay)"
    if isinstance(function, np.ufunc):
        return "numpy ufuncs (add, multiply, tanh...)"
    return "other numpy calls (reductions, reshape, transpose, copies...)"


def _timed(function, kind, spent, counts, each=None):
    clock = time.perf_counter
    label = f"arrays.{function.name}" if isinstance(function, ArrayCall) else \
        f"{getattr(function, '__module__', None) or ''}.{getattr(function, '__qualname__', function)}"

    def timed(*args, **kwargs):
        start = clock()
        result = function(*args, **kwargs)
        took = clock() - start
        spent[kind] += took
        counts[kind] += 1
        if each is not None:
            each[label] = each.get(label, 0.0) + took
        return result
    return timed


def _wrapper_cost():
    """(seconds a timed wrapper adds inside its own measurement, seconds it adds outside it) per call."""
    spent, counts, n = {"x": 0.0}, {"x": 0}, 20000
    nothing = lambda: None  # noqa: E731
    wrapped = _timed(nothing, "x", spent, counts)
    start = time.perf_counter()
    for _ in range(n):
        nothing()
    plain = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(n):
        wrapped()
    outer = time.perf_counter() - start
    return spent["x"] / n, (outer - spent["x"] - plain) / n


def profile(name, engines, steps):
    """ms per compiled step by kind of work: each function a replay calls is timed (a wrapper
    bound in the generated code's namespace, its own cost measured and taken off), and the
    parts of the step outside the replay (signature and guards, clipping, Adam) around them."""
    step, batches = engines["compiled"]
    learn, opt, params = step.learn, step.opt, step.params
    import tinyattn as ta

    plans = [plan for entry in learn.entries.values() for plan in entry.plans]
    spent, counts, undo, each = {}, {}, [], {}
    for plan in plans:
        space = plan._run.__globals__
        for key, value in list(space.items()):
            if key in UNTIMED or isinstance(value, type) or not callable(value) or isinstance(value, ta.Tensor):
                continue
            kind = _kind(key, value)
            spent.setdefault(kind, 0.0), counts.setdefault(kind, 0)
            undo.append((space, key, value))
            space[key] = _timed(value, kind, spent, counts, each)
        for attribute, kind in (("_run", "replay"), ("check_entry", "guards on entry (modules, closure, parameters)")):
            spent.setdefault(kind, 0.0), counts.setdefault(kind, 0)
            undo.append((plan.__dict__, attribute, plan.__dict__.get(attribute)))
            setattr(plan, attribute, _timed(getattr(plan, attribute), kind, spent, counts))
    parts = {"whole step": 0.0, "ta.compile call (signature, plan choice)": 0.0, "clip_grad_norm_ (eager)": 0.0,
             "opt.step (eager)": 0.0}
    position = [0]
    for _ in range(steps):
        batch = batches[position[0] % len(batches)]
        position[0] += 1
        t0 = time.perf_counter()
        loss = learn(*batch)
        t1 = time.perf_counter()
        ta.nn.utils.clip_grad_norm_(params, 1.0)
        t2 = time.perf_counter()
        opt.step()
        t3 = time.perf_counter()
        loss.item()
        parts["whole step"] += time.perf_counter() - t0
        parts["ta.compile call (signature, plan choice)"] += t1 - t0
        parts["clip_grad_norm_ (eager)"] += t2 - t1
        parts["opt.step (eager)"] += t3 - t2
    for space, key, value in undo:
        if value is None:
            del space[key]
        else:
            space[key] = value
    inside, outside = _wrapper_cost()
    wrapped = sum(counts[k] for k in spent if k not in ("replay", "guards on entry (modules, closure, parameters)"))
    calls = {k: counts[k] for k in spent}
    net = {k: spent[k] - counts[k] * inside for k in spent}
    replay_python = net["replay"] - sum(net[k] for k in net if k not in ("replay", "guards on entry (modules, closure, parameters)")) \
        - wrapped * (inside + outside)
    parts["ta.compile call (signature, plan choice)"] -= spent["replay"] + spent["guards on entry (modules, closure, parameters)"]
    rows = [{"kind of work": k, "ms per step": f"{v / steps * 1e3:.2f}", "calls per step": f"{calls[k] / steps:.0f}"}
            for k, v in sorted(net.items(), key=lambda kv: -kv[1]) if k != "replay"]
    rows.append({"kind of work": "generated code's own Python (locals, del, shape checks)",
                 "ms per step": f"{replay_python / steps * 1e3:.2f}", "calls per step": ""})
    rows += [{"kind of work": k, "ms per step": f"{v / steps * 1e3:.2f}", "calls per step": ""} for k, v in parts.items()]
    print(f"\n{name}: compiled step, {steps} steps (a timed wrapper costs {inside * 1e9:.0f} ns inside and "
          f"{outside * 1e9:.0f} ns outside its measurement, taken off)\n")
    print(markdown_table(rows, ["kind of work", "ms per step", "calls per step"]))
    numpy_ms, torch_ms, products = _products_vs_torch(plans, learn, batches)
    print(f"\nthe replay's {products} products (arrays.matmul), each timed alone on its own arrays: numpy's BLAS "
          f"{numpy_ms:.2f} ms, PyTorch's {torch_ms:.2f} ms (torch.matmul on the same memory)")
    top = sorted(each.items(), key=lambda kv: -kv[1])[:10]
    print("\nthe functions the replay spends most in (ms per step, wrapper cost included): "
          + ", ".join(f"{label} {t / steps * 1e3:.2f}" for label, t in top))


def _products_vs_torch(plans, learn, batches, repeats=20):
    """(ms numpy, ms PyTorch, count): the products one replay makes, each timed alone on its arrays."""
    import torch

    calls, undo = [], []
    for plan in plans:
        space = plan._run.__globals__
        for key, value in list(space.items()):
            if isinstance(value, ArrayCall) and value.name == "matmul" or key.startswith(("matmul_kernel_", "matmul_reference_")):
                def record(a, b, value=value):
                    calls.append((a, b))
                    return value(a, b)
                undo.append((space, key, value))
                space[key] = record
    learn(*batches[0])
    for space, key, value in undo:
        space[key] = value

    def ms(product, a, b):
        product(a, b)
        start = time.perf_counter()
        for _ in range(repeats):
            product(a, b)
        return (time.perf_counter() - start) / repeats * 1e3
    return (sum(ms(np.matmul, a, b) for a, b in calls),
            sum(ms(torch.matmul, torch.from_numpy(a), torch.from_numpy(b)) for a, b in calls), len(calls))


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or "unknown"


MODELS = (("GPT (block 64, 2 layers, n_embd 64, batch 32)", gpt_engines),
          ("composed GRU + additive attention (batch 64)", composed_engines),
          ("Transformer classifier (bench_classifier.py's)", classifier_engines),
          ("hand-fused translation model (bench_seq2seq.py's Seq2Seq)", seq2seq_engines))


def profile_child(steps):
    import torch

    torch.set_num_threads(1)
    print(f"CPU: {cpu_model()}; one thread; load average {os.getloadavg()[0]:.1f}")
    for name, make in MODELS:
        engines = make()
        run = _runner(*engines["compiled"])
        for _ in range(24):  # as measure()'s warm-up: every batch shape captured twice
            run()
        profile(name, engines, steps)


def child(blocks, steps):
    import numba
    import torch

    torch.set_num_threads(1)
    load_before = os.getloadavg()[0]
    rows, memory = [], []
    for name, engines in (("GPT (block 64, 2 layers, n_embd 64, batch 32)", gpt_engines()),
                          ("composed GRU + additive attention (batch 64)", composed_engines()),
                          ("Transformer classifier (bench_classifier.py's)", classifier_engines()),
                          ("hand-fused translation model (bench_seq2seq.py's Seq2Seq)", seq2seq_engines())):
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

    if "--child" in sys.argv and "--profile" in sys.argv:
        profile_child(_option("--steps", 40))
    elif "--child" in sys.argv:
        child(_option("--blocks", 8), _option("--steps", 5))
    else:
        subprocess.run([sys.executable, os.path.abspath(__file__), "--child", *sys.argv[1:]],
                       env={**os.environ, **ONE_THREAD}, check=True)
