"""The translation model's whole training step, tinyattn against an identical PyTorch twin.

    python benchmarks/bench_seq2seq.py            # about a minute on 2 cores
    python benchmarks/bench_seq2seq.py --rounds 7 --steps 20

The model is demos/translate.py's: tinyattn.models.Seq2Seq (embed 32, hidden 64, bidirectional
GRU encoder, GRUCell decoder with Bahdanau's additive attention), batch 64 of
ToyTranslation(max_phrases=4). The twin is written with torch.nn (nn.GRU over packed
sequences, nn.GRUCell, the same additive score), gets the same weights, and must give the same
first-step loss. A step is forward, backward, clip_grad_norm_(1.0) and Adam(lr 3e-3).

The timing (a process per thread count, blocks of steps that alternate) is _twin_steps.py's.
Printed: the median step time of each engine over all its steps, the range of its block
medians, and the ratio tinyattn / PyTorch.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _twin_steps as twin_steps  # noqa: E402
from _twin_steps import compare_engines  # noqa: E402

B, EMBED, HIDDEN = 64, 32, 64


def tinyattn_setup(batch=B, max_phrases=4, seed=0):
    """(model, optimizer, batches, step function) for the tinyattn model."""
    import tinyattn as ta

    ta.ops.keep_freed_memory()  # as ta.train.fit does when training starts
    from tinyattn.data import TOKEN_IDS, ToyTranslation
    from tinyattn.models import Seq2Seq

    ta.manual_seed(seed)
    data = ToyTranslation(max_phrases=max_phrases, seed=seed)
    model = Seq2Seq(len(data.source_vocab), len(data.target_vocab), **TOKEN_IDS, embed_dim=EMBED, hidden_size=HIDDEN)
    opt = ta.optim.Adam(model.parameters(), lr=3e-3)
    batches = [data.batch(batch) for _ in range(8)]

    def step(source, lengths, target):
        loss = model.loss(source, lengths, target)
        opt.zero_grad()
        loss.backward()
        ta.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()

    return model, batches, step


def torch_twin(model):
    """A torch.nn module computing what `model` (a tinyattn Seq2Seq) computes, with its weights."""
    import torch
    import torch.nn.functional as F
    from torch import nn
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    encoder, decoder = model.encoder, model.decoder
    pad_id = model.pad_id

    class Twin(nn.Module):
        def __init__(self):
            super().__init__()
            src_vocab, embed = encoder.embedding.weight.shape
            tgt_vocab = decoder.embedding.weight.shape[0]
            hidden = encoder.rnn.hidden_size
            self.src_embedding = nn.Embedding(src_vocab, embed, padding_idx=pad_id)
            self.rnn = nn.GRU(embed, hidden, batch_first=True, bidirectional=True)
            self.bridge = nn.Linear(2 * hidden, hidden)
            self.tgt_embedding = nn.Embedding(tgt_vocab, embed, padding_idx=pad_id)
            self.W = nn.Linear(hidden, hidden, bias=False)
            self.U = nn.Linear(2 * hidden, hidden, bias=False)
            self.v = nn.Linear(hidden, 1, bias=False)
            self.cell = nn.GRUCell(embed + 2 * hidden, hidden)
            self.out = nn.Linear(hidden + 2 * hidden + embed, tgt_vocab)

        def loss(self, source, lengths, target):
            S = source.shape[1]
            packed = pack_padded_sequence(self.src_embedding(source), lengths, batch_first=True, enforce_sorted=False)
            states, h_n = self.rnn(packed)
            states, _ = pad_packed_sequence(states, batch_first=True, total_length=S)
            state = torch.tanh(self.bridge(torch.cat([h_n[0], h_n[1]], dim=-1)))
            keys = self.U(states)                                          # (B, S, h), once per batch
            hidden_mask = torch.arange(S)[None, :] >= lengths[:, None]     # True = padding
            logits = []
            for embedded in self.tgt_embedding(target[:, :-1]).unbind(1):
                scores = self.v(torch.tanh(self.W(state)[:, None, :] + keys)).squeeze(-1)
                weights = scores.masked_fill(hidden_mask, float("-inf")).softmax(-1)
                context = (weights[:, :, None] * states).sum(1)
                state = self.cell(torch.cat([embedded, context], dim=-1), state)
                logits.append(self.out(torch.cat([state, context, embedded], dim=-1)))
            logits = torch.stack(logits, 1)
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target[:, 1:].reshape(-1), ignore_index=pad_id)

    twin = Twin()
    ours = dict(model.named_parameters())
    names = {"src_embedding.weight": "encoder.embedding.weight", "tgt_embedding.weight": "decoder.embedding.weight",
             "bridge.weight": "encoder.bridge.weight", "bridge.bias": "encoder.bridge.bias",
             "W.weight": "decoder.attention.W.weight", "U.weight": "decoder.attention.U.weight",
             "v.weight": "decoder.attention.v.weight", "out.weight": "decoder.out.weight", "out.bias": "decoder.out.bias"}
    for name, _ in twin.named_parameters():
        if name.startswith("rnn."):
            names[name] = "encoder." + name
        elif name.startswith("cell."):
            names[name] = "decoder." + name
    with torch.no_grad():
        for name, p in twin.named_parameters():
            p.copy_(torch.from_numpy(np.array(ours[names[name]].data)))
    return twin


def torch_setup(model, batches):
    """(twin, torch batches, step function) for the PyTorch twin of `model`."""
    import torch

    twin = torch_twin(model)
    opt = torch.optim.Adam(twin.parameters(), lr=3e-3)
    torch_batches = [tuple(torch.from_numpy(a) for a in b) for b in batches]

    def step(source, lengths, target):
        loss = twin.loss(source, lengths, target)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(twin.parameters(), 1.0)
        opt.step()
        return loss.item()

    return twin, torch_batches, step


def engines(batch=B, max_phrases=4):
    """({"tinyattn": (step, batches), "PyTorch": (step, batches)}, first losses), checked to agree."""
    return compare_engines(tinyattn_setup, torch_setup, batch, max_phrases)


def run(rounds=5, steps=15, thread_counts=(1, 2)):
    return twin_steps.run(__file__, rounds, steps, thread_counts)


if __name__ == "__main__":
    twin_steps.main(__file__, __doc__, engines)
