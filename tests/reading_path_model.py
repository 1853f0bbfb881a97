"""Two training steps of a small attention model, traced: which lines of tinyattn run.

Run as a script with the fast path off (TINYATTN_BACKEND=numpy TINYATTN_FUSED=0, read on import);
prints {file: [line numbers that ran]} as JSON, counting each line an executed function reached
and each such function's `def` line. Only the steps are traced (forward, backward, opt.step), not
building the model: this is what a reader follows through one step of training.
tests/test_reading_path.py reads it: the reading path, measured rather than declared. The model
is the kind a learner writes: Embedding, GRU, MultiheadAttention with a causal mask, a residual,
LayerNorm, Linear, cross-entropy, Adam.
"""
import json
import os
import sys

import numpy as np

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F

PACKAGE = os.path.dirname(ta.__file__)


class SmallAttentionModel(nn.Module):
    def __init__(self, vocab=20, d=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.gru = nn.GRU(d, d, batch_first=True)
        self.attn = nn.MultiheadAttention(d, 2, batch_first=True)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, tokens):
        h, _ = self.gru(self.embed(tokens))
        T = tokens.shape[1]
        future = ta.triu(ta.ones(T, T, dtype=ta.bool), diagonal=1)  # True = may NOT attend (PyTorch's)
        a, _ = self.attn(h, h, h, attn_mask=future)
        return self.head(self.norm(h + a))


def main():
    ran = {}

    def tracer(frame, event, arg):  # called for each new frame: trace its lines if it is tinyattn's
        if not frame.f_code.co_filename.startswith(PACKAGE):
            return None
        lines = ran.setdefault(os.path.relpath(frame.f_code.co_filename, os.path.dirname(PACKAGE)), set())
        lines.add(frame.f_code.co_firstlineno)  # the def line (or its decorator's)

        def line_tracer(frame, event, arg):
            if event == "line":
                lines.add(frame.f_lineno)
            return line_tracer
        return line_tracer

    ta.manual_seed(0)
    model = SmallAttentionModel()
    opt = ta.optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(0)
    sys.settrace(tracer)
    for _ in range(2):
        tokens = rng.integers(0, 20, (4, 7))
        loss = F.cross_entropy(model(tokens[:, :-1]).transpose(1, 2), tokens[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
    sys.settrace(None)
    print(json.dumps({name: sorted(lines) for name, lines in sorted(ran.items())}))


if __name__ == "__main__":
    main()
