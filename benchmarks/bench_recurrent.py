"""Each recurrent fused node against the composed graph it equals, forward + backward, float32.

    cells       GRUStep, LSTMStep: one step of GRUCell, LSTMCell (B=64, I=96, H=64)
    layers      GRUSequence, LSTMSequence: a T=30 layer, all rows full, and with lengths
                (uniform in 1..30, as a padded batch of sentences)
    decoder     AttentiveGRUDecoder: Seq2Seq's teacher-forced decoder (batch 64, 14 source words,
                18 target steps with lengths, hidden 64) against its step loop of composed nodes

(The Elman RNN's step node, RNNStep, measured 1.10x on the cell and 1.12-1.19x on this layer and
left the package: git keeps it.) The two sides of a row alternate for `--rounds` rounds (a busy moment hits both); the figures
are the medians over the rounds, with PyTorch's cell and layer beside them where installed.
Run: OPENBLAS_NUM_THREADS=1 python benchmarks/bench_recurrent.py [--rounds 5]
"""
import argparse
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import markdown_table, time_us  # noqa: E402

import tinyattn as ta  # noqa: E402
import tinyattn.nn as nn  # noqa: E402
from tinyattn.models import Seq2Seq  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

B, I, H, T = 64, 96, 64, 30
S, TARGET, VOCAB = 14, 18, 26


def _leaf(rng, *shape):
    return ta.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)


def _cell_case(cls, fused):
    ta.manual_seed(0)
    rng = np.random.default_rng(0)
    cell, x, h = cls(I, H), _leaf(rng, B, I), _leaf(rng, B, H)
    state = (h, _leaf(rng, B, H)) if cls is nn.LSTMCell else h

    def run():
        with ta.fused(fused):
            out = cell(x, state)
        (out[0] if isinstance(out, tuple) else out).sum().backward()

    return run


def _layer_case(cls, fused, with_lengths):
    ta.manual_seed(0)
    rng = np.random.default_rng(0)
    layer, xs = cls(I, H, batch_first=True), _leaf(rng, B, T, I)
    lengths = rng.integers(1, T + 1, B) if with_lengths else None

    def run():
        with ta.fused(fused):
            out, _ = layer(xs, lengths=lengths)
        out.sum().backward()

    return run


def _decoder_case(fused):
    ta.manual_seed(0)
    rng = np.random.default_rng(0)
    model = Seq2Seq(VOCAB, VOCAB, pad_id=0, bos_id=1, eos_id=2, embed_dim=32, hidden_size=H)
    decoder = model.decoder
    encoder_states, state = _leaf(rng, B, S, 2 * H), _leaf(rng, B, H)
    mask = nn.padding_mask(rng.integers(1, S + 1, B), S)
    embedded = _leaf(rng, B, TARGET, 32)
    needed = rng.integers(1, TARGET + 1, B)

    def run():
        with ta.fused(fused):
            keys = decoder.keys(encoder_states)
            logits = decoder.teacher_forced_logits(embedded, state, keys, encoder_states, mask, needed)
        logits.sum().backward()

    return run


def _torch_cases():
    torch.manual_seed(0)
    cell, layer = torch.nn.GRUCell(I, H), torch.nn.GRU(I, H, batch_first=True)
    x, h, xs = (torch.randn(*s, requires_grad=True) for s in ((B, I), (B, H), (B, T, I)))
    return {"GRUCell step": lambda: cell(x, h).sum().backward(),
            "GRU layer T=30": lambda: layer(xs)[0].sum().backward()}


CASES = {
    "GRUCell step (GRUStep)": lambda fused: _cell_case(nn.GRUCell, fused),
    "LSTMCell step (LSTMStep)": lambda fused: _cell_case(nn.LSTMCell, fused),
    "GRU layer T=30 (GRUSequence)": lambda fused: _layer_case(nn.GRU, fused, False),
    "GRU layer T=30, lengths": lambda fused: _layer_case(nn.GRU, fused, True),
    "LSTM layer T=30 (LSTMSequence)": lambda fused: _layer_case(nn.LSTM, fused, False),
    "LSTM layer T=30, lengths": lambda fused: _layer_case(nn.LSTM, fused, True),
    "Bahdanau decoder, 18 steps, lengths (AttentiveGRUDecoder)": _decoder_case,
}


def run(rounds=3):
    rows = []
    for name, make in CASES.items():
        fused, composed = make(True), make(False)
        pairs = []
        for i in range(rounds):  # alternate which side goes first
            first, second = (fused, composed) if i % 2 == 0 else (composed, fused)
            a, b = time_us(first, min_time=0.03, repeats=3), time_us(second, min_time=0.03, repeats=3)
            pairs.append((a, b) if i % 2 == 0 else (b, a))
        row = {"case": name, "fused µs": statistics.median(p[0] for p in pairs),
               "composed µs": statistics.median(p[1] for p in pairs),
               "composed / fused": statistics.median(p[1] / p[0] for p in pairs),
               "range": f"{min(p[1] / p[0] for p in pairs):.2f}-{max(p[1] / p[0] for p in pairs):.2f}"}
        rows.append(row)
    if torch is not None:
        torch.set_num_threads(1)
        for name, fn in _torch_cases().items():
            for row in rows:
                if row["case"].startswith(name):
                    row["PyTorch µs"] = time_us(fn)
    print(markdown_table(rows, ["case", "fused µs", "composed µs", "composed / fused", "range", "PyTorch µs"]))
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    run(parser.parse_args().rounds)
