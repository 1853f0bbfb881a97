"""In-place ops with PyTorch's meaning (tinyattn/autograd/inplace.py) and the version counter that
makes backward refuse an array changed since forward (tinyattn/autograd/inplace.py)."""
import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn


def test_a_hand_written_sgd_step_under_no_grad_trains():
    """`p -= lr * p.grad` used to rebind the loop variable: the parameters never moved."""
    ta.manual_seed(0)
    layer = nn.Linear(3, 1).double()
    x = ta.tensor(np.random.default_rng(0).standard_normal((8, 3)))
    target = ta.tensor(x.data @ np.array([[1.0], [-2.0], [0.5]]))
    weight_array = layer.weight.data
    losses = []
    for _ in range(50):
        loss = ((layer(x) - target) ** 2).mean()
        losses.append(loss.item())
        for p in layer.parameters():
            p.grad = None
        loss.backward()
        with ta.no_grad():
            for p in layer.parameters():
                p -= 0.1 * p.grad
    assert losses[-1] < 0.05 * losses[0]
    assert layer.weight.data is weight_array  # changed in place: an optimiser holding it sees the change
    assert layer.weight._version == 50


@pytest.mark.parametrize("change", [
    lambda p: p.add_(1.0), lambda p: p.sub_(1.0), lambda p: p.mul_(2.0), lambda p: p.div_(2.0),
    lambda p: p.zero_(), lambda p: p.fill_(3.0), lambda p: p.clamp_(-0.5, 0.5),
    lambda p: p.copy_(ta.ones(2, 3, dtype=np.float64)), lambda p: p.normal_(), lambda p: p.uniform_(),
])
def test_each_in_place_method_changes_the_array_under_no_grad_and_refuses_a_leaf_outside(change):
    p = nn.Parameter(np.linspace(-1.0, 1.0, 6).reshape(2, 3))
    before = p.data.copy()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        change(p)
    assert np.array_equal(p.data, before) and p._version == 0
    array = p.data
    with ta.no_grad():
        assert change(p) is p
    assert p.data is array and p._version == 1 and p.is_leaf and p.requires_grad


def test_in_place_results_match_pytorch():
    torch = pytest.importorskip("torch")
    start = np.linspace(-2.0, 2.0, 6).reshape(2, 3)
    other = np.arange(3.0) + 1
    ours, theirs = ta.tensor(start.copy()), torch.tensor(start.copy())
    for name, args, kwargs in [("add_", (other,), {"alpha": 2}), ("sub_", (other,), {"alpha": 0.5}),
                               ("mul_", (other,), {}), ("div_", (other,), {}), ("clamp_", (-1.0, 1.5), {})]:
        getattr(ours, name)(*[ta.tensor(a) if isinstance(a, np.ndarray) else a for a in args], **kwargs)
        getattr(theirs, name)(*[torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args], **kwargs)
        np.testing.assert_allclose(ours.data, theirs.numpy(), rtol=1e-15, err_msg=name)
    ours += 1.0
    ours *= 3.0
    ours /= 2.0
    ours -= ta.tensor(other)
    theirs += 1.0
    theirs *= 3.0
    theirs /= 2.0
    theirs -= torch.tensor(other)
    np.testing.assert_allclose(ours.data, theirs.numpy(), rtol=1e-15)
    assert ours._version == theirs._version


def test_an_in_place_change_of_a_saved_array_makes_backward_raise_pytorchs_error():
    x = ta.tensor(np.array([0.5, 1.0]), requires_grad=True)
    y = x.exp()            # Exp saves its output y for backward
    loss = (y * 3).sum()   # Mul saves y too
    with ta.no_grad():
        y.mul_(2)
    assert y._version == 1
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: .* its output of Exp is at version 1"):
        loss.backward()


