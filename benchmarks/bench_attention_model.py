"""A small attention-only model's training step, tinyattn against its torch.nn twin, by CPU time.

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/bench_attention_model.py [--profile]

Two nn.MultiheadAttention(64, 4) self-attention layers, batch 32 of 32 tokens, MSE loss, Adam;
the twin loads tinyattn's state_dict. Steps alternate in blocks of 30 (10 rounds), timed by the
process's CPU time (one thread each; on a shared machine the wall clock mostly measures waiting),
malloc keeping freed memory (as ta.train.fit). --profile adds tinyattn's top costs (cProfile).
"""
import cProfile
import os
import pstats
import sys
import time

import numpy as np
import torch

import tinyattn as ta
import tinyattn.nn as nn

B, T, D, H = 32, 32, 64, 4


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.a1, self.a2 = nn.MultiheadAttention(D, H, batch_first=True), nn.MultiheadAttention(D, H, batch_first=True)

    def forward(self, x):
        h, _ = self.a1(x, x, x)
        return self.a2(h, h, h)[0]


class Twin(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a1 = torch.nn.MultiheadAttention(D, H, batch_first=True)
        self.a2 = torch.nn.MultiheadAttention(D, H, batch_first=True)

    def forward(self, x):
        h, _ = self.a1(x, x, x)
        return self.a2(h, h, h)[0]


def main():
    torch.set_num_threads(1)
    ta.set_blas_threads(1)  # one thread each, as ta.train.fit trains
    ta.ops.keep_freed_memory()
    ta.manual_seed(0)
    model, twin = Model(), Twin()
    twin.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in model.state_dict().items()})
    rng = np.random.default_rng(0)
    data = [(rng.standard_normal((B, T, D)).astype(np.float32), rng.standard_normal((B, T, D)).astype(np.float32))
            for _ in range(4)]
    opt, topt = ta.optim.Adam(model.parameters(), lr=1e-3), torch.optim.Adam(twin.parameters(), lr=1e-3)

    def step(i):
        x, y = data[i % 4]
        opt.zero_grad()
        loss = ((model(ta.tensor(x)) - ta.tensor(y)) ** 2).mean()
        loss.backward()
        opt.step()
        return loss.item()

    def twin_step(i):
        x, y = (torch.from_numpy(a) for a in data[i % 4])
        topt.zero_grad()
        loss = ((twin(x) - y) ** 2).mean()
        loss.backward()
        topt.step()
        return loss.item()

    ours, theirs = step(0), twin_step(0)
    assert abs(ours - theirs) < 1e-5, (ours, theirs)
    for i in range(5):
        step(i), twin_step(i)
    times = {"tinyattn": [], "PyTorch": []}
    for r in range(10):
        pairs = [("tinyattn", step), ("PyTorch", twin_step)]
        for name, run in pairs if r % 2 == 0 else pairs[::-1]:
            for i in range(30):
                start = time.process_time()
                run(i)
                times[name].append((time.process_time() - start) * 1e3)
    a, b = np.median(times["tinyattn"]), np.median(times["PyTorch"])
    print(f"CPU ms a step (median of 300): tinyattn {a:.2f}, PyTorch {b:.2f}, ratio {a / b:.2f}; "
          f"load average {os.getloadavg()[0]:.1f}; tinyattn from {os.path.dirname(ta.__file__)}")
    if "--profile" in sys.argv:
        profile = cProfile.Profile(time.process_time)
        profile.runcall(lambda: [step(i) for i in range(50)])
        pstats.Stats(profile).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
