"""Optimisers against updates computed by hand; clipping; schedules; bounded memory."""
import gc

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
from tinyattn.autograd.function import Context


def _param(values):
    return nn.Parameter(np.array(values, np.float64))


def test_sgd_with_momentum_and_weight_decay_matches_hand_computation():
    p = _param([1.0, -2.0])
    opt = ta.optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.01)
    grads = [np.array([0.5, 1.0]), np.array([-1.0, 0.25]), np.array([0.0, 2.0])]
    w, buf = np.array([1.0, -2.0]), None
    for g in grads:
        p.grad = g.copy()
        opt.step()
        d = g + 0.01 * w
        buf = d if buf is None else 0.9 * buf + d
        w = w - 0.1 * buf
        np.testing.assert_allclose(p.data, w, rtol=1e-14)


def test_adam_matches_hand_computation_with_bias_correction():
    p = _param([0.5, -1.5, 3.0])
    opt = ta.optim.Adam([p], lr=0.01, betas=(0.8, 0.99), eps=1e-8)
    w, m, v = p.data.copy(), np.zeros(3), np.zeros(3)
    for t, g in enumerate([np.array([1.0, -0.5, 0.1]), np.array([0.3, 0.3, -2.0]), np.array([-1.0, 0.0, 0.5])], 1):
        p.grad = g.copy()
        opt.step()
        m = 0.8 * m + 0.2 * g
        v = 0.99 * v + 0.01 * g * g
        w = w - 0.01 * (m / (1 - 0.8 ** t)) / (np.sqrt(v / (1 - 0.99 ** t)) + 1e-8)
        np.testing.assert_allclose(p.data, w, rtol=1e-12)
    # The first Adam step moves every coordinate by ~lr whatever the gradient's size.


def test_optimiser_skips_parameters_without_gradient_and_zero_grad_clears():
    a, b = _param([1.0]), _param([2.0])
    opt = ta.optim.SGD([a, b], lr=1.0)
    a.grad = np.array([1.0])
    opt.step()
    assert a.data[0] == 0.0 and b.data[0] == 2.0
    opt.zero_grad()
    assert a.grad is None


def test_clip_grad_norm_scales_all_gradients_together():
    a, b = _param([3.0]), _param([0.0])
    a.grad, b.grad = np.array([3.0]), np.array([4.0])
    total = nn.utils.clip_grad_norm_([a, b], max_norm=1.0)
    assert total == pytest.approx(5.0)
    np.testing.assert_allclose([a.grad[0], b.grad[0]], [0.6, 0.8], rtol=1e-5)
    untouched = nn.utils.clip_grad_norm_([a, b], max_norm=10.0)
    assert untouched == pytest.approx(1.0, rel=1e-5)
    np.testing.assert_allclose([a.grad[0], b.grad[0]], [0.6, 0.8], rtol=1e-5)


def test_step_decay_and_warmup_schedules():
    opt = ta.optim.SGD([_param([0.0])], lr=1.0)
    decay = ta.optim.StepLR(opt, step_size=2, gamma=0.5)
    lrs = []
    for _ in range(5):
        lrs.append(opt.lr)
        decay.step()
    assert lrs == [1.0, 1.0, 0.5, 0.5, 0.25]
    opt = ta.optim.Adam([_param([0.0])], lr=0.4)
    warm = ta.optim.LinearWarmup(opt, warmup_steps=4)
    lrs = []
    for _ in range(6):
        lrs.append(opt.lr)
        warm.step()
    assert lrs == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.4, 0.4])


def _live_nodes():
    gc.collect()
    return sum(type(o) is Context for o in gc.get_objects())  # type(), not isinstance: dead weak proxies raise