def test_a_change_through_a_view_counts_for_the_base_and_backward_raises():
    x = ta.tensor(np.array([[0.5, 1.0], [2.0, 3.0]]), requires_grad=True)
    y = x.tanh()
    loss = (y * y).sum()
    row = y[0]
    with ta.no_grad():
        row += 1.0     # changes y's memory: tanh's backward would read the new values
    assert y._version == row._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_an_optimiser_step_between_forward_and_a_second_backward_is_caught():
    w = nn.Parameter(np.array([1.0, 2.0]))
    loss = (w * w).sum()
    loss.backward(retain_graph=True)
    with ta.no_grad():
        w -= 0.1 * w.grad
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_an_in_place_change_in_the_graph_is_recorded_and_earlier_users_keep_the_old_history():
    """y *= 5 after b = y + 3 used y: b's gradient must not go through the * 5 (PyTorch's edges)."""
    torch = pytest.importorskip("torch")
    start = np.array([1.0, -2.0, 0.5])
    upstream = np.array([0.3, -1.1, 2.0])
    results = []
    for lib, make in ((ta, lambda a: ta.tensor(a.copy(), requires_grad=True)),
                      (torch, lambda a: torch.tensor(a.copy(), requires_grad=True))):
        a = make(start)
        y = a * 2
        b = y + 3
        y *= 5             # recorded: y is now the output of a Mul node
        y += a             # and of an Add
        y.clamp_(-4.0, 100.0)
        out = b * y
        out.backward(lib.tensor(upstream))
        results.append((out.detach().numpy().copy(), a.grad if lib is ta else a.grad.numpy()))
    (ours, our_grad), (theirs, their_grad) = results
    np.testing.assert_allclose(ours, theirs, rtol=1e-15)
    np.testing.assert_allclose(our_grad, their_grad, rtol=1e-15)


def test_in_place_in_the_graph_gradchecks():
    def f(a, b):
        y = a * 1.5
        y += b
        y *= b
        y.sub_(a, alpha=0.5)
        return y.tanh()

    rng = np.random.default_rng(0)
    a = ta.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    b = ta.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    assert ta.gradcheck(f, (a, b))


def test_copy_and_fill_send_the_gradient_to_the_source_not_to_the_old_values():
    a = ta.tensor(np.ones(3), requires_grad=True)
    src = ta.tensor(np.array([2.0]), requires_grad=True)
    y = a * 1.0
    y.copy_(src)                        # broadcast from (1,)
    (y * ta.tensor(np.array([1.0, 2.0, 3.0]))).sum().backward()
    assert np.array_equal(src.grad, [6.0]) and np.array_equal(a.grad, [0.0, 0.0, 0.0])


def test_in_place_refuses_to_grow_or_to_lose_a_dtype():
    x = ta.zeros(3)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        x += ta.ones(2, 3)
    ids = ta.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="result type float32 can't be cast to the desired output type int64"):
        ids *= 1.5
    ids += 1
    assert np.array_equal(ids.data, [2, 3, 4]) and ids.dtype == np.int64


def test_index_assignment_works_under_no_grad_and_is_refused_in_the_graph():
    w = nn.Parameter(np.zeros((2, 3)))
    with pytest.raises(RuntimeError, match=r"x\[index\] = value on a tensor in the graph"):
        w[0, 1] = 5.0
    with ta.no_grad():
        w[0, 1] = 5.0
        w[1] = ta.tensor(np.array([1.0, 2.0, 3.0]))
    assert w.data[0, 1] == 5.0 and np.array_equal(w.data[1], [1.0, 2.0, 3.0]) and w._version == 2
    plain = ta.zeros(4)
    plain[np.array([0, 2])] = 1.0  # nothing needs a gradient: allowed as in PyTorch
    assert np.array_equal(plain.data, [1, 0, 1, 0])


@pytest.mark.parametrize("make", [lambda ps: ta.optim.SGD(ps, lr=0.1), lambda ps: ta.optim.Adam(ps, lr=0.1)])
def test_an_optimiser_step_counts_as_an_in_place_change(make):
    """As PyTorch: backward through a graph built before opt.step() would use the moved weights."""
    w = nn.Parameter(np.array([1.0, 2.0]))
    opt = make([w])
    loss = (w * w).sum()
    loss.backward(retain_graph=True)
    opt.step()
    assert w._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_a_change_of_an_output_its_node_saved_is_caught_at_that_node():
    """Exp keeps its output for backward; nothing else holds it: the change itself marks Exp."""
    x = ta.tensor(np.array([0.5, 1.0]), requires_grad=True)
    y = x.exp()
    total = y.sum()  # Sum saves nothing
    with ta.no_grad():
        y.reshape(2, 1).add_(1.0)  # through a view of y
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: .* its output of Exp"):
        total.backward()


