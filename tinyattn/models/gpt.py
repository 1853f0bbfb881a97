"""GPT: a decoder-only Transformer language model with nanoGPT's architecture and parameter names.

Karpathy's nanoGPT (https://github.com/karpathy/nanoGPT, model.py) is the small GPT-2 a learner
meets next, so the names here are its names and a state_dict crosses both ways:

    transformer.wte            token embedding (V, C), also the output layer lm_head.weight (tied)
    transformer.wpe            position embedding (block_size, C)   (absent with positions="rope")
    transformer.h.{i}          Block: x = x + attn(ln_1(x));  x = x + mlp(ln_2(x))   (pre-norm)
        .attn.c_attn           Linear C -> 3C: q, k, v side by side along the features
        .attn.c_proj           Linear C -> C, the heads' outputs mixed
        .mlp.c_fc, .mlp.c_proj Linear C -> 4C, GELU (erf), Linear 4C -> C
    transformer.ln_f           LayerNorm before the output layer
    lm_head                    Linear C -> V, no bias, its weight the Parameter of transformer.wte

logits[b, t] score the token that follows idx[b, :t+1]; causal self-attention keeps position t
from reading later positions. Its attention reads as nanoGPT's manual path (causal_attention_composed,
below CausalSelfAttention) and runs through the blocks table (ops/blocks.py): those lines under
ta.fused(False), one attention node otherwise. Generation, which owns the key/value cache and
passes it down as an argument, is in gpt_generate.py.
"""
import math

import numpy as np

from ..autograd.tensor import Tensor
from ..nn import functional as F
from ..nn import init
from ..nn.layers import Dropout, Embedding, GELU, LayerNorm, Linear
from ..nn.masks import causal_mask
from ..nn.containers import ModuleDict, ModuleList
from ..nn.module import Module
from ..nn.positions import rotary
from ..ops import blocks
from .gpt_generate import generate

POSITIONS = ("learned", "rope")


def _require(ok, message, error=ValueError):
    """The GPT's checks, one line each: `error(message)` where ok is False (nanoGPT asserts instead)."""
    if not ok:
        raise error(message)


class CausalSelfAttention(Module):
    """Multi-head self-attention where each position reads itself and the positions before it.

    q, k, v = split(x W_attn^T + b_attn) into n_head heads of hs = C / n_head features; with rope, q
    and k are turned by their positions (nn.positions.rotary); y = softmax(q k^T / sqrt(hs) + causal) v
    (block `causal_attention`), heads side by side again, then c_proj.
    """

    def __init__(self, n_embd, n_head, dropout, bias, rope):
        super().__init__()
        self.c_attn = Linear(n_embd, 3 * n_embd, bias=bias)
        self.c_proj = Linear(n_embd, n_embd, bias=bias)
        self.attn_dropout = Dropout(dropout)
        self.resid_dropout = Dropout(dropout)
        self.n_head, self.n_embd, self.rope = n_head, n_embd, rope

    def forward(self, x, cache=None):
        """x (B, T, C) -> (B, T, C). cache: an nn.KVCache (gpt_generate.py owns it), whose cached
        positions x's T tokens follow: their keys and values join it and their queries read all of it."""
        B, T, C = x.size()  # batch size, sequence length, embedding dimensionality (n_embd)
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        if self.rope:  # turned by their positions, which count on from the cached ones
            start = 0 if cache is None else cache.length
            q, k = rotary(q, np.arange(start, start + T)), rotary(k, np.arange(start, start + T))
        if cache is not None:
            k, v = cache.extend(self, k, v)  # (B, nh, S, hs): the S cached and new positions
        y = blocks.causal_attention(q, k, v, self.attn_dropout)  # (B, nh, T, hs): the function below, or a fused node
        y = y.transpose(1, 2).reshape(B, T, C)  # re-assemble all head outputs side by side
        return self.resid_dropout(self.c_proj(y))  # output projection