def test_a_thousand_steps_with_item_logging_keep_the_graph_bounded():
    ta.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    opt = ta.optim.Adam(model.parameters(), lr=1e-2)
    x = ta.randn(16, 4)
    target = np.arange(16) % 3
    log, counts = [], []
    for step in range(1000):
        loss = ta.cross_entropy(model(x), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.append(loss.item())
        if step in (10, 999):
            counts.append(_live_nodes())
    assert counts[1] <= counts[0] + 2, f"live graph nodes grew from {counts[0]} to {counts[1]}"
    assert log[-1] < log[0]


def test_no_grad_inference_builds_no_graph():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    x = ta.randn(5, 4)
    before = _live_nodes()
    with ta.no_grad():
        outputs = [model(x) for _ in range(20)]
    assert _live_nodes() == before
    assert all(o._ctx is None and not o.requires_grad for o in outputs)


def test_a_parameter_listed_twice_is_stepped_once():
    p = _param([1.0])
    opt = ta.optim.SGD([p, p], lr=0.1)
    p.grad = np.array([1.0])
    opt.step()
    np.testing.assert_allclose(p.data, [0.9])


def test_an_optimiser_refuses_a_lone_tensor_and_clip_accepts_one():
    """Iterating one Parameter walks its rows: the optimiser would silently train nothing."""
    weight = nn.Parameter(np.ones((3, 2), np.float32))
    for make in (lambda p: ta.optim.SGD(p, lr=0.1), lambda p: ta.optim.Adam(p)):
        with pytest.raises(TypeError, match=r"iterable of Parameters, got one Parameter of shape \(3, 2\)"):
            make(weight)
    weight.grad = np.full((3, 2), 2.0, np.float32)
    total = ta.nn.utils.clip_grad_norm_(weight, 1.0)
    assert total == pytest.approx(np.sqrt(24.0))
    assert np.linalg.norm(weight.grad) == pytest.approx(1.0, rel=1e-5)


def test_float32_parameters_are_updated_in_float32_arithmetic():
    """Bit for bit the update computed with float32 numbers only (numpy 2 would turn the whole
    update float64 if one bias correction were a numpy float64 scalar)."""
    rng = np.random.default_rng(0)
    f = np.float32
    p = nn.Parameter(rng.standard_normal((4, 5)).astype(f))
    adam = ta.optim.Adam([p], lr=0.01, weight_decay=0.1)
    sgd_p = nn.Parameter(p.data.copy())
    sgd = ta.optim.SGD([sgd_p], lr=0.01, momentum=0.9, weight_decay=0.1)
    x, y = p.data.copy(), p.data.copy()
    m, v, buf = np.zeros_like(x), np.zeros_like(x), None
    for t in range(1, 4):
        g = rng.standard_normal((4, 5)).astype(f)
        p.grad, sgd_p.grad = g.copy(), g.copy()
        adam.step()
        sgd.step()
        gx = g + f(0.1) * x
        m = f(0.9) * m + f(1 - 0.9) * gx
        v = f(0.999) * v + f(1 - 0.999) * gx * gx
        x = x - f(0.01 / (1 - 0.9 ** t)) * (m / (np.sqrt(v) / f(np.sqrt(1 - 0.999 ** t)) + f(1e-8)))
        gy = g + f(0.1) * y
        buf = gy if buf is None else f(0.9) * buf + gy
        y = y - f(0.01) * buf
        np.testing.assert_array_equal(p.data, x)
        np.testing.assert_array_equal(sgd_p.data, y)
    assert p.data.dtype == np.float32 and all(a.dtype == np.float32 for a in adam.state[0].values()
                                              if isinstance(a, np.ndarray))


def test_a_step_that_fails_moves_no_parameter():
    first, second = nn.Parameter(np.ones(2)), nn.Parameter(np.ones(3))
    optimizer = ta.optim.Adam([first, second], lr=0.1)
    first.grad, second.grad = np.ones(2), np.ones(2)  # the second has the wrong shape
    with pytest.raises(ValueError, match=r"Adam.step: parameter 1 is float64 \(3,\) but its .grad is float64 \(2,\)"):
        optimizer.step()
    assert (first.data == 1).all() and not optimizer.state[0]
