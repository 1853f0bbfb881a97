"""Parameter groups, as PyTorch's: per-group hyperparameters, schedules, state_dict, clipping."""
import io

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn

SHAPES = {"wte": (5, 4), "w1": (4, 6), "b1": (6,), "ln": (6,), "w2": (6, 3)}


def _both(torch, seed=0):
    """The same float64 parameters as tinyattn Parameters and torch tensors, by name."""
    rng = np.random.default_rng(seed)
    values = {name: rng.standard_normal(shape) for name, shape in SHAPES.items()}
    return ({name: nn.Parameter(v.copy()) for name, v in values.items()},
            {name: torch.tensor(v.copy(), requires_grad=True) for name, v in values.items()})


def _nanogpt_groups(params):
    """nanoGPT's split: matrices decay, biases and norm gains do not."""
    decay = [p for p in params.values() if p.ndim >= 2]
    no_decay = [p for p in params.values() if p.ndim < 2]
    return [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0, "lr": 0.03}]


def _run(torch, make_ta, make_torch, steps=4, schedule=False):
    ours, theirs = _both(torch)
    opt, topt = make_ta(_nanogpt_groups(ours)), make_torch(_nanogpt_groups(theirs))
    sched = ta.optim.StepLR(opt, step_size=2, gamma=0.5) if schedule else None
    tsched = torch.optim.lr_scheduler.StepLR(topt, step_size=2, gamma=0.5) if schedule else None
    rng = np.random.default_rng(1)
    for _ in range(steps):
        for name in SHAPES:
            g = rng.standard_normal(SHAPES[name])
            ours[name].grad, theirs[name].grad = g.copy(), torch.tensor(g)
        opt.step()
        topt.step()
        if schedule:
            sched.step()
            tsched.step()
            assert [g["lr"] for g in opt.param_groups] == [g["lr"] for g in topt.param_groups]
    for name in SHAPES:
        np.testing.assert_allclose(ours[name].data, theirs[name].detach().numpy(), rtol=1e-15, atol=1e-16)
    return opt, topt


@pytest.mark.parametrize("schedule", [False, True])
def test_adamw_with_nanogpt_groups_matches_pytorch(schedule):
    torch = pytest.importorskip("torch")
    opt, topt = _run(torch, lambda g: ta.optim.AdamW(g, lr=0.01, betas=(0.8, 0.95)),
                     lambda g: torch.optim.AdamW(g, lr=0.01, betas=(0.8, 0.95)), schedule=schedule)
    for ours, theirs in zip(opt.param_groups, topt.param_groups):  # every hyperparameter filled in, as torch's
        assert {k: ours[k] for k in ("lr", "betas", "eps", "weight_decay")} == \
               {k: theirs[k] for k in ("lr", "betas", "eps", "weight_decay")}


@pytest.mark.parametrize("nesterov", [False, True])
def test_sgd_momentum_with_per_group_lr_and_decay_matches_pytorch(nesterov):
    torch = pytest.importorskip("torch")
    _run(torch, lambda g: ta.optim.SGD(g, lr=0.1, momentum=0.9, nesterov=nesterov),
         lambda g: torch.optim.SGD(g, lr=0.1, momentum=0.9, nesterov=nesterov), schedule=True)


def test_adam_l2_groups_with_their_own_betas_and_eps_match_pytorch():
    torch = pytest.importorskip("torch")

    def groups(g):
        g[1]["betas"], g[1]["eps"] = (0.5, 0.9), 1e-3
        return g
    _run(torch, lambda g: ta.optim.Adam(groups(g), lr=0.02), lambda g: torch.optim.Adam(groups(g), lr=0.02))


def test_fit_clips_the_gradients_of_every_group_as_pytorch():
    torch = pytest.importorskip("torch")
    ours, theirs = _both(torch)
    opt = ta.optim.SGD(_nanogpt_groups(ours), lr=0.1, momentum=0.9)
    topt = torch.optim.SGD(_nanogpt_groups(theirs), lr=0.1, momentum=0.9)
    x = np.random.default_rng(2).standard_normal((7, 4))

    def loss(p, lib):
        h = (x_[lib] @ p["w1"] + p["b1"]).tanh() * p["ln"]
        return ((h @ p["w2"]) ** 2).mean() + (p["wte"] ** 2).mean()
    x_ = {ta: ta.tensor(x), torch: torch.tensor(x)}
    ta.train.fit(nn.Module(), opt, lambda step: loss(ours, ta), steps=3, clip_grad_norm=0.05, stream=io.StringIO())
    for _ in range(3):
        topt.zero_grad()
        loss(theirs, torch).backward()
        torch.nn.utils.clip_grad_norm_([p for g in topt.param_groups for p in g["params"]], 0.05)
        topt.step()
    for name in SHAPES:
        np.testing.assert_allclose(ours[name].data, theirs[name].detach().numpy(), rtol=1e-13)


def test_add_param_group_fills_defaults_and_a_parameter_in_two_groups_is_refused():
    a, b, c = (nn.Parameter(np.zeros(2)) for _ in range(3))
    opt = ta.optim.SGD([a], lr=0.1, momentum=0.5)
    opt.add_param_group({"params": b, "lr": 0.01})  # one tensor is a group of one, as PyTorch
    assert opt.param_groups[1] == {"params": [b], "lr": 0.01, "momentum": 0.5, "dampening": 0.0,
                                   "weight_decay": 0.0, "nesterov": False}
    assert opt.params == [a, b] and len(opt.state) == 2
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [c, a]})
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        ta.optim.Adam([{"params": [a, b]}, {"params": [b]}])
    with pytest.raises(ValueError, match=r"lr must be >= 0, got -1 \(parameter group 2\)"):
        opt.add_param_group({"params": [c], "lr": -1})
    assert len(opt.param_groups) == 2  # a refused group leaves the optimiser as it was
    with pytest.raises(ValueError, match="different learning rates"):
        opt.lr


