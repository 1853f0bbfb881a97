"""A Transformer classifier's whole training step, tinyattn against an identical PyTorch twin.

    python benchmarks/bench_classifier.py            # about a minute on 2 cores
    python benchmarks/bench_classifier.py --rounds 7 --steps 20 --threads 1

The model is tinyattn.models.SequenceClassifier(encoder="transformer", readout="attention"):
an embedding (d_model 64, padding_idx), sinusoidal positions, 2 pre-norm Transformer encoder
layers (4 heads, feed-forward 128, relu, no dropout) with the padding as key_padding_mask,
attention pooling (softmax(v^T tanh(W x + b)) over the real tokens) and a linear layer to the
2 classes. Batches: 32 reviews of tinyattn.data.LongReviews(min_length=30, max_length=60),
each batch within 10 words of one length. The twin is written with torch.nn
(nn.TransformerEncoderLayer(batch_first=True, norm_first=True) in an nn.TransformerEncoder, the
same pooling), gets the same weights (the state_dict names are PyTorch's), and must give the
same first-step loss (to 1e-5, float32). A step is zero_grad, forward, cross-entropy,
backward, clip_grad_norm_(1.0) and Adam(lr 1e-3).

As bench_seq2seq.py: each thread count runs in its own process (OpenBLAS reads its thread count
at start-up); in that process the engines take turns in blocks of steps (tinyattn, PyTorch,
PyTorch, tinyattn, ...), with a pause between blocks so an engine's spinning idle threads do
not slow the other. Printed: the median step time of each engine over all its steps, the range
of its block medians, and the ratio tinyattn / PyTorch.
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np

B, D, HEADS, FF, LAYERS, POOL = 32, 64, 4, 128, 2, 32
MIN_LEN, MAX_LEN, LR = 30, 60, 1e-3


def tinyattn_setup(batch=B, seed=0):
    """(model, batches, step function) for the tinyattn classifier."""
    import tinyattn as ta

    ta.ops.keep_freed_memory()  # as ta.train.fit does when training starts (the older package did it on import)
    from tinyattn.data.long_reviews import LongReviews
    from tinyattn.data.toy_translation import PAD
    from tinyattn.models import SequenceClassifier

    ta.manual_seed(seed)
    data = LongReviews(seed=seed, min_length=MIN_LEN, max_length=MAX_LEN)
    model = SequenceClassifier(len(data.vocab), 2, pad_id=PAD, encoder="transformer", readout="attention",
                               embed_dim=D, hidden_size=D, pooling_size=POOL, nhead=HEADS, num_layers=LAYERS,
                               dim_feedforward=FF, norm_first=True)
    opt = ta.optim.Adam(model.parameters(), lr=LR)
    batches = [data.batch(batch) for _ in range(8)]

    def step(tokens, lengths, labels):
        opt.zero_grad()
        logits, _ = model(tokens, lengths)
        loss = ta.cross_entropy(logits, labels)
        loss.backward()
        ta.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()

    return model, batches, step


def torch_twin(model):
    """A torch.nn module computing what `model` (a tinyattn SequenceClassifier) computes, with its weights."""
    import torch
    from torch import nn

    from tinyattn.nn.attention import sinusoidal_table

    vocab, embed = model.embedding.weight.shape
    pad_id = model.embedding.padding_idx
    num_classes = model.out.weight.shape[0]
    pool = model.pooling.project.weight.shape[0]

    class Twin(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(vocab, embed, padding_idx=pad_id)
            layer = nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.0, batch_first=True, norm_first=True)
            self.encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
            self.pooling = nn.Module()
            self.pooling.project = nn.Linear(D, pool)
            self.pooling.v = nn.Linear(pool, 1, bias=False)
            self.out = nn.Linear(D, num_classes)
            self.register_buffer("table", torch.from_numpy(sinusoidal_table(512, D).astype(np.float32)))

        def forward(self, tokens, lengths):
            T = tokens.shape[1]
            padding = torch.arange(T)[None, :] >= lengths[:, None]           # True = padding
            x = self.embedding(tokens) + self.table[:T]
            states = self.encoder(x, src_key_padding_mask=padding)
            scores = self.pooling.v(torch.tanh(self.pooling.project(states))).squeeze(-1)
            weights = scores.masked_fill(padding, float("-inf")).softmax(-1)
            return self.out((weights.unsqueeze(1) @ states).squeeze(1))

    twin = Twin()
    ours = {k: np.array(v) for k, v in model.state_dict().items()}
    theirs = twin.state_dict()
    missing = set(theirs) - set(ours) - {"table"}
    if missing or set(ours) - set(theirs):
        raise AssertionError(f"state_dict names differ: {sorted(missing)} / {sorted(set(ours) - set(theirs))}")
    twin.load_state_dict({**{k: torch.from_numpy(v) for k, v in ours.items()}, "table": theirs["table"]})
    return twin


def torch_setup(model, batches):
    """(twin, torch batches, step function) for the PyTorch twin of `model`."""
    import torch
    import torch.nn.functional as F

    twin = torch_twin(model)
    opt = torch.optim.Adam(twin.parameters(), lr=LR)
    torch_batches = [tuple(torch.from_numpy(np.ascontiguousarray(a)) for a in b) for b in batches]

    def step(tokens, lengths, labels):
        opt.zero_grad()
        loss = F.cross_entropy(twin(tokens, lengths), labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(twin.parameters(), 1.0)
        opt.step()
        return loss.item()

    return twin, torch_batches, step


def engines(batch=B):
    """{"tinyattn": (step, batches), "PyTorch": (step, batches)} after checking the first losses agree."""
    model, batches, tiny_step = tinyattn_setup(batch)
    twin, torch_batches, torch_step = torch_setup(model, batches)
    ours, theirs = tiny_step(*batches[0]), torch_step(*torch_batches[0])
    if abs(ours - theirs) > 1e-5 * max(1.0, abs(theirs)):
        raise AssertionError(f"first-step losses differ: tinyattn {ours:.7f}, PyTorch {theirs:.7f}")
    return {"tinyattn": (tiny_step, batches), "PyTorch": (torch_step, torch_batches)}, (ours, theirs)


def time_blocks(runs, rounds, steps):
    """{engine: list of per-block lists of step times (ms)}, the engines taking turns by block (ABBA...)."""
    times = {name: [] for name in runs}
    position = 0
    for r in range(rounds):
        order = list(runs) if r % 2 == 0 else list(runs)[::-1]
        for name in order:
            step, batches = runs[name]
            block = []
            for i in range(steps):
                start = time.perf_counter()
                step(*batches[(position + i) % len(batches)])
                block.append((time.perf_counter() - start) * 1e3)
            times[name].append(block)
            time.sleep(0.2)  # let the engine's worker threads fall asleep before the other starts
        position += steps  # both engines see the same batches in a round
    return times


def summary(blocks):
    """(median over every step, lowest block median, highest block median), in ms."""
    medians = [float(np.median(b)) for b in blocks]
    return float(np.median(np.concatenate(blocks))), min(medians), max(medians)


def child(threads, rounds, steps):
    import torch

    torch.set_num_threads(threads)
    runs, (ours, theirs) = engines()
    for step, batches in runs.values():  # warm-up: Numba loads its kernels, allocators settle
        for b in batches[1:4]:
            step(*b)
    times = time_blocks(runs, rounds, steps)
    tiny, pt = summary(times["tinyattn"]), summary(times["PyTorch"])
    import tinyattn
    print(f"{threads}\t{tiny[0]:.2f}\t{tiny[1]:.2f}\t{tiny[2]:.2f}\t{pt[0]:.2f}\t{pt[1]:.2f}\t{pt[2]:.2f}\t{ours:.7f}"
          f"\t{theirs:.7f}\t{os.path.realpath(os.path.dirname(tinyattn.__file__))}")


def measure(threads, rounds, steps):
    """Run one thread count in a fresh process; (tinyattn summary, PyTorch summary, losses, package folder)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads), NUMBA_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, __file__, "--child", str(threads), "--rounds", str(rounds),
                          "--steps", str(steps)], env=env, capture_output=True, text=True, check=True)
    fields = out.stdout.strip().splitlines()[-1].split("\t")
    values = [float(f) for f in fields[1:9]]
    return tuple(values[0:3]), tuple(values[3:6]), tuple(values[6:8]), fields[9]


