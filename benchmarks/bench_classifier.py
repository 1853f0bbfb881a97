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

The timing (a process per thread count, blocks of steps that alternate) is _twin_steps.py's.
Printed: the median step time of each engine over all its steps, the range
of its block medians, and the ratio tinyattn / PyTorch.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _twin_steps as twin_steps  # noqa: E402
from _twin_steps import compare_engines  # noqa: E402

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
    """({"tinyattn": (step, batches), "PyTorch": (step, batches)}, first losses), checked to agree."""
    return compare_engines(tinyattn_setup, torch_setup, batch)


if __name__ == "__main__":
    twin_steps.main(__file__, __doc__, engines)
