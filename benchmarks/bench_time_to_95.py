"""Training time to 95 % exact translations on the hard pair, tinyattn against PyTorch twins.

    python benchmarks/bench_time_to_95.py                     # Bahdanau and Transformer, both engines
    python benchmarks/bench_time_to_95.py --model bahdanau --max-steps 1500

The models are demos/translate.py's: Seq2Seq with Bahdanau's attention (hidden 64) and
TransformerSeq2Seq (d_model 64, 2 + 2 pre-norm layers). Each twin is written with torch.nn,
starts from the same weights, and reads the same batches (data/reordering.py, batch 64) with
the same optimiser (Adam, Bahdanau lr 3e-3 and gradient clipping at 1, Transformer lr 2e-3).
Every `--every` steps the weights are copied into the tinyattn model and scored on the dev
sentences (2 of each length from 5 to 50 words) by greedy decoding: the clock counts training
steps only, and stops at the first evaluation with >= 95 % exact. One process per engine and
model, one thread each (OPENBLAS_NUM_THREADS=1, torch.set_num_threads(1)).
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def setup(model_kind):
    """(tinyattn model, data splits, learning rate) with fixed seeds."""
    import tinyattn as ta
    from tinyattn.data import TOKEN_IDS, ReorderingSplits
    from tinyattn.models import Seq2Seq, TransformerSeq2Seq

    splits = ReorderingSplits(per_length=1, dev_per_length=2)
    V, W = len(splits.train.source_vocab), len(splits.train.target_vocab)
    ta.manual_seed(0)
    if model_kind == "bahdanau":
        return Seq2Seq(V, W, **TOKEN_IDS, hidden_size=64), splits, 3e-3
    return TransformerSeq2Seq(V, W, **TOKEN_IDS, d_model=64), splits, 2e-3


def dev_exact(model, splits):
    import tinyattn as ta

    source, lengths, _ = splits.train.encode_pairs([(s, t) for s, t, _ in splits.dev])
    with ta.no_grad():
        hyps = model.decode(source, lengths)
    vocab = splits.train.target_vocab
    return float(np.mean([vocab.decode(h.tokens) == t for h, (_, t, _) in zip(hyps, splits.dev)]))


def torch_transformer_twin(model):
    """torch.nn twin of a TransformerSeq2Seq, same parameter names (its state_dict crosses both ways)."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    from tinyattn.nn.attention import sinusoidal_table

    d = model.out.weight.shape[1]
    layers = model.transformer.encoder.layers

    class Twin(nn.Module):
        def __init__(self):
            super().__init__()
            self.source_embedding = nn.Embedding(*model.source_embedding.weight.shape, padding_idx=model.pad_id)
            self.target_embedding = nn.Embedding(*model.target_embedding.weight.shape, padding_idx=model.pad_id)
            self.transformer = nn.Transformer(d, model.transformer.nhead, len(layers),
                                              len(model.transformer.decoder.layers), layers[0].linear1.weight.shape[0],
                                              dropout=0.0, batch_first=True, norm_first=True)
            self.out = nn.Linear(d, model.out.weight.shape[0])
            self.register_buffer("table", torch.tensor(sinusoidal_table(model.positions.max_len, d), dtype=torch.float32),
                                 persistent=False)

        def loss(self, source, lengths, target):
            padding = torch.arange(source.shape[1])[None, :] >= lengths[:, None]
            x = self.source_embedding(source) + self.table[:source.shape[1]]
            y = self.target_embedding(target[:, :-1]) + self.table[:target.shape[1] - 1]
            causal = nn.Transformer.generate_square_subsequent_mask(y.shape[1])
            out = self.transformer(x, y, tgt_mask=causal, src_key_padding_mask=padding,
                                   memory_key_padding_mask=padding)
            logits = self.out(out)
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target[:, 1:].reshape(-1),
                                   ignore_index=model.pad_id)

    twin = Twin()
    twin.load_state_dict({k: torch.tensor(np.array(v)) for k, v in model.state_dict().items()})
    return twin, lambda: {k: v.detach().numpy().astype(np.float32) for k, v in twin.state_dict().items()}