def run(rounds=5, steps=15, thread_counts=(1, 2)):
    rows = {}
    load = os.getloadavg()[0]
    print("| threads per engine | tinyattn ms/step (median, block range) | PyTorch ms/step | tinyattn / PyTorch |")
    print("|---|---|---|---|")
    for threads in thread_counts:
        tiny, pt, losses, package = measure(threads, rounds, steps)
        rows[threads] = tiny, pt
        print(f"| {threads} | {tiny[0]:.1f} ({tiny[1]:.1f}-{tiny[2]:.1f}) | {pt[0]:.1f} ({pt[1]:.1f}-{pt[2]:.1f}) "
              f"| {tiny[0] / pt[0]:.2f} |")
    best_tiny = min(rows.values(), key=lambda r: r[0][0])[0][0]
    best_torch = min(rows.values(), key=lambda r: r[1][0])[1][0]
    print(f"\nbest of each: tinyattn {best_tiny:.1f} ms, PyTorch {best_torch:.1f} ms, ratio {best_tiny / best_torch:.2f}"
          f"  (first-step loss {losses[0]:.7f} vs {losses[1]:.7f}; {rounds} rounds of {steps} steps per engine; "
          f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after; tinyattn from {package})")
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="blocks per engine, alternating")
    parser.add_argument("--steps", type=int, default=15, help="training steps per block")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="thread counts, one process each")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    # the repository as a fallback only, after PYTHONPATH and site-packages: PYTHONPATH=<folder> picks the package
    sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    if args.child is not None:
        child(args.child, args.rounds, args.steps)
    else:
        run(args.rounds, args.steps, tuple(args.threads))