def test_copy_takes_a_numpy_array_too():
    p = nn.Parameter(np.zeros((2, 2), np.float32))
    with ta.no_grad():
        p.copy_(np.arange(4.0).reshape(2, 2))  # float64 values into a float32 parameter
    assert p.dtype == np.float32 and np.array_equal(p.data, [[0, 1], [2, 3]])


# --- holes a fresh adversarial review found, each once a silent wrong gradient -------------------

@pytest.mark.parametrize("alias", [lambda t: t.detach(), lambda t: t.unbind(0)[0] if t.ndim else t.detach(),
                                   lambda t: t.reshape(-1), lambda t: t.T])
def test_a_change_through_any_alias_is_caught(alias):
    a = ta.tensor(np.array([[1.0, 2.0], [3.0, 4.0]]), requires_grad=True)
    b = a * 1
    c = (b * b).sum()
    with ta.no_grad():
        alias(b).add_(10)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.backward()


def test_a_saved_view_of_an_argument_counts():
    """Linear saves x reshaped to rows (a view): a change of x after forward must still be caught."""
    layer = nn.Linear(3, 3).double()
    x = ta.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    h = x * 1
    out = layer(h)
    with ta.no_grad():
        h += 1.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_flip_and_repeat_copy_as_pytorchs_do():
    a = ta.tensor([1.0, 2.0, 3.0])
    a.flip(0).add_(1)
    assert np.array_equal(a.data, [1.0, 2.0, 3.0])
    r = a.repeat(1)
    r += 1  # its own writable memory
    assert np.array_equal(a.data, [1.0, 2.0, 3.0]) and np.array_equal(r.data, [2.0, 3.0, 4.0])


def test_retain_grad_follows_the_tensor_to_its_newest_value():
    torch = pytest.importorskip("torch")
    grads = []
    for lib in (ta, torch):
        a = lib.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
        x = a * 2
        x.add_(1)
        x.retain_grad()
        x.mul_(3)
        (x * x).sum().backward()
        grads.append(np.asarray(x.grad))
    np.testing.assert_allclose(grads[0], grads[1])


def test_a_constant_side_is_not_saved_so_changing_it_is_fine_as_in_pytorch():
    x = ta.tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = x * 3
    with ta.no_grad():
        x.add_(1)  # Mul kept 3 for x's gradient, not x
    y.sum().backward()
    assert np.array_equal(x.grad, [3.0, 3.0])


def test_a_view_changed_by_a_value_that_needs_a_gradient_changes_its_base_history_as_pytorch():
    base = ta.zeros(3, 2, dtype=np.float64)
    w = ta.tensor(np.array([1.0, 2.0]), requires_grad=True)
    base[0].copy_(w * 3)  # the base's history becomes CopySlices (issue 28; it was refused)
    base.sum().backward()
    assert np.array_equal(base.data[0], [3.0, 6.0]) and np.array_equal(w.grad, [3.0, 3.0])


def test_a_hook_on_a_0d_leaf_used_twice():
    a = ta.tensor(np.array(3.0), requires_grad=True)
    seen = []
    a.register_hook(lambda g: seen.append(float(g)) or g * 2)
    (a * a + a).backward()
    assert seen == [7.0] and a.grad.item() == 14.0


def test_a_tensor_changed_in_place_by_itself_matches_pytorch():
    """x.add_(x) made the Add node its own input: backward looped (retain_graph) or crashed."""
    torch = pytest.importorskip("torch")
    grads = []
    for lib in (ta, torch):
        a = lib.tensor(np.array([1.0, 2.0]), requires_grad=True)
        x = a * 1
        x.add_(x)
        x.sub_(x, alpha=0.5)
        (x * x).sum().backward(retain_graph=True)
        grads.append(np.asarray(a.grad))
    np.testing.assert_allclose(grads[0], grads[1])


def test_expand_is_a_view_that_shares_the_version_counter():
    x = ta.tensor(np.array([[1.0], [2.0]]))
    w = ta.tensor(np.ones((2, 3)), requires_grad=True)
    z = (x.expand(2, 3) * w).sum()
    with ta.no_grad():
        x.add_(10)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()
