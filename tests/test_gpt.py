"""ta.models.GPT: nanoGPT's model, checked against a PyTorch transcription of it (tests/gpt_twin.py),
and its generate with and without the key/value cache."""
import numpy as np
import pytest

import tinyattn as ta
from tinyattn.models.gpt_generate import KVCache, sample

V, BLOCK = 11, 8
KINDS = [("learned", True), ("rope", True), ("learned", False)]  # (positions, bias)


def tiny(positions="learned", bias=True, dtype=np.float64, seed=0, **sizes):
    ta.manual_seed(seed)
    model = ta.models.GPT(V, BLOCK, **{"n_layer": 2, "n_head": 2, "n_embd": 8, **sizes}, bias=bias,
                          positions=positions)
    return model.double() if dtype == np.float64 else model


def sharp(model, seed=0):
    """Weights ~ N(0, 0.5^2) instead of nanoGPT's 0.02: attention then depends on every position
    and token, so a stale cache entry or a wrong position changes the tokens generated."""
    rng = np.random.default_rng(seed)
    for param in model.parameters():
        param.data[...] = rng.normal(0.0, 0.5, param.shape)
    return model


def ids(shape, seed=0):
    return np.random.default_rng(seed).integers(0, V, shape)


def test_parameter_names_are_nanogpts_and_the_tied_weight_is_one_parameter():
    model = tiny()
    names = [name for name, _ in model.named_parameters()]
    assert names[:3] == ["transformer.wte.weight", "transformer.wpe.weight", "transformer.h.0.ln_1.weight"]
    assert "transformer.h.1.attn.c_attn.weight" in names and "transformer.h.1.mlp.c_proj.bias" in names
    assert "lm_head.weight" not in names  # listed once, under its first name, as torch's parameters()
    assert model.lm_head.weight is model.transformer.wte.weight
    assert sum(p is model.lm_head.weight for p in model.parameters()) == 1
    state = model.state_dict()
    assert list(state)[-1] == "lm_head.weight" and len(state) == len(names) + 1
    assert model.transformer.h[0].attn.c_attn.weight.shape == (24, 8)
    assert model.transformer.h[0].mlp.c_fc.weight.shape == (32, 8)
    assert "transformer.wpe.weight" not in tiny("rope").state_dict()
    assert "transformer.h.0.attn.c_proj.bias" not in tiny(bias=False).state_dict()


def test_init_is_nanogpts():
    model = tiny(dtype=np.float32, n_layer=3, n_embd=64, n_head=4)
    c_proj = np.concatenate([b.mlp.c_proj.weight.data.ravel() for b in model.transformer.h])
    assert abs(c_proj.std() - 0.02 / np.sqrt(6)) < 0.001
    assert abs(model.transformer.h[0].mlp.c_fc.weight.data.std() - 0.02) < 0.001
    assert abs(model.transformer.wpe.weight.data.std() - 0.02) < 0.002
    assert not model.transformer.h[0].attn.c_attn.bias.data.any()


