"""The key/value cache: one cache for every positional option (rope, ALiBi, sinusoidal, learned,
none; in self- and cross-attention), so cached decoding gives uncached decoding's tokens, scores
and attention in float64 for the translator, the GPT and MultiheadAttention itself, and a cached
step keeps its new position on the graph."""
import numpy as np
import pytest

import tinyattn as ta
from tinyattn import nn
from tinyattn.data import TOKEN_IDS
from tinyattn.models import TransformerSeq2Seq


TRANSLATOR_POSITIONS = [  # (the translator's positions=, or a Transformer assigned into it: self, cross; added)
    ("rope", None), ("rope_self", None), ("sinusoidal", None),
    ("assigned", ("alibi", None, None)), ("assigned", ("alibi", "alibi", None)), ("assigned", ("rope", "alibi", None)),
    ("assigned", ("alibi", "rope", None)), ("assigned", (None, None, "learned")), ("assigned", (None, None, None)),
]


def _translator(positions, assigned):
    ta.manual_seed(5)
    model = TransformerSeq2Seq(30, 31, **TOKEN_IDS, d_model=16, nhead=4, dim_feedforward=32,
                               positions="sinusoidal" if positions == "assigned" else positions)
    if positions == "assigned":  # what a learner does to try ALiBi: put their own nn.Transformer in
        self_positions, cross_positions, added = assigned
        model.transformer = nn.Transformer(16, 4, 2, 2, 32, dropout=0.0, batch_first=True, norm_first=True,
                                           positions=self_positions, cross_positions=cross_positions)
        nn.keep_attention_weights(model.transformer.decoder)
        model.positions = None if added is None else nn.PositionalEncoding(16, 64, learned=True)
    model.double()
    for p in model.parameters():  # larger weights: decisions that differ if a cached step is wrong
        p.data = p.data * 2.0
    return model.eval()


@pytest.mark.parametrize("positions,assigned", TRANSLATOR_POSITIONS)
def test_translator_cached_decoding_equals_uncached_for_every_positional_option(positions, assigned):
    model = _translator(positions, assigned)
    rng = np.random.default_rng(1)
    source, lengths = rng.integers(3, 30, (4, 9)), np.array([9, 6, 3, 8])
    for beam in (1, 3):
        runs = []
        for use_cache in (True, False):
            model.use_cache = use_cache
            runs.append(model.decode(source, lengths, beam_size=beam, max_len=12))
        cached, plain = runs
        assert [h.tokens for h in cached] == [h.tokens for h in plain]
        np.testing.assert_allclose([h.score for h in cached], [h.score for h in plain], rtol=0, atol=1e-9)
        for a, b in zip(cached, plain):
            np.testing.assert_allclose(a.attention, b.attention, rtol=0, atol=1e-9)
    assert len({tuple(h.tokens) for h in plain}) > 1  # varied outputs: a wrong step would show


@pytest.mark.parametrize("positions", ["learned", "rope"])
def test_gpt_cached_greedy_tokens_and_log_probs_equal_uncached(positions):
    ta.manual_seed(2)
    model = ta.models.GPT(13, 16, n_layer=2, n_head=2, n_embd=16, positions=positions).double().eval()
    for p in model.parameters():
        p.data = p.data * 4.0
    prompt = np.array([[1, 5, 2], [7, 7, 0]])
    cached, plain = (model.generate(prompt, 10, top_k=1, use_cache=use_cache) for use_cache in (True, False))
    np.testing.assert_array_equal(cached, plain)
    cache, steps = nn.KVCache(), []
    with ta.no_grad():
        steps.append(model(cached[:, :3], cache=cache)[0])
        steps += [model(cached[:, t:t + 1], cache=cache)[0] for t in range(3, cached.shape[1])]
        full = model(cached)[0].log_softmax(-1).data
    np.testing.assert_allclose(ta.cat(steps, 1).log_softmax(-1).data, full, rtol=0, atol=1e-9)


def test_multihead_attention_with_a_cache_equals_it_without_for_every_position_scheme():
    rng = np.random.default_rng(3)
    for positions in (None, "alibi", "rope"):
        mha = nn.MultiheadAttention(8, 2, batch_first=True, positions=positions).double()
        x, memory = ta.tensor(rng.standard_normal((2, 5, 8))), ta.tensor(rng.standard_normal((2, 4, 8)))
        full_self = mha(x, x, x, is_causal=True)[0].data
        full_cross = mha(x, memory, memory)[0].data
        caches, rows = (nn.KVCache(), nn.KVCache()), ([], [])
        for start, end in ((0, 2), (2, 3), (3, 5)):  # a prompt of 2, then one position, then two
            step = x[:, start:end]
            rows[0].append(mha(step, step, step, is_causal=True, cache=caches[0])[0].data)
            rows[1].append(mha(step, memory, memory, cache=caches[1])[0].data)
            for cache in caches:
                cache.advance(end - start)
        np.testing.assert_allclose(np.concatenate(rows[0], 1), full_self, rtol=0, atol=1e-12)
        np.testing.assert_allclose(np.concatenate(rows[1], 1), full_cross, rtol=0, atol=1e-12)


def test_a_cached_step_keeps_the_new_position_on_the_graph():
    """The last position's output depends on its own input through its query, key and value: the
    cached step's gradient there is the full forward's (the earlier keys are constants to it)."""
    rng = np.random.default_rng(4)
    for positions in (None, "alibi", "rope"):
        mha = nn.MultiheadAttention(8, 2, batch_first=True, positions=positions).double()
        x, upstream = rng.standard_normal((2, 4, 8)), rng.standard_normal((2, 1, 8))
        full = ta.tensor(x, requires_grad=True)
        (mha(full, full, full, is_causal=True)[0][:, -1:] * ta.tensor(upstream)).sum().backward()
        cache = nn.KVCache()
        with ta.no_grad():
            prompt = ta.tensor(x[:, :3])
            mha(prompt, prompt, prompt, is_causal=True, cache=cache)
        cache.advance(3)
        last = ta.tensor(x[:, 3:], requires_grad=True)
        (mha(last, last, last, is_causal=True, cache=cache)[0] * ta.tensor(upstream)).sum().backward()
        np.testing.assert_allclose(last.grad, full.grad[:, 3:], rtol=0, atol=1e-12)
