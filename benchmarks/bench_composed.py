"""A whole training step of a model written with primitives: tinyattn against PyTorch, 1 thread.

The model is the translation model of tinyattn/models/seq2seq.py (a bidirectional GRU encoder,
additive attention (Bahdanau et al. 2015), a GRU decoder), but written the way a user writes a
model of their own: no fused layer, every GRU gate and the attention score built from linear,
slices, add, mul, sigmoid, tanh, masked_fill, softmax, sum, cat, stack and where. The code of
the model is written once (`translation_loss`) and runs on either engine through a few
functions whose names differ (`TINYATTN`, `TORCH`), with the same weights, so the first
step's loss must agree (to ~1e-5, float32). About 700 graph nodes per step: this measures the
engine's cost per node (Function.apply and the backward walk) on a realistic graph.

One step = zero_grad, forward, backward, clip_grad_norm_(1.0), Adam. Each engine runs in its
own block of steps, the blocks alternate (tinyattn, PyTorch, PyTorch, tinyattn, ...) so that a
noisy moment on a shared machine hits both; the table gives the median and the range of the
blocks' ms per step. All thread pools are set to 1 before numpy loads (a child process).

Run: python benchmarks/bench_composed.py [--blocks 12] [--steps 10]
"""
import os
import subprocess
import sys

ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
if "--child" in sys.argv:  # before numpy is imported: thread pools read these once
    os.environ.update(ONE_THREAD)

import time  # noqa: E402
from types import SimpleNamespace  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _timing import markdown_table  # noqa: E402

BATCH, EMBED, HIDDEN = 64, 32, 64  # as demos/translate.py


def _weights(source_vocab, target_vocab, pad):
    """The parameters as float32 arrays, PyTorch's GRU init (uniform +-1/sqrt(hidden))."""
    rng = np.random.default_rng(0)
    E, H, D = EMBED, HIDDEN, HIDDEN  # D: the decoder's state size
    shapes = {"source_embed": (source_vocab, E), "target_embed": (target_vocab, E),
              "bridge_w": (D, 2 * H), "bridge_b": (D,),
              "attn_query": (D, D), "attn_keys": (D, 2 * H), "attn_v": (D,),
              "dec_wi": (3 * D, E + 2 * H), "dec_wh": (3 * D, D), "dec_bi": (3 * D,), "dec_bh": (3 * D,),
              "out_w": (target_vocab, D + 2 * H + E), "out_b": (target_vocab,)}
    for direction in ("fwd", "bwd"):
        shapes.update({f"{direction}_wi": (3 * H, E), f"{direction}_wh": (3 * H, H),
                       f"{direction}_bi": (3 * H,), f"{direction}_bh": (3 * H,)})
    weights = {name: rng.uniform(-H ** -0.5, H ** -0.5, shape).astype(np.float32) for name, shape in shapes.items()}
    for table in ("source_embed", "target_embed"):
        weights[table] = rng.standard_normal(shapes[table]).astype(np.float32)
        weights[table][pad] = 0
    return weights


def _gru_step(ops, x, h, p, prefix):
    """r, z = sig(.), n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h."""
    H = h.shape[-1]
    gi = ops.linear(x, p[prefix + "_wi"], p[prefix + "_bi"])
    gh = ops.linear(h, p[prefix + "_wh"], p[prefix + "_bh"])
    r = (gi[:, :H] + gh[:, :H]).sigmoid()
    z = (gi[:, H:2 * H] + gh[:, H:2 * H]).sigmoid()
    n = (gi[:, 2 * H:] + r * gh[:, 2 * H:]).tanh()
    return (1 - z) * n + z * h


def translation_loss(ops, p, source, lengths, target, pad):
    """Teacher-forced cross-entropy of the attention model, on either engine (`ops`)."""
    B, S = source.shape
    real = np.arange(S)[None, :] < lengths[:, None]                     # (B, S) True on real words
    words = ops.unbind(ops.embedding(p["source_embed"], source, pad), 1)
    zeros = ops.zeros(B, HIDDEN)
    forward_states, h = [], zeros
    for t in range(S):   # a finished sentence keeps its last state
        h = ops.where(ops.mask(real[:, t:t + 1]), _gru_step(ops, words[t], h, p, "fwd"), h)
        forward_states.append(h)
    backward_states, h_back = [None] * S, zeros
    for t in reversed(range(S)):  # starts at each sentence's own last word
        h_back = ops.where(ops.mask(real[:, t:t + 1]), _gru_step(ops, words[t], h_back, p, "bwd"), h_back)
        backward_states[t] = h_back
    states = ops.cat([ops.stack(forward_states, 1), ops.stack(backward_states, 1)], -1)   # (B, S, 2H)
    state = ops.linear(ops.cat([h, h_back], -1), p["bridge_w"], p["bridge_b"]).tanh()
    keys = ops.linear(states, p["attn_keys"], None)                                    # once per sentence
    padding = ops.mask(~real)
    logits = []
    for embedded in ops.unbind(ops.embedding(p["target_embed"], target[:, :-1], pad), 1):
        hidden = (ops.linear(state, p["attn_query"], None).unsqueeze(1) + keys).tanh()  # (B, S, D)
        scores = (hidden * p["attn_v"]).sum(-1).masked_fill(padding, float("-inf"))
        context = (scores.softmax(-1).unsqueeze(-1) * states).sum(1)                  # (B, 2H)
        state = _gru_step(ops, ops.cat([embedded, context], -1), state, p, "dec")
        logits.append(ops.linear(ops.cat([state, context, embedded], -1), p["out_w"], p["out_b"]))
    return ops.cross_entropy(ops.stack(logits, 1), target[:, 1:], pad)


