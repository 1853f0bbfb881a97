"""Module and optimiser habits from PyTorch: Sequential(OrderedDict), no per-module fused switch,
StepLR's step_size, ModuleDict's keys, Module.to and Module.apply, and zero_grad(set_to_none=)
with the step that follows it; compared with PyTorch where it is installed."""
from collections import OrderedDict

import numpy as np
import pytest

import tinyattn as ta
from tinyattn import nn


# --- Sequential(OrderedDict), .fused, StepLR, ModuleDict keys --------------------------------------

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


# --- Module.to, Module.apply, zero_grad(set_to_none=) ---------------------------------------------

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