def causal_attention_composed(q, k, v, attn_dropout):
    """Block `causal_attention`'s reference (ops/blocks.py): nanoGPT's manual attention, a line a step.

    q (B, nh, T, hs) are the last T of the S positions whose keys and values k, v (B, nh, S, hs)
    are given (S = T without a cache): query i, at position S - T + i, reads keys 0 .. S - T + i.
    """
    T, S = q.size(-2), k.size(-2)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))  # (B, nh, T, S): each query against each key
    att = att.masked_fill(~causal_mask(T, S - T), float("-inf"))  # (B, nh, T, S): no query reads a later key
    att = F.softmax(att, dim=-1)  # (B, nh, T, S): each row sums to 1
    att = attn_dropout(att)  # (B, nh, T, S)
    return att @ v  # (B, nh, T, S) x (B, nh, S, hs) -> (B, nh, T, hs)


blocks.register_reference("causal_attention", causal_attention_composed)


class MLP(Module):
    """The position-wise feed-forward net: c_proj(GELU(c_fc(x))), 4C hidden units, then dropout."""

    def __init__(self, n_embd, dropout, bias):
        super().__init__()
        self.c_fc = Linear(n_embd, 4 * n_embd, bias=bias)
        self.gelu = GELU()
        self.c_proj = Linear(4 * n_embd, n_embd, bias=bias)
        self.dropout = Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(Module):
    """One pre-norm Transformer block: x + attn(ln_1(x)), then + mlp(ln_2(.))."""

    def __init__(self, n_embd, n_head, dropout, bias, rope):
        super().__init__()
        self.ln_1 = LayerNorm(n_embd, bias=bias)
        self.attn = CausalSelfAttention(n_embd, n_head, dropout, bias, rope)
        self.ln_2 = LayerNorm(n_embd, bias=bias)
        self.mlp = MLP(n_embd, dropout, bias)

    def forward(self, x, cache=None):
        x = x + self.attn(self.ln_1(x), cache)
        return x + self.mlp(self.ln_2(x))