def _tinyattn_ops(ta=None, name="tinyattn"):
    """tinyattn's functions (or those of another copy of the package: compare_trees.py)."""
    if ta is None:
        import tinyattn as ta
    EmbeddingFunction, LinearFunction = ta.nn.EmbeddingFunction, ta.nn.LinearFunction

    return SimpleNamespace(
        name=name, framework=ta, tensor=lambda a: ta.tensor(a, requires_grad=True),
        linear=LinearFunction.apply, embedding=lambda w, ids, pad: EmbeddingFunction.apply(w, ids, pad),
        unbind=lambda x, axis: ta.unbind(x, axis), cat=lambda xs, axis: ta.cat(xs, axis),
        stack=lambda xs, axis: ta.stack(xs, axis), where=ta.where, mask=lambda m: m,
        zeros=lambda *shape: ta.zeros(*shape),
        cross_entropy=lambda logits, target, pad: ta.cross_entropy(logits, target, ignore_index=pad),
        adam=lambda params: ta.optim.Adam(params, lr=3e-3), clip=ta.nn.utils.clip_grad_norm_)


def _torch_ops():
    import torch
    import torch.nn.functional as F

    return SimpleNamespace(
        name="PyTorch", framework=torch, tensor=lambda a: torch.tensor(a, requires_grad=True),
        linear=F.linear, embedding=lambda w, ids, pad: F.embedding(torch.from_numpy(ids), w, padding_idx=pad),
        unbind=lambda x, axis: torch.unbind(x, axis), cat=lambda xs, axis: torch.cat(xs, axis),
        stack=lambda xs, axis: torch.stack(xs, axis), where=torch.where, mask=torch.from_numpy,
        zeros=lambda *shape: torch.zeros(*shape),
        cross_entropy=lambda logits, target, pad: F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), torch.from_numpy(np.ascontiguousarray(target)).reshape(-1),
            ignore_index=pad),
        adam=lambda params: torch.optim.Adam(params, lr=3e-3),
        clip=lambda params, max_norm: torch.nn.utils.clip_grad_norm_(params, max_norm))


def _trainer(ops, weights, batches, pad):
    """A function that runs one training step on the next batch and returns its loss."""
    params = {name: ops.tensor(array.copy()) for name, array in weights.items()}
    optimizer = ops.adam(list(params.values()))
    position = [0]

    def step():
        source, lengths, target = batches[position[0] % len(batches)]
        position[0] += 1
        optimizer.zero_grad()
        loss = translation_loss(ops, params, source, lengths, target, pad)
        loss.backward()
        ops.clip(list(params.values()), 1.0)
        optimizer.step()
        return float(loss.item())

    return step


def _time_ms(step, steps):
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - start) / steps * 1e3


def measure(blocks, steps):
    import numba
    import torch

    from tinyattn.data.toy_translation import PAD, ToyTranslation

    torch.set_num_threads(1)
    data = ToyTranslation(seed=0)
    batches = [data.batch(BATCH) for _ in range(4)]
    weights = _weights(len(data.source_vocab), len(data.target_vocab), PAD)
    engines = [_tinyattn_ops(), _torch_ops()]
    trainers = {ops.name: _trainer(ops, weights, batches, PAD) for ops in engines}
    first = {name: step() for name, step in trainers.items()}  # also the warm-up (Numba compiles)
    for step in trainers.values():
        for _ in range(3):
            step()
    samples = {name: [] for name in trainers}
    for block in range(blocks):
        order = list(trainers) if block % 2 == 0 else list(trainers)[::-1]
        for name in order:
            samples[name].append(_time_ms(trainers[name], steps))
    ours, theirs = (np.median(samples[name]) for name in ("tinyattn", "PyTorch"))
    ratios = [a / b for a, b in zip(samples["tinyattn"], samples["PyTorch"])]
    print(f"first-step loss: tinyattn {first['tinyattn']:.7f}, PyTorch {first['PyTorch']:.7f} "
          f"(difference {abs(first['tinyattn'] - first['PyTorch']):.1e})")
    print(f"{blocks} blocks of {steps} steps per engine, alternating; threads: torch {torch.get_num_threads()}, "
          f"numba {numba.get_num_threads()}, OPENBLAS/OMP/MKL_NUM_THREADS=1; load average before: "
          f"{LOAD}, after: {os.getloadavg()[0]:.1f}; ms per step, median (min-max)\n")
    row = {"tinyattn ms": f"{ours:.2f} ({min(samples['tinyattn']):.2f}-{max(samples['tinyattn']):.2f})",
           "PyTorch ms": f"{theirs:.2f} ({min(samples['PyTorch']):.2f}-{max(samples['PyTorch']):.2f})",
           "tinyattn / PyTorch (median of blocks)": f"{ours / theirs:.2f}",
           "per-pair ratio, median (min-max)": f"{np.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"}
    print(markdown_table([row], list(row)))


LOAD = f"{os.getloadavg()[0]:.1f}"


def run(blocks=12, steps=10):
    """Measure in a child process (the thread settings must come before numpy loads) and print its table."""
    try:
        import torch  # noqa: F401
    except ImportError:
        print("PyTorch is not installed: nothing to compare against (pip install torch)")
        return
    child = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", "--blocks", str(blocks),
                            "--steps", str(steps)], env={**os.environ, **ONE_THREAD}, capture_output=True,
                           text=True, check=True)
    print(child.stdout, end="")


if __name__ == "__main__":
    def _option(name, default):
        return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default

    if "--child" in sys.argv:
        measure(_option("--blocks", 12), _option("--steps", 10))
    else:
        run(_option("--blocks", 12), _option("--steps", 10))