@pytest.mark.parametrize("positions,bias", KINDS)
def test_state_dicts_cross_and_logits_loss_gradients_match_pytorch(positions, bias):
    torch = pytest.importorskip("torch")
    from tests.gpt_twin import twin_of

    model = tiny(positions, bias)
    twin = twin_of(model, torch.float64)  # ours loads there (strict)
    assert list(twin.state_dict()) == list(model.state_dict())
    assert len(list(twin.parameters())) == len(model.parameters())
    idx, targets = ids((3, BLOCK)), ids((3, BLOCK), seed=1)
    targets[0, :3] = -1  # nanoGPT's ignore_index
    logits, loss = model(idx, targets)
    logits_t, loss_t = twin(torch.tensor(idx), torch.tensor(targets))
    np.testing.assert_allclose(logits.data, logits_t.detach().numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(loss.item(), loss_t.item(), rtol=0, atol=1e-10)
    loss.backward()
    loss_t.backward()
    theirs = dict(twin.named_parameters())
    for name, param in model.named_parameters():  # the tied weight: the sum of both uses' gradients
        np.testing.assert_allclose(param.grad, theirs[name].grad.numpy(), rtol=0, atol=1e-10, err_msg=name)
    shorter = ids((2, 5))  # T < block_size
    np.testing.assert_allclose(model(shorter)[0].data, twin(torch.tensor(shorter)).detach().numpy(), atol=1e-10)

    # the twin's weights load into ours as they are
    with torch.no_grad():
        for p in twin.parameters():
            p.add_(0.01 * torch.randn_like(p))
    state = {k: v.numpy() for k, v in twin.state_dict().items()}
    mask = np.tril(np.ones((BLOCK, BLOCK)))[None, None]  # the buffer nanoGPT saves without flash attention
    model.load_state_dict({**state, "transformer.h.0.attn.bias": mask, "transformer.h.1.attn.bias": mask})
    np.testing.assert_allclose(model(idx)[0].data, twin(torch.tensor(idx)).detach().numpy(), rtol=0, atol=1e-10)


def test_float32_logits_match_pytorch():
    torch = pytest.importorskip("torch")
    from tests.gpt_twin import twin_of

    model = tiny("rope", dtype=np.float32)
    idx = ids((2, BLOCK))
    assert model(idx)[0].dtype == np.float32
    np.testing.assert_allclose(model(idx)[0].data, twin_of(model)(torch.tensor(idx)).detach().numpy(), atol=1e-5)


def test_three_adamw_steps_match_pytorch():
    torch = pytest.importorskip("torch")
    from tests.gpt_twin import decay_groups, twin_of

    model = tiny()
    twin = twin_of(model, torch.float64)
    try:  # nanoGPT's groups: matrices and embeddings decay, biases and LayerNorm weights do not
        ours = ta.optim.AdamW(decay_groups(model.named_parameters(), 0.1), lr=1e-2, betas=(0.9, 0.95))
        theirs = torch.optim.AdamW(decay_groups(twin.named_parameters(), 0.1), lr=1e-2, betas=(0.9, 0.95))
    except TypeError:  # this tree's optimisers take a plain list of parameters
        ours = ta.optim.AdamW(model.parameters(), lr=1e-2, betas=(0.9, 0.95), weight_decay=0.1)
        theirs = torch.optim.AdamW(twin.parameters(), lr=1e-2, betas=(0.9, 0.95), weight_decay=0.1)
    for step in range(3):
        idx, targets = ids((4, BLOCK), seed=10 + step), ids((4, BLOCK), seed=20 + step)
        for optimizer, run in ((ours, lambda: model(idx, targets)[1]),
                               (theirs, lambda: twin(torch.tensor(idx), torch.tensor(targets))[1])):
            optimizer.zero_grad()
            run().backward()
            optimizer.step()
    after = twin.state_dict()
    for name, value in model.state_dict().items():
        np.testing.assert_allclose(value, after[name].numpy(), rtol=0, atol=1e-10, err_msg=name)


def test_gradcheck_of_the_loss():
    model = tiny(n_layer=1, n_embd=4, n_head=2)
    idx, targets = ids((2, 4)), ids((2, 4), seed=1)
    assert ta.gradcheck(lambda *params: model(idx, targets)[1], tuple(model.parameters()))
    rope = tiny("rope", n_layer=1, n_embd=4, n_head=2)
    assert ta.gradcheck(lambda *params: rope(idx, targets)[1], tuple(rope.parameters()))


@pytest.mark.parametrize("positions", ["learned", "rope"])
def test_cached_logits_equal_the_full_forward(positions):
    model = sharp(tiny(positions))
    idx = ids((2, BLOCK))
    full = model(idx)[0].data
    cache = KVCache()
    with ta.no_grad():
        first = model(idx[:, :3], cache=cache)[0].data  # a prompt, then one token at a time
        steps = [model(idx[:, t:t + 1], cache=cache)[0].data for t in range(3, BLOCK)]
    np.testing.assert_allclose(np.concatenate([first, *steps], axis=1), full, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="block_size is 8"):
        model(idx[:, :1], cache=cache)


@pytest.mark.parametrize("positions", ["learned", "rope"])
@pytest.mark.parametrize("top_k", [1, None, 3])
def test_generate_with_and_without_the_cache_gives_the_same_tokens(positions, top_k):
    model = sharp(tiny(positions))
    prompt = ids((2, 3))
    runs = [model.generate(prompt, 14, temperature=0.8, top_k=top_k, use_cache=use_cache,
                           rng=np.random.default_rng(5))
            for use_cache in (True, False)]  # 3 + 14 tokens: the context slides past block_size 8
    assert runs[0].shape == (2, 17) and runs[0].dtype == np.int64
    np.testing.assert_array_equal(runs[0], runs[1])
    np.testing.assert_array_equal(runs[0][:, :3], prompt)
    again = model.generate(prompt, 14, temperature=0.8, top_k=top_k, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(again, runs[0])  # one rng seed, one sample


def test_greedy_generate_is_nanogpts_loop_on_the_twin():
    torch = pytest.importorskip("torch")
    from tests.gpt_twin import twin_of

    model = sharp(tiny())
    twin = twin_of(model, torch.float64)
    tokens = torch.tensor(ids((2, 2)))
    with torch.no_grad():
        for _ in range(12):
            logits = twin(tokens[:, -BLOCK:])[:, -1]
            tokens = torch.cat([tokens, logits.argmax(-1, keepdim=True)], dim=1)
    ours = model.generate(ta.tensor(ids((2, 2))), 12, top_k=1)
    assert isinstance(ours, ta.Tensor)  # a Tensor in, a Tensor out
    np.testing.assert_array_equal(ours.data, tokens.numpy())


def test_sample_keeps_to_the_top_k_and_follows_the_softmax():
    logits = np.log(np.array([[0.1, 0.2, 0.3, 0.4]]))
    draws = np.array([sample(logits, 1.0, 2, np.random.default_rng(i))[0] for i in range(2000)])
    assert set(draws) == {2, 3}
    assert abs((draws == 3).mean() - 0.4 / 0.7) < 0.04
    draws = np.array([sample(logits, 1.0, None, np.random.default_rng(i))[0] for i in range(2000)])
    np.testing.assert_allclose(np.bincount(draws, minlength=4) / 2000, [0.1, 0.2, 0.3, 0.4], atol=0.03)
    assert sample(np.array([[0.0, 5.0, 1.0]]), 1.0, 1, None)[0] == 1  # top_k=1: the argmax, no draw


def test_bad_input_names_the_limit():
    model = tiny()
    with pytest.raises(ValueError, match=r"token id 11 .*\[0, 10\]"):
        model(np.array([[1, 11]]))
    with pytest.raises(ValueError, match=r"token id -1 .*\[0, 10\]"):
        model.generate(np.array([[-1, 2]]), 3)
    with pytest.raises(TypeError, match="integer token ids, got float"):
        model(ta.tensor(np.array([[1.0, 2.0]])))
    with pytest.raises(ValueError, match="9 tokens, but block_size is 8"):
        model(ids((1, 9)))
    with pytest.raises(ValueError, match="max_new_tokens must be an integer >= 0"):
        model.generate(ids((1, 2)), -1)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        model.generate(ids((1, 2)), 3, temperature=0.0)
    with pytest.raises(ValueError, match="top_k must be None or an integer >= 1"):
        model.generate(ids((1, 2)), 3, top_k=0)
    with pytest.raises(ValueError, match="n_embd 10 must be a multiple of n_head 4"):
        ta.models.GPT(V, BLOCK, n_embd=10, n_head=4)
    with pytest.raises(ValueError, match="positions must be 'learned' or 'rope'"):
        ta.models.GPT(V, BLOCK, positions="alibi")
    assert model.generate(ids((1, 2)), 0).shape == (1, 2)  # nothing to add is not an error


def test_dropout_acts_while_training_only():
    model = tiny(dropout=0.5)
    idx = ids((2, BLOCK))
    assert not np.allclose(model(idx)[0].data, model(idx)[0].data)
    model.eval()
    np.testing.assert_array_equal(model(idx)[0].data, model(idx)[0].data)


def test_forward_is_nanogpts_pair_so_unpacking_never_splits_the_batch():
    """A bare logits tensor let `logits, loss = model(idx)` take batch row 0 as the logits."""
    model = tiny()
    logits, loss = model(np.array([[1, 2, 3], [4, 5, 6]]))
    assert loss is None and logits.shape == (2, 3, model.vocab_size)


def _graph_names(root):
    """The names of the nodes the graph behind root holds."""
    with ta.autograd.trace() as tape:
        root.backward()
    return {record.name for record in tape}


@pytest.mark.parametrize("positions", ["learned", "rope"])
@pytest.mark.parametrize("cached", [False, True], ids=["whole", "after a cache"])
def test_the_manual_attention_and_the_fused_node_give_the_same_logits_and_gradients(positions, cached):
    """ta.fused(False) runs causal_attention_composed (nanoGPT's manual lines: MaskedFill, Softmax,
    dropout's Mul), the default the one attention node; in training, with dropout drawn alike."""
    model = sharp(tiny(positions, dropout=0.3))
    idx, targets = ids((2, 6)), ids((2, 6), seed=1)
    runs = []
    for flag in (True, False):
        model.zero_grad()
        ta.manual_seed(4)
        with ta.fused(flag):
            cache = None
            if cached:  # the first 2 tokens cached (no gradient), the 4 after them through the graph
                cache = KVCache()
                with ta.no_grad():
                    model(idx[:, :2], cache=cache)
            logits, loss = model(idx[:, 2:] if cached else idx, targets[:, 2:] if cached else targets, cache=cache)
        names = _graph_names(loss)
        runs.append((logits.data, [p.grad for p in model.parameters()], names))
    (logits_on, grads_on, names_on), (logits_off, grads_off, names_off) = runs
    np.testing.assert_allclose(logits_on, logits_off, rtol=0, atol=1e-12)
    for on, off in zip(grads_on, grads_off):
        np.testing.assert_allclose(on, off, rtol=0, atol=1e-12)
    assert "ScaledDotProductAttention" in names_on and not {"MaskedFill", "Softmax"} & names_on
    assert {"MaskedFill", "Softmax"} <= names_off and "ScaledDotProductAttention" not in names_off


def test_the_trunk_is_nanogpts_module_dict():
    for positions, keys in (("learned", ["wte", "wpe", "drop", "h", "ln_f"]), ("rope", ["wte", "drop", "h", "ln_f"])):
        model = tiny(positions)
        assert isinstance(model.transformer, ta.nn.ModuleDict) and list(model.transformer.keys()) == keys
        assert isinstance(model.transformer.h[0].attn.attn_dropout, ta.nn.Dropout)  # nanoGPT's, on the weights


def test_each_check_names_the_values_and_the_rule():
    """The GPT's checks are two in __init__ and two on idx, each naming what it got and what it needs."""
    with pytest.raises(ValueError, match=r"sizes positive integers; got 'learned', 0.0 and .*'block_size': 0"):
        ta.models.GPT(V, 0)
    with pytest.raises(ValueError, match=r"dropout in \[0, 1\).*got 'learned', 1.0"):
        ta.models.GPT(V, BLOCK, dropout=1.0)
    with pytest.raises(ValueError, match="n_embd 12 must be a multiple of n_head 4 times 2, as rope turns"):
        ta.models.GPT(V, BLOCK, n_embd=12, n_head=4, positions="rope")
    with pytest.raises(ValueError, match=r"idx of shape \(3,\); idx must be \(batch, time\).*idx\[None\] adds"):
        tiny()(np.array([1, 2, 3]))
    with pytest.raises(ValueError, match=r"targets must be integers of idx's shape \(1, 3\), got int64 \(3,\)"):
        tiny()(np.array([[1, 2, 3]]), np.array([1, 2, 3]))
