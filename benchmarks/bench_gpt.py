"""A character-level GPT's training step, tinyattn against its PyTorch twin; and generation speed.

    python benchmarks/bench_gpt.py --threads 1                 # about a minute on 2 cores
    python benchmarks/bench_gpt.py --threads 1 --rounds 7 --steps 20

The model is ta.models.GPT(vocab, block_size=64, n_layer=2, n_head=4, n_embd=64, dropout=0),
learned positions, on the characters of Python's own `inspect.py` (read at run time). The twin
is tests/gpt_twin.py (a transcription of nanoGPT's model.py), loaded from tinyattn's state_dict,
and must give the same first-step loss (to 1e-5, float32). A step: zero_grad, forward with
targets (batch 32 x 64 characters), backward, clip_grad_norm_(1.0), AdamW(lr 1e-3, weight
decay 0.1 on every parameter: one group, as tinyattn's optimisers take no groups yet).
Timing (a process per thread count, blocks of steps alternating, both on the same batches) is
_twin_steps.py's: median step time, range of the block medians, ratio tinyattn / PyTorch. malloc
keeps freed memory (ta.ops.keep_freed_memory(), as ta.train.fit sets it), for both engines: with
the system's settings each tinyattn step took ~3,450 page faults, PyTorch's ~950.

Then generation, in a fresh one-thread process: tokens per second for one sequence from a
one-character prompt, model.generate(use_cache=True / False, top_k=1) and nanoGPT's uncached
loop on the twin, rounds interleaved, median (range). Two sizes: 63 new tokens with block 64
(the whole run inside the block: the cache's case), and 255 with block 256, same widths.
"""
import inspect
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.append(os.path.join(HERE, "..", "tests"))  # gpt_twin.py, the nanoGPT twin
import _twin_steps as twin_steps  # noqa: E402
from _twin_steps import compare_engines  # noqa: E402

B, BLOCK, LAYERS, HEADS, EMBD, LR, DECAY = 32, 64, 2, 4, 64, 1e-3, 0.1
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}


def characters():
    """(ids of inspect.py's characters, vocabulary size)."""
    text = open(inspect.__file__, encoding="utf-8").read()
    vocab = sorted(set(text))
    lookup = {c: i for i, c in enumerate(vocab)}
    return np.array([lookup[c] for c in text], dtype=np.int64), len(vocab)


def tinyattn_setup(seed=0, ta=None):
    """(model, batches, step function) for tinyattn's GPT; ta: the package to use (compare_trees_gpt.py
    passes an older copy), tinyattn by default."""
    if ta is None:
        import tinyattn as ta

    ta.ops.keep_freed_memory()  # as ta.train.fit does when training starts (and bench_seq2seq.py does)
    data, vocab = characters()
    ta.manual_seed(seed)
    model = ta.models.GPT(vocab, BLOCK, n_layer=LAYERS, n_head=HEADS, n_embd=EMBD)
    opt = ta.optim.AdamW(model.parameters(), lr=LR, weight_decay=DECAY)
    rng = np.random.default_rng(seed)
    batches = []
    for _ in range(8):
        starts = rng.integers(0, len(data) - BLOCK - 1, B)
        window = np.stack([data[s:s + BLOCK + 1] for s in starts])
        batches.append((window[:, :-1], window[:, 1:]))

    def step(idx, targets):
        opt.zero_grad()
        _, loss = model(idx, targets)
        loss.backward()
        ta.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()

    return model, batches, step


def torch_setup(model, batches):
    """(twin, torch batches, step function) for the nanoGPT twin of `model`."""
    import torch

    from gpt_twin import twin_of

    twin = twin_of(model)
    opt = torch.optim.AdamW(twin.parameters(), lr=LR, weight_decay=DECAY)
    torch_batches = [tuple(torch.from_numpy(np.ascontiguousarray(a)) for a in b) for b in batches]

    def step(idx, targets):
        opt.zero_grad()
        _, loss = twin(idx, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(twin.parameters(), 1.0)
        opt.step()
        return loss.item()

    return twin, torch_batches, step


def engines():
    """({"tinyattn": (step, batches), "PyTorch": (step, batches)}, first losses), checked to agree."""
    return compare_engines(tinyattn_setup, torch_setup)


def generation(rounds):
    """Print tokens/s of generate with and without the cache, and of nanoGPT's loop on the twin."""
    import torch

    import tinyattn as ta
    from gpt_twin import twin_of

    torch.set_num_threads(1)
    _, vocab = characters()
    print("| block_size | new tokens | tinyattn, cache (tokens/s) | tinyattn, no cache | nanoGPT's loop, PyTorch | cache / no cache |")
    print("|---|---|---|---|---|---|")
    for block in (64, 256):
        ta.manual_seed(0)
        model = ta.models.GPT(vocab, block, n_layer=LAYERS, n_head=HEADS, n_embd=EMBD)
        twin = twin_of(model)
        new = block - 1
        prompt = np.zeros((1, 1), dtype=np.int64)

        def twin_generate():
            tokens = torch.from_numpy(prompt)
            with torch.no_grad():
                for _ in range(new):
                    logits = twin(tokens[:, -block:])[:, -1]
                    tokens = torch.cat([tokens, logits.argmax(-1, keepdim=True)], dim=1)
            return tokens.numpy()

        runs = {"cache": lambda: model.generate(prompt, new, top_k=1, use_cache=True),
                "no cache": lambda: model.generate(prompt, new, top_k=1, use_cache=False),
                "torch": twin_generate}
        first = {name: run() for name, run in runs.items()}  # warm-up; and the three agree
        assert (first["cache"] == first["no cache"]).all(), "cached and uncached tokens differ"
        rates = {name: [] for name in runs}
        for _ in range(rounds):
            for name, run in runs.items():
                start = time.perf_counter()
                run()
                rates[name].append(new / (time.perf_counter() - start))
        cell = {name: f"{np.median(r):.0f} ({min(r):.0f}-{max(r):.0f})" for name, r in rates.items()}
        print(f"| {block} | {new} | {cell['cache']} | {cell['no cache']} | {cell['torch']} | "
              f"{np.median(rates['cache']) / np.median(rates['no cache']):.1f}x |")
    same = "the same" if (first["torch"] == first["cache"]).all() else "NOT the same"
    print(f"\n{rounds} interleaved rounds; greedy (top_k=1); one sequence; twin's tokens {same} as tinyattn's "
          f"at block 256; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    if "--generation-child" in sys.argv:
        sys.path.append(os.path.join(HERE, ".."))  # after PYTHONPATH, as _twin_steps.main does
        generation(int(sys.argv[sys.argv.index("--rounds") + 1]))
        sys.exit()
    twin_steps.main(__file__, __doc__, engines)
    if "--child" not in sys.argv:
        rounds = sys.argv[sys.argv.index("--rounds") + 1] if "--rounds" in sys.argv else "5"
        print()
        child = subprocess.run([sys.executable, os.path.abspath(__file__), "--generation-child", "--rounds", rounds],
                               env={**os.environ, **ONE_THREAD}, capture_output=True, text=True, check=True)
        print(child.stdout, end="")