def test_state_dict_has_pytorchs_layout_and_round_trips_through_a_checkpoint(tmp_path):
    def make():
        ta.manual_seed(0)
        params = {name: nn.Parameter(np.random.default_rng(3).standard_normal(s)) for name, s in SHAPES.items()}
        return params, ta.optim.AdamW(_nanogpt_groups(params), lr=0.01)

    def steps(params, opt, n, seed):
        rng = np.random.default_rng(seed)
        for _ in range(n):
            for name, p in params.items():
                p.grad = rng.standard_normal(p.shape)
            opt.step()

    straight, opt = make()
    steps(straight, opt, 2, 0)
    state = opt.state_dict()
    assert [g["params"] for g in state["param_groups"]] == [[0, 1, 2], [3, 4]]
    assert state["param_groups"][1]["lr"] == 0.03 and set(state["state"]) == {"0", "1", "2", "3", "4"}
    ta.save(state, tmp_path / "opt.npz")
    steps(straight, opt, 2, 1)

    resumed, opt2 = make()
    steps(resumed, opt2, 2, 0)
    opt2.param_groups[1]["lr"] = 99.0  # load_state_dict restores each group's hyperparameters
    opt2.load_state_dict(ta.load(tmp_path / "opt.npz"))
    assert opt2.param_groups[1]["lr"] == 0.03 and opt2.param_groups[0]["betas"] == (0.9, 0.999)
    steps(resumed, opt2, 2, 1)
    for name in SHAPES:
        np.testing.assert_array_equal(resumed[name].data, straight[name].data)

    one_group = ta.optim.AdamW(list(straight.values()))
    with pytest.raises(ValueError, match="the state_dict has 2 parameter groups, the optimiser 1"):
        one_group.load_state_dict(state)


def test_a_state_dict_from_before_parameter_groups_still_loads():
    p = nn.Parameter(np.ones(3))
    opt = ta.optim.Adam([p], lr=0.5)
    old = {"hyper": {"lr": 0.02, "betas": (0.8, 0.9), "eps": 1e-8, "weight_decay": 0.0},
           "state": {"0": {"step": 4, "exp_avg": np.ones(3), "exp_avg_sq": np.ones(3)}}}
    opt.load_state_dict(old)
    assert opt.param_groups[0]["lr"] == 0.02 and opt.state[0]["step"] == 4
    schedule = ta.optim.StepLR(opt, step_size=1, gamma=0.5)
    schedule.load_state_dict({"count": 2, "base_lr": 0.1})  # a schedule's state from before groups
    assert opt.lr == pytest.approx(0.025)
    with pytest.raises(TypeError, match="Adam.load_state_dict: expected the dict"):
        opt.load_state_dict(None)
    with pytest.raises(TypeError, match="StepLR.load_state_dict: expected the dict"):
        schedule.load_state_dict(None)


def test_linear_warmup_scales_each_group_from_its_own_rate():
    a, b = nn.Parameter(np.zeros(1)), nn.Parameter(np.zeros(1))
    opt = ta.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.4}], lr=0.2)
    warm = ta.optim.LinearWarmup(opt, warmup_steps=2)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.2]
    warm.step()
    assert [g["lr"] for g in opt.param_groups] == [0.2, 0.4]
    assert [g["initial_lr"] for g in opt.param_groups] == [0.2, 0.4]


def test_lambda_lr_matches_pytorch_per_group_and_resumes_from_its_count():
    torch = pytest.importorskip("torch")
    warm_cosine = lambda n: min(1.0, (n + 1) / 3) * (0.55 + 0.45 * np.cos(np.pi * min(n, 8) / 8))  # noqa: E731
    halving = lambda n: 0.5 ** n  # noqa: E731
    a, b = nn.Parameter(np.zeros(1)), nn.Parameter(np.zeros(1))
    ta_, tb = torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)
    opt = ta.optim.AdamW([{"params": [a]}, {"params": [b], "lr": 0.4}], lr=0.2)
    topt = torch.optim.AdamW([{"params": [ta_]}, {"params": [tb], "lr": 0.4}], lr=0.2)
    ours = ta.optim.LambdaLR(opt, [warm_cosine, halving])
    theirs = torch.optim.lr_scheduler.LambdaLR(topt, [warm_cosine, halving])
    for _ in range(10):
        assert [g["lr"] for g in opt.param_groups] == pytest.approx([g["lr"] for g in topt.param_groups], rel=1e-12)
        topt.step()  # torch warns if the schedule steps before the optimiser
        ours.step()
        theirs.step()
    again = ta.optim.LambdaLR(ta.optim.AdamW([{"params": [a]}, {"params": [b], "lr": 0.4}], lr=0.2),
                              [warm_cosine, halving])
    again.load_state_dict(ours.state_dict())
    assert [g["lr"] for g in again.optimizer.param_groups] == [g["lr"] for g in opt.param_groups]
    with pytest.raises(ValueError, match="LambdaLR: 1 functions in lr_lambda for 2 parameter groups"):
        ta.optim.LambdaLR(opt, [halving])
    with pytest.raises(TypeError, match="LambdaLR: lr_lambda must be a function"):
        ta.optim.LambdaLR(opt, 0.5)
