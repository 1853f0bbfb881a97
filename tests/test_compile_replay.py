"""What a replay no longer does for nothing (tinyattn/compile/): each rewrite keeps eager's bits.

* The gradients of a tensor's disjoint slices are written into one array of zeros (buffers.py,
  join_slice_grads) instead of one array of zeros per slice and their sum.
* Each ops/arrays.py call runs what the fast path's door chose at capture (plan.py bind_door).
* No shape check where the shape follows from the inputs' (plan.py unchecked).
* A view of a register's memory is an ndarray over its buffer (capture.py strided).
* A fused run reads slices taken before it through their parent (fuse.py outside_views).
* Sum's and Mean's backward are followed inside (autograd/rules_reduce.py _spread).
"""
import warnings

import numpy as np
import pytest

import tinyattn as ta
from tinyattn.ops import use_backend

H = 8


@pytest.fixture
def numba():
    """The fast path's doors in (the tests about kernels), whatever TINYATTN_BACKEND says."""
    with use_backend("numba"):
        yield


def _run(loss_fn, w, batches, compiled):
    """([(loss, w.grad)] over the batches, the step), eager or compiled, w.grad reset before each."""
    def step(x):
        loss = loss_fn(w, x)
        loss.backward()
        return loss
    run = ta.compile(step) if compiled else step
    out = []
    for x in batches:
        w.grad = None
        out.append((run(ta.tensor(x)).item(), w.grad.copy()))
    return out, run


def _same_bits(eager, compiled):
    for (la, ga), (lb, gb) in zip(eager, compiled):
        assert la == lb
        np.testing.assert_array_equal(ga, gb)
        assert (np.signbit(ga) == np.signbit(gb)).all(), "a zero's sign differs"


def _compare(loss_fn, w, batches):
    """Eager's and compiled's [(loss, w.grad)] over the batches, bit for bit; the compiled step's one plan."""
    data = w.data.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eager, _ = _run(loss_fn, w, batches, False)
        w.data[...] = data
        compiled, run = _run(loss_fn, w, batches, True)
        w.data[...] = data
    _same_bits(eager, compiled)
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


# --- the fast path's door: chosen at capture, bound in the code ----------------------------------

def _attention_step(w):
    """A step whose ops/arrays.py calls go through doors: matmul, softmax (a kernel), sum_over."""
    def loss_fn(w, x):
        scores = (x @ w).softmax(-1)
        return (scores * scores).sum()
    return loss_fn


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_door_chosen_at_capture_is_bound_in_the_replay(dtype, monkeypatch, numba):
    """The replay calls the kernel (or reference) the door chose at capture, named so in its code,
    with eager's bits; replaced afterwards, ops/arrays.py's softmax is not called any more."""
    from tinyattn.ops import arrays, fast_path
    rng = np.random.default_rng(2)
    w = ta.tensor(rng.standard_normal((6, 10)).astype(dtype), requires_grad=True)
    batches = [rng.standard_normal((5, 6)).astype(dtype) for _ in range(5)]
    plan = _compare(_attention_step(w), w, batches)
    assert "softmax_kernel_" in plan.source and "matmul_reference_" in plan.source, plan.source
    assert any(value is fast_path.kernel("softmax") for value in plan._run.__globals__.values())
    calls = []
    door = arrays.softmax
    monkeypatch.setattr(arrays, "softmax", lambda *args: calls.append(1) or door(*args))
    plan.replay([ta.tensor(batches[0])])
    assert not calls, "the replay went through ops/arrays.py's door"


@pytest.mark.numpy_backend
def test_the_numpy_backend_binds_the_references():
    """No doors under the numpy backend: the references themselves are bound, eager's bits."""
    rng = np.random.default_rng(9)
    w = ta.tensor(rng.standard_normal((6, 10)), requires_grad=True)
    plan = _compare(_attention_step(w), w, [rng.standard_normal((5, 6)) for _ in range(4)])
    assert "softmax_reference_" in plan.source and "_kernel_" not in plan.source, plan.source


