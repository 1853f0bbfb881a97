"""Issue 28 (trust, round 5), the module and optimiser parts: grad-mode decorators across threads,
Sequential(OrderedDict), the gone per-module fused switch, StepLR's step_size, ModuleDict's keys,
Module.to / Module.apply, zero_grad(set_to_none=), and one key/value cache for every positional
option of the translator and the GPT (cached decoding == uncached, float64)."""
import threading
from collections import OrderedDict

import numpy as np
import pytest

import tinyattn as ta
from tinyattn import nn
from tinyattn.data import TOKEN_IDS
from tinyattn.models import TransformerSeq2Seq


# --- item 9: @ta.no_grad / @ta.enable_grad keep no state between calls ----------------------------

@pytest.mark.parametrize("decorator", [ta.no_grad, ta.enable_grad])
def test_grad_mode_decorator_threads_do_not_share_state(decorator):
    """Thread A (grad on) enters the decorated function, then thread B (grad off) does; A leaves
    first. A shared instance popped B's saved state for A: A's grad mode stayed off."""
    a_inside, b_inside, a_left = threading.Event(), threading.Event(), threading.Event()

    @decorator
    def work(then):
        then()

    seen = {}

    def thread_a():
        work(lambda: (a_inside.set(), b_inside.wait(5)))
        seen["a"] = ta.is_grad_enabled()
        a_left.set()

    def thread_b():
        with ta.no_grad():
            work(lambda: (b_inside.set(), a_left.wait(5)))
            seen["b"] = ta.is_grad_enabled()

    a = threading.Thread(target=thread_a)
    a.start()
    a_inside.wait(5)
    b = threading.Thread(target=thread_b)
    b.start()
    a.join(10)
    b.join(10)
    assert seen == {"a": True, "b": False}


def test_grad_mode_decorator_recursion_and_methods_still_work():
    class Model:
        @ta.no_grad
        def predict(self, depth):
            assert not ta.is_grad_enabled()
            return depth if depth == 0 else self.predict(depth - 1) + 1

    assert Model().predict(3) == 3 and ta.is_grad_enabled()


# --- item 10: Sequential(OrderedDict), .fused, StepLR, ModuleDict keys ---------------------------

def test_sequential_from_ordered_dict_builds_the_named_modules():
    torch = pytest.importorskip("torch")
    model = nn.Sequential(OrderedDict([("fc1", nn.Linear(3, 4)), ("act", nn.ReLU()), ("fc2", nn.Linear(4, 2))]))
    ref = torch.nn.Sequential(OrderedDict([("fc1", torch.nn.Linear(3, 4)), ("act", torch.nn.ReLU()),
                                           ("fc2", torch.nn.Linear(4, 2))]))
    assert len(model) == 3 and list(model.state_dict()) == list(ref.state_dict())
    ref.load_state_dict({k: torch.tensor(np.asarray(v)) for k, v in model.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(model(ta.tensor(x)).data, ref(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert model[0] is model.fc1 and model[-1] is model.fc2


def test_setting_module_fused_names_the_switch():
    layer = nn.MultiheadAttention(8, 2)
    with pytest.raises(AttributeError, match=r"ta\.fused"):
        layer.fused = False
    with pytest.raises(AttributeError, match=r"ta\.fused"):
        layer.fused


@pytest.mark.parametrize("step_size", [-1, 0, 1.5])
def test_steplr_refuses_a_step_size_that_is_not_a_positive_integer(step_size):
    opt = ta.optim.SGD([nn.Parameter(np.zeros(2))], lr=0.1)
    with pytest.raises(ValueError, match=r"StepLR: step_size must be a positive integer"):
        ta.optim.StepLR(opt, step_size=step_size)


def test_moduledict_integer_key_is_a_type_error_naming_the_fix():
    d = nn.ModuleDict()
    with pytest.raises(TypeError, match=r"ModuleDict.*string.*'1'"):
        d[1] = nn.ReLU()
    with pytest.raises(KeyError):
        d["a.b"] = nn.ReLU()  # a string that cannot be a name stays a KeyError, as PyTorch


# --- PyTorch habits: Module.to, Module.apply, zero_grad(set_to_none=) ----------------------------

def test_module_to_dtype_and_device():
    model = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4))
    assert model.to(ta.float64) is model and all(p.dtype == np.float64 for p in model.parameters())
    model.to(dtype=np.float32)
    assert all(p.dtype == np.float32 for p in model.parameters())
    assert model.to("cpu") is model and model.to(device="cpu", dtype="float64") is model
    assert all(p.dtype == np.float64 for p in model.parameters())
    model.to(ta.zeros(1, dtype=ta.float32))  # a tensor's dtype, as PyTorch's module.to(tensor)
    assert all(p.dtype == np.float32 for p in model.parameters())
    for device in ("cuda", "cuda:0", "mps"):
        with pytest.raises(RuntimeError, match="runs on the CPU"):  # as x.to(device)
            model.to(device)
    with pytest.raises(TypeError, match=r"Module.to.*float"):
        model.to(ta.int64)


def test_module_apply_visits_children_first_then_self_and_returns_self():
    torch = pytest.importorskip("torch")

    def names(order):
        return lambda m: order.append(type(m).__name__)

    mine, theirs = [], []
    model = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU(), nn.Linear(3, 1)))
    ref = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Linear(3, 1)))
    assert model.apply(names(mine)) is model
    ref.apply(names(theirs))
    assert mine == theirs == ["Linear", "ReLU", "Linear", "Sequential", "Sequential"]

    def init(m):
        if isinstance(m, nn.Linear):
            nn.init.zeros_(m.weight)

    model.apply(init)
    assert all(not np.any(p.data) for name, p in model.named_parameters() if name.endswith("weight"))


def _grads_after(zero_grad_call):
    torch = pytest.importorskip("torch")
    mine, theirs = nn.Linear(2, 1), torch.nn.Linear(2, 1)
    opt_mine, opt_theirs = ta.optim.SGD(mine.parameters(), lr=0.1), torch.optim.SGD(theirs.parameters(), lr=0.1)
    mine(ta.ones(1, 2)).sum().backward()
    theirs(torch.ones(1, 2)).sum().backward()
    zero_grad_call(opt_mine)
    zero_grad_call(opt_theirs)
    return [p.grad for p in mine.parameters()], [p.grad for p in theirs.parameters()]


def test_zero_grad_sets_to_none_by_default_and_zeroes_when_asked():
    mine, theirs = _grads_after(lambda opt: opt.zero_grad())
    assert mine == [None, None] and theirs == [None, None]
    mine, theirs = _grads_after(lambda opt: opt.zero_grad(set_to_none=True))
    assert mine == [None, None] and theirs == [None, None]
    mine, theirs = _grads_after(lambda opt: opt.zero_grad(set_to_none=False))
    for g, t in zip(mine, theirs):
        assert g is not None and not np.any(g) and g.shape == tuple(t.shape)
    model = nn.Linear(2, 1)
    model(ta.ones(1, 2)).sum().backward()
    model.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not np.any(p.grad) for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_a_step_after_zero_grad_skips_the_parameters_without_a_gradient():
    used, unused = nn.Parameter(np.ones(2)), nn.Parameter(np.ones(2))
    for opt in (ta.optim.SGD([used, unused], lr=0.1, momentum=0.9), ta.optim.AdamW([used, unused], lr=0.1)):
        opt.zero_grad()
        (used * 2.0).sum().backward()
        opt.step()
        assert unused.grad is None and np.all(unused.data == 1.0)


# --- item 8: one key/value cache, every positional option cached as it is computed uncached ------

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