class GPT(Module):
    """A GPT language model: idx (B, T) token ids -> logits (B, T, vocab_size) for every position.

    positions="learned" adds transformer.wpe (nanoGPT's); "rope" turns q and k in every head by
    their positions instead (nn.positions.rotary, the paper's interleaved pairs) and has no wpe.
    Init as nanoGPT: N(0, 0.02) for Linear and Embedding weights, zero biases, and the residual
    projections (c_proj) N(0, 0.02 / sqrt(2 n_layer)), so the residual stream's variance does not
    grow with depth.
    """

    def __init__(self, vocab_size, block_size, n_layer=2, n_head=4, n_embd=64, dropout=0.0, bias=True,
                 positions="learned"):
        super().__init__()
        sizes = dict(vocab_size=vocab_size, block_size=block_size, n_layer=n_layer, n_head=n_head, n_embd=n_embd)
        whole = all(isinstance(n, (int, np.integer)) and n > 0 for n in sizes.values())
        _require(positions in POSITIONS and 0 <= dropout < 1 and whole, "GPT: positions must be 'learned' or 'rope', "
                 f"dropout in [0, 1) and the sizes positive integers; got {positions!r}, {dropout!r} and {sizes}")
        rope = positions == "rope"
        why = " times 2, as rope turns each head's features in pairs" if rope else ", as the heads split it"
        _require(n_embd % (2 * n_head if rope else n_head) == 0,
                 f"GPT: n_embd {n_embd} must be a multiple of n_head {n_head}{why}")
        self.vocab_size, self.block_size, self.n_layer = vocab_size, block_size, n_layer
        self.n_head, self.n_embd, self.positions = n_head, n_embd, positions
        wpe = {} if rope else dict(wpe=Embedding(block_size, n_embd))  # rope turns q and k instead
        self.transformer = ModuleDict(dict(
            wte=Embedding(vocab_size, n_embd),
            **wpe,
            drop=Dropout(dropout),
            h=ModuleList(Block(n_embd, n_head, dropout, bias, rope) for _ in range(n_layer)),
            ln_f=LayerNorm(n_embd, bias=bias),
        ))
        self.lm_head = Linear(n_embd, vocab_size, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # one Parameter: both uses' gradients add up in it
        self._init_weights()

    def _init_weights(self):
        for module in self.modules():
            if isinstance(module, (Linear, Embedding)):
                init.normal_(module.weight, 0.0, 0.02)
            if isinstance(module, Linear) and module.bias is not None:
                init.zeros_(module.bias)
        for name, param in self.named_parameters():
            if name.endswith("c_proj.weight"):
                init.normal_(param, 0.0, 0.02 / math.sqrt(2 * self.n_layer))

    def forward(self, idx, targets=None, cache=None):
        """idx (B, T) ints, T <= block_size -> (logits (B, T, vocab_size), loss), as nanoGPT's.

        loss is None without targets; with targets (B, T) ints it is the mean cross-entropy over
        the positions whose target is not -1 (nanoGPT's ignore_index). Unlike nanoGPT, logits
        cover every position even without targets (nanoGPT keeps only the last: logits[:, [-1]]). cache: an nn.KVCache,
        whose cached tokens idx follows (gpt_generate.py); positions then count on from the cached ones.
        """
        idx = self.check_ids(idx, "forward")
        B, T = idx.shape
        start = 0 if cache is None else cache.length
        _require(start + T <= self.block_size, f"GPT.forward: {start + T} tokens, but block_size is {self.block_size}; "
                 f"pass at most the last {self.block_size} (idx[:, -block_size:])")
        x = self.transformer.wte(idx)
        if self.positions == "learned":
            x = x + self.transformer.wpe(np.arange(start, start + T))
        x = self.transformer.drop(x)
        for block in self.transformer.h:
            x = block(x, cache)
        if cache is not None:
            cache.advance(T)
        logits = self.lm_head(self.transformer.ln_f(x))
        if targets is None:
            return logits, None  # nanoGPT's pair, so `logits, loss = model(idx)` never splits the batch
        targets = np.asarray(getattr(targets, "data", targets))
        _require(targets.shape == (B, T) and targets.dtype.kind in "iu",
                 f"GPT.forward: targets must be integers of idx's shape {(B, T)}, got {targets.dtype} {targets.shape}")
        loss = F.cross_entropy(logits.reshape(B * T, self.vocab_size), targets.reshape(-1), ignore_index=-1)
        return logits, loss

    def load_state_dict(self, state_dict, strict=True):
        """Module.load_state_dict, after dropping the causal masks `transformer.h.{i}.attn.bias`
        (1, 1, block_size, block_size) that nanoGPT saves as buffers when its PyTorch has no
        flash attention: constants, not weights (nanoGPT's from_pretrained skips them too)."""
        masks = {f"transformer.h.{i}.attn.bias" for i in range(self.n_layer)}
        return super().load_state_dict({k: v for k, v in state_dict.items() if k not in masks}, strict)

    def check_ids(self, idx, op):
        """idx as an int64 (B, T) array, or a TypeError / ValueError naming what is wrong."""
        idx = np.asarray(idx.data if isinstance(idx, Tensor) else idx)
        _require(idx.dtype.kind in "iu", f"GPT.{op}: idx must hold integer token ids, got {idx.dtype} (convert with "
                 ".long())", TypeError)
        outside = idx[(idx < 0) | (idx >= self.vocab_size)]
        found = f" holds token id {outside.flat[0]} (outside the vocabulary)" if outside.size else ""
        _require(idx.ndim == 2 and not outside.size, f"GPT.{op}: idx of shape {idx.shape}{found}; idx must be "
                 f"(batch, time) token ids in [0, {self.vocab_size - 1}] (vocab_size {self.vocab_size}; idx[None] adds "
                 "a batch axis)")
        return idx.astype(np.int64, copy=False)

    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, rng=None):
        """idx (B, T0) -> (B, T0 + max_new_tokens) int64, each new token sampled from the model
        given the last block_size tokens (gpt_generate.generate says how). A Tensor in gives a
        Tensor out, an array an array."""
        return generate(self, idx, max_new_tokens, temperature, top_k, use_cache, rng)

    def extra_repr(self):
        return (f"vocab_size={self.vocab_size}, block_size={self.block_size}, n_layer={self.n_layer}, "
                f"n_head={self.n_head}, n_embd={self.n_embd}, positions={self.positions!r}")