def test_a_kernel_that_needs_c_order_is_bound_when_the_entry_guards_the_order(numba):
    """sum_over's kernel needs C order (a sum over the first axes of many rows): bound, with the
    C order of the inputs and parameters guarded on entry (every array of the step then has the
    capture's order); an input in another order at replay fails that guard before anything runs,
    and the step runs as eager runs it (the door's reference), with eager's bits."""
    rng = np.random.default_rng(3)
    w = ta.tensor(rng.standard_normal((1, 8)), requires_grad=True)

    def loss_fn(w, x):
        return ((x * w).sum((0, 1)) * w[0]).sum()
    batches = [rng.standard_normal((150, 4, 8)) for _ in range(4)]
    plan = _compare(loss_fn, w, batches)
    assert "sum_over_kernel_" in plan.source and plan.layouts, plan.source
    batches += [np.asfortranarray(batches[0]), batches[1]]
    _same_bits(_run(loss_fn, w, batches, False)[0], _run(loss_fn, w, batches, True)[0])


def test_a_kernel_on_a_grad_read_in_the_step_keeps_its_door(numba):
    """A .grad read after backward may be in any order (the user sets it): a sum over it whose kernel
    needs C order goes through the door at each replay; eager's bits."""
    rng = np.random.default_rng(7)
    w = ta.tensor(rng.standard_normal((150, 4, 8)), requires_grad=True)

    def step(x):
        loss = (x * w).tanh().sum()
        loss.backward()
        return ta.tensor(w.grad).sum((0, 1))  # a Tensor op on it: ops/arrays.py's sum_over
    compiled = ta.compile(step)
    for x in [rng.standard_normal((150, 4, 8)) for _ in range(4)]:
        w.grad = None
        eager = step(ta.tensor(x)).numpy().copy()
        w.grad = None
        np.testing.assert_array_equal(compiled(ta.tensor(x)).numpy(), eager)
    source = next(iter(compiled.entries.values())).plans[0].source
    assert "sum_over_kernel_" in source and "= sum_over_" in source.replace("sum_over_kernel_", ""), source


# --- shape checks the plan can prove --------------------------------------------------------------

def test_shapes_that_follow_from_the_inputs_are_not_checked_again():
    """Products, slices, element-wise work of the input and the parameter: every result's shape
    follows from the inputs' (the signature) and the parameters' (checked on entry): no check
    line before the loss's Sum.backward, which runs whole (its g, backward's seed, is a constant)
    and whose results are not checked."""
    rng = np.random.default_rng(4)
    w = ta.tensor(rng.standard_normal((5, 3 * H)), requires_grad=True)

    def loss_fn(w, x):
        g = x @ w
        return (g[:, :H].sigmoid() * g[:, H:2 * H].tanh() + g[:, 2 * H:]).sum()
    plan = _compare(loss_fn, w, [rng.standard_normal((4, 5)) for _ in range(4)])
    forward = plan.source.split("Sum_backward")[0]
    assert "matmul" in forward and "shape !=" not in forward, plan.source


def test_a_shape_set_by_values_is_still_checked():
    """x[mask] with the mask an input: its shape is the mask's count of True, a value: checked, and
    a replay whose count differs runs the step eagerly (captured again), with eager's numbers."""
    rng = np.random.default_rng(5)
    w = ta.tensor(rng.standard_normal(6), requires_grad=True)

    def step(x, mask):
        loss = ((x * w).tanh()[mask] ** 2).sum()
        loss.backward()
        return loss
    compiled = ta.compile(step)
    masks = [rng.random(6) < 0.5 for _ in range(3)] + [np.ones(6, bool), np.zeros(6, bool)]
    mask_counts = [masks[0]] * 3 + masks  # three of one count: captured twice and replayed, then others
    for mask in mask_counts:
        x = rng.standard_normal(6)
        w.grad = None
        eager = step(ta.tensor(x), ta.tensor(mask)).item(), w.grad.copy()
        w.grad = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a new plan per count: past MAX_PLANS it would say so
            got = compiled(ta.tensor(x), ta.tensor(mask)).item(), w.grad.copy()
        assert eager[0] == got[0]
        np.testing.assert_array_equal(eager[1], got[1])
    plan = next(iter(compiled.entries.values())).plans[0]
    assert "shape !=" in plan.source, plan.source


