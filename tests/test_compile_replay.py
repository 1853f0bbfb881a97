"""What a replay no longer does for nothing (tinyattn/compile/): each rewrite keeps eager's bits.

* The gradients of a tensor's disjoint slices are added into one array of zeros (buffers.py,
  join_slice_grads) instead of one array of zeros per slice and their sum.
"""
import warnings

import numpy as np
import pytest

import tinyattn as ta

H = 8


def _compare(loss_fn, w, batches):
    """(eager's, compiled's) [(loss, w.grad)] over the batches, and the compiled step's one plan."""
    results = {}
    for compiled in (False, True):
        data = w.data.copy()

        def step(x):
            loss = loss_fn(w, x)
            loss.backward()
            return loss
        run = ta.compile(step) if compiled else step
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for x in batches:
                w.grad = None
                out.append((run(ta.tensor(x)).item(), w.grad.copy()))
        w.data[...] = data
        results[compiled] = out
    for (la, ga), (lb, gb) in zip(results[False], results[True]):
        assert la == lb
        np.testing.assert_array_equal(ga, gb)
        assert (np.signbit(ga) == np.signbit(gb)).all(), "a zero's sign differs"
    entry = next(iter(run.entries.values()))
    assert entry.replays == len(batches) - 2
    return entry.plans[0]


def _zeros_calls(plan):
    return sum(1 for ins in plan.code if ins[0] == "host" and ins[1] is np.zeros)


def _gates(w, x):
    """A GRU's cut: three slices of one product, each used once; the first slice's gradient
    has -0.0 (where the sum of the arrays of zeros gives +0.0)."""
    g = x @ w
    r, z, n = g[:, :H].sigmoid(), g[:, H:2 * H].sigmoid(), g[:, 2 * H:].tanh()
    scale = ta.tensor(np.where(np.arange(H) % 2 == 0, -0.0, 1.0).astype(w.data.dtype))
    return (r * scale).sum() + (z * n).sum()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradients_of_disjoint_slices_share_one_array_of_zeros(dtype):
    rng = np.random.default_rng(0)
    w = ta.tensor(rng.standard_normal((5, 3 * H)).astype(dtype), requires_grad=True)
    batches = [rng.standard_normal((4, 5)).astype(dtype) for _ in range(5)]
    plan = _compare(_gates, w, batches)
    assert _zeros_calls(plan) == 1, plan.source  # one array of zeros, not three


def test_the_sum_of_slice_gradients_keeps_eagers_signed_zeros():
    """-0.0 in a slice's gradient is +0.0 in the sum (0.0 + -0.0), and w.grad shows it (g = w * 1.0
    passes the sum's signs on): an assignment into one array of zeros would keep -0.0."""
    w = ta.tensor(np.ones((4, 3 * H), np.float32), requires_grad=True)

    def loss_fn(w, x):
        g = w * 1.0
        return (g[:, :H] * x).sum() + (g[:, H:2 * H] * -x).sum() + (g[:, 2 * H:] * 2.0).sum()
    batches = [np.where(np.random.default_rng(i).random((4, H)) < 0.5, 0.0, 1.0).astype(np.float32) for i in range(5)]
    plan = _compare(loss_fn, w, batches)
    assert _zeros_calls(plan) == 1, plan.source


def test_overlapping_slices_keep_their_sum():
    """Slices that share elements: their gradients are summed as eager sums them (g1 + g2 where
    both fall), each in its own array of zeros."""
    rng = np.random.default_rng(1)
    w = ta.tensor(rng.standard_normal((4, 3 * H)), requires_grad=True)

    def loss_fn(w, x):
        return (w[:, :2 * H].tanh() * x[:, :2 * H]).sum() + (w[:, H:] * x[:, H:]).sum()
    plan = _compare(loss_fn, w, [rng.standard_normal((4, 3 * H)) for _ in range(4)])
    assert _zeros_calls(plan) == 2
