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
from reading later positions. Generation (and its key/value cache) is in gpt_generate.py.
"""
import math

import numpy as np

from ..autograd.tensor import Tensor
from ..nn import functional as F
from ..nn import init
from ..nn.layers import Dropout, Embedding, GELU, LayerNorm, Linear
from ..nn.masks import causal_mask
from ..nn.containers import ModuleList
from ..nn.module import Module
from ..nn.positions import rotary
from .gpt_generate import generate

POSITIONS = ("learned", "rope")


class CausalSelfAttention(Module):
    """Multi-head self-attention where each position reads itself and the positions before it.

    q, k, v = split(x W_attn^T + b_attn) into n_head heads of C / n_head features; with rope, q
    and k are turned by their positions (nn.positions.rotary); out = softmax(q k^T / sqrt(d) +
    causal) v, heads side by side again, then c_proj.
    """

    def __init__(self, n_embd, n_head, dropout, bias, rope):
        super().__init__()
        self.c_attn = Linear(n_embd, 3 * n_embd, bias=bias)
        self.c_proj = Linear(n_embd, n_embd, bias=bias)
        self.resid_dropout = Dropout(dropout)
        self.n_head, self.n_embd, self.dropout, self.rope = n_head, n_embd, dropout, rope

    def forward(self, x, cache=None):
        """x (B, T, C) -> (B, T, C). With an nn.KVCache (nn/kv_cache.py), x holds the tokens after the
        cached ones: their keys and values join the cache and their queries read all of it."""
        B, T, C = x.shape
        H, d = self.n_head, C // self.n_head
        start = 0 if cache is None else cache.length
        qkv = self.c_attn(x)
        q, k, v = (part.reshape(B, T, H, d).transpose(1, 2) for part in qkv.split(C, -1))  # (B, H, T, d) each
        if self.rope:
            positions = np.arange(start, start + T)
            q, k = rotary(q, positions), rotary(k, positions)
        dropout_p = self.dropout if self.training else 0.0
        if cache is not None:  # the new tokens' keys and values join the cached ones
            k, v = cache.extend(self, k, v)
        # query at position start + i reads the keys at positions 0 .. start + i (start 0 uncached)
        y, _ = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_mask(T, start), dropout_p=dropout_p)
        return self.resid_dropout(self.c_proj(y.transpose(1, 2).reshape(B, T, C)))


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


class Trunk(Module):
    """nanoGPT's `transformer` ModuleDict: wte, wpe, drop, h, ln_f (a container; GPT runs them)."""


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
        if positions not in POSITIONS:
            raise ValueError(f"GPT: positions must be 'learned' or 'rope', got {positions!r}")
        for name, value in (("vocab_size", vocab_size), ("block_size", block_size), ("n_layer", n_layer),
                            ("n_head", n_head), ("n_embd", n_embd)):
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"GPT: {name} must be a positive integer, got {value!r}")
        if n_embd % n_head:
            raise ValueError(f"GPT: n_embd {n_embd} must be a multiple of n_head {n_head} (the heads split it)")
        if positions == "rope" and (n_embd // n_head) % 2:
            raise ValueError(f"GPT: rope turns features in pairs, so n_embd / n_head = {n_embd // n_head} must be even")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"GPT: dropout must be in [0, 1), got {dropout}")
        self.vocab_size, self.block_size, self.n_layer = vocab_size, block_size, n_layer
        self.n_head, self.n_embd, self.positions = n_head, n_embd, positions
        rope = positions == "rope"
        self.transformer = Trunk()
        self.transformer.wte = Embedding(vocab_size, n_embd)
        if not rope:
            self.transformer.wpe = Embedding(block_size, n_embd)
        self.transformer.drop = Dropout(dropout)
        self.transformer.h = ModuleList(Block(n_embd, n_head, dropout, bias, rope) for _ in range(n_layer))
        self.transformer.ln_f = LayerNorm(n_embd, bias=bias)
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
        if start + T > self.block_size:
            raise ValueError(f"GPT.forward: {start + T} tokens, but block_size is {self.block_size}; "
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
        if targets.shape != (B, T) or targets.dtype.kind not in "iu":
            raise ValueError(f"GPT.forward: targets must be integers of idx's shape {(B, T)}, "
                             f"got {targets.dtype} {targets.shape}")
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
        if isinstance(idx, Tensor):
            idx = idx.data
        idx = np.asarray(idx)
        if idx.dtype.kind not in "iu":
            raise TypeError(f"GPT.{op}: idx must hold integer token ids, got {idx.dtype} "
                            "(convert with .long())")
        if idx.ndim != 2:
            raise ValueError(f"GPT.{op}: idx must be (batch, time), got shape {idx.shape}; add a batch axis with idx[None]")
        if idx.size and (idx.min() < 0 or idx.max() >= self.vocab_size):
            bad = idx[(idx < 0) | (idx >= self.vocab_size)].flat[0]
            raise ValueError(f"GPT.{op}: token id {bad} is outside the vocabulary; ids must lie in "
                             f"[0, {self.vocab_size - 1}] (vocab_size = {self.vocab_size})")
        return idx.astype(np.int64, copy=False)

    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, rng=None):
        """idx (B, T0) -> (B, T0 + max_new_tokens) int64, each new token sampled from the model
        given the last block_size tokens (gpt_generate.generate says how). A Tensor in gives a
        Tensor out, an array an array."""
        return generate(self, idx, max_new_tokens, temperature, top_k, use_cache, rng)

    def extra_repr(self):
        return (f"vocab_size={self.vocab_size}, block_size={self.block_size}, n_layer={self.n_layer}, "
                f"n_head={self.n_head}, n_embd={self.n_embd}, positions={self.positions!r}")