def torch_bahdanau_twin(model):
    """bench_seq2seq.py's twin, and a way to bring its weights back under tinyattn's names."""
    sys.path.insert(0, HERE)
    from bench_seq2seq import torch_twin

    twin = torch_twin(model)
    ours = {name: np.array(p.data) for name, p in model.named_parameters()}
    names = {}  # twin name -> tinyattn name, found by the identical starting weights
    for name, p in twin.named_parameters():
        (match,) = [o for o, value in ours.items() if value.shape == tuple(p.shape) and
                    np.array_equal(value, p.detach().numpy().astype(value.dtype))]
        names[name] = match
    return twin, lambda: {names[k]: p.detach().numpy().astype(np.float32) for k, p in twin.named_parameters()}


def run(engine, model_kind, max_steps, every, batch):
    """Train until dev exact >= 95 % (checked every `every` steps); print one JSON line."""
    model, splits, lr = setup(model_kind)
    data = splits.train
    if engine == "tinyattn":
        import tinyattn as ta

        opt = ta.optim.Adam(model.parameters(), lr=lr)

        def step(batch_arrays):
            loss = model.loss(*batch_arrays)
            opt.zero_grad()
            loss.backward()
            ta.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()

        def weights():
            return None
    else:
        import torch

        torch.set_num_threads(1)
        twin, weights = (torch_bahdanau_twin if model_kind == "bahdanau" else torch_transformer_twin)(model)
        opt = torch.optim.Adam(twin.parameters(), lr=lr)
        first = data.encode_pairs([(s, t) for s, t, _ in splits.dev[::6]])  # the twin must compute what the model does
        with torch.no_grad():
            theirs = twin.loss(*(torch.from_numpy(a) for a in first)).item()
        ours = model.loss(*first).item()
        if abs(ours - theirs) > 1e-4 * max(1.0, abs(theirs)):
            raise AssertionError(f"first losses differ: tinyattn {ours:.6f}, PyTorch {theirs:.6f}")

        def step(batch_arrays):
            loss = twin.loss(*(torch.from_numpy(a) for a in batch_arrays))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(twin.parameters(), 1.0)
            opt.step()

    seconds, exact, curve = 0.0, 0.0, []
    for done in range(1, max_steps + 1):
        arrays = data.batch(batch)
        start = time.perf_counter()
        step(arrays)
        seconds += time.perf_counter() - start
        if done % every == 0:
            loaded = weights()
            if loaded is not None:
                model.load_state_dict(loaded)
            exact = dev_exact(model, splits)
            curve.append((done, round(seconds, 1), exact))
            print(f"  {engine} {model_kind}: step {done}, {seconds:.0f} s training, dev exact {100 * exact:.1f} %",
                  file=sys.stderr)
            if exact >= 0.95:
                break
    print(json.dumps({"engine": engine, "model": model_kind, "reached": exact >= 0.95, "steps": done,
                      "seconds": seconds, "curve": curve}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["bahdanau", "transformer", "both"], default="both")
    parser.add_argument("--max-steps", type=int, default=2000)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--one", nargs=2, metavar=("ENGINE", "MODEL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        return run(*args.one, args.max_steps, args.every, args.batch)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    kinds = ["bahdanau", "transformer"] if args.model == "both" else [args.model]
    rows = []
    for kind in kinds:
        for engine in ("tinyattn", "PyTorch"):
            out = subprocess.run([sys.executable, __file__, "--one", engine, kind, "--max-steps", str(args.max_steps),
                                  "--every", str(args.every), "--batch", str(args.batch)],
                                 env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
            rows.append(json.loads(out.strip().splitlines()[-1]))
    print(f"\n{'model':>12s} {'engine':>9s} {'steps':>6s} {'train s':>8s}  reached 95 %")
    for r in rows:
        print(f"{r['model']:>12s} {r['engine']:>9s} {r['steps']:6d} {r['seconds']:8.1f}  {'yes' if r['reached'] else 'no'}")


if __name__ == "__main__":
    main()