# --- views of a register's memory ------------------------------------------------------------------

def test_a_strided_view_is_an_array_over_its_base(monkeypatch):
    """nn.Linear's weight.T inside the rule is a view the replay takes again (capture.py strided):
    an ndarray over the base's buffer, not as_strided; a base in another order is read right too."""
    from tinyattn.compile.capture import strided
    lin = ta.nn.Linear(8, 4)

    def step(x):
        loss = lin(x).tanh().sum()
        loss.backward()
        return loss
    compiled = ta.compile(step)
    xs = [np.random.default_rng(i).standard_normal((5, 8)).astype(np.float32) for i in range(4)]
    for x in xs[:3]:
        lin.zero_grad()
        compiled(ta.tensor(x))
    assert "strided_" in next(iter(compiled.entries.values())).plans[0].source
    monkeypatch.setattr(np.lib.stride_tricks, "as_strided", lambda *a, **k: pytest.fail("as_strided was called"))
    lin.zero_grad()
    got = compiled(ta.tensor(xs[3])).item(), lin.weight.grad.copy()
    monkeypatch.undo()
    lin.zero_grad()
    eager = step(ta.tensor(xs[3])).item(), lin.weight.grad.copy()
    assert got[0] == eager[0]
    np.testing.assert_array_equal(got[1], eager[1])
    base = np.arange(24.0).reshape(4, 6)
    expected = np.lib.stride_tricks.as_strided(base.reshape(-1)[1:], (5, 3), (8, 48))
    np.testing.assert_array_equal(strided(base, 1, (5, 3), (8, 48)), expected)
    np.testing.assert_array_equal(strided(np.asfortranarray(base), 1, (5, 3), (8, 48)), expected)


# --- fusion ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_run_reads_slices_taken_before_it_through_their_parent(dtype):
    """a, b = g[:, :H], g[:, H:2H], then a sum of another shape, then a * b + a: the run reads a and
    b through g at their offsets (fuse.py outside_views), instead of leaving the product on strided
    views to numpy; eager's bits."""
    rng = np.random.default_rng(8)
    w = ta.tensor(rng.standard_normal((5, 3 * H)).astype(dtype), requires_grad=True)

    def loss_fn(w, x):
        g = x @ w
        a, b = g[:, :H], g[:, H:2 * H]
        s = g.sum(1, keepdims=True)
        return ((a * b + a) * s).sum()
    plan = _compare(loss_fn, w, [rng.standard_normal((4, 5)).astype(dtype) for _ in range(4)])
    forward = plan.source.split("_backward")[0]
    assert "fused" in forward and "multiply" not in forward, plan.source


# --- rules followed inside -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_and_mean_backward_are_followed_inside(dtype):
    """Sum's and Mean's backward (g copied along the reduced axes into a new array) are the plan's
    numpy calls, not their rules run whole; eager's bits, a transposed input too."""
    rng = np.random.default_rng(6)
    w = ta.tensor(rng.standard_normal((3, 4)).astype(dtype), requires_grad=True)

    def loss_fn(w, x):
        h = (x * w).tanh()
        return (h.sum(-1, keepdims=True) * h).mean(0).sum() + h.T.sum(0).sum()
    plan = _compare(loss_fn, w, [rng.standard_normal((3, 4)).astype(dtype) for _ in range(4)])
    whole = {ins[1].__name__ for ins in plan.code if ins[0] in ("forward", "backward")}
    assert not whole & {"Sum", "Mean"}, plan.source
