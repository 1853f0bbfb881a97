"""Sampling text from a GPT, with or without a key/value cache.

Without the cache every new token runs the whole model over the context (the last block_size
tokens), as nanoGPT's generate: O(T^2) attention work per token. With it, each layer keeps the
keys and values of the tokens it has seen; a new token computes only its own q, k, v and attends
to the cached keys: O(T) per token.

Once the sequence passes block_size the context slides: its first token drops out, which changes
every later hidden state (they all attended to it) and, with learned positions, every token's
position. Nothing cached stays right, so past block_size each step rebuilds the cache from the
last block_size tokens (a full forward, as without the cache). That is what keeps the two paths
giving the same tokens in every case, learned positions or rope.
"""
import numpy as np

from ..autograd.creation import generator
from ..autograd.creation import multinomial
from ..autograd.function import no_grad
from ..autograd.tensor import Tensor
from ..nn.kv_cache import KVCache  # the one cache, the Transformer translator's too


def check_sampling(max_new_tokens, temperature, top_k, rng):
    if not isinstance(max_new_tokens, (int, np.integer)) or max_new_tokens < 0:
        raise ValueError(f"GPT.generate: max_new_tokens must be an integer >= 0, got {max_new_tokens!r}")
    if not temperature > 0:
        raise ValueError(f"GPT.generate: temperature must be > 0 (it divides the logits), got {temperature!r}; "
                         "for greedy decoding pass top_k=1")
    if top_k is not None and (not isinstance(top_k, (int, np.integer)) or top_k < 1):
        raise ValueError(f"GPT.generate: top_k must be None or an integer >= 1, got {top_k!r}")
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise TypeError(f"GPT.generate: rng must be a numpy Generator (np.random.default_rng(seed)), got {type(rng).__name__}")


def sample(logits, temperature, top_k, rng):
    """One token id per row of logits (B, V): nanoGPT's rule on a numpy Generator.

    logits / temperature, everything below the top_k-th largest set to -inf, then one draw in
    proportion to exp(logits) (ta.multinomial's inverse CDF). top_k=1 is the argmax and draws nothing.
    """
    if top_k == 1:
        return logits.argmax(axis=-1)
    logits = logits.astype(np.float64) / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = np.partition(logits, -top_k, axis=-1)[:, -top_k, None]
        logits = np.where(logits < kth, -np.inf, logits)
    weights = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return multinomial(weights, 1, replacement=True, generator=rng).data[:, 0]


@no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, rng=None):
    """GPT.generate: idx (B, T0) -> (B, T0 + max_new_tokens) int64. See the module docstring.

    rng: a numpy Generator, so a run can be repeated (None: tinyattn's generator, which
    ta.manual_seed sets). The cached and uncached paths compute the same numbers in a different
    order, so their logits agree to rounding and their tokens are the same.
    """
    as_tensor = isinstance(idx, Tensor)
    idx = model.check_ids(idx, "generate")
    check_sampling(max_new_tokens, temperature, top_k, rng)
    if idx.shape[1] == 0:
        raise ValueError("GPT.generate: idx has no tokens; give a prompt of at least one token per row")
    rng = generator() if rng is None else rng
    tokens, cache = idx, None
    for _ in range(max_new_tokens):
        if not use_cache:
            logits, _ = model(tokens[:, -model.block_size:])
        elif cache is not None and tokens.shape[1] <= model.block_size:
            logits, _ = model(tokens[:, -1:], cache=cache)  # the one new token, after the cached ones
        else:  # the first step, or the context slid: rebuild from the last block_size tokens
            cache = KVCache()
            logits, _ = model(tokens[:, -model.block_size:], cache=cache)
        new = sample(logits.data[:, -1], temperature, top_k, rng)
        tokens = np.concatenate([tokens, new[:, None].astype(np.int64)], axis=1)
    return Tensor(tokens) if as_tensor else tokens
