"""The backward walk: deep graphs, shared nodes, freeing, no_grad and detach."""
import sys

import numpy as np
import pytest

import tinyattn as ta


def test_a_6000_op_chain_backprops_under_the_default_recursion_limit():
    assert sys.getrecursionlimit() <= 10_000
    x = ta.tensor([0.5], requires_grad=True)
    y = x
    for _ in range(6000):
        y = y * 1.0001
    y.sum().backward()
    np.testing.assert_allclose(x.grad, [1.0001 ** 6000], rtol=1e-3)


def tanh_rnn_bptt(xs, u, w, upstream):
    """Backprop through time by hand for h_t = tanh(x_t u + h_{t-1} w), h_0 = 0, L = sum(upstream * h_T).
    With a_t = x_t u + h_{t-1} w: da_t = dh_t * (1 - h_t^2), dh_{t-1} = da_t w^T, and the shared
    weights collect every step's share: du += x_t^T da_t, dw += h_{t-1}^T da_t."""
    hs = [np.zeros((xs.shape[1], w.shape[0]))]
    for x in xs:
        hs.append(np.tanh(x @ u + hs[-1] @ w))
    du, dw, dh = np.zeros_like(u), np.zeros_like(w), upstream
    for t in range(len(xs), 0, -1):
        da = dh * (1 - hs[t] ** 2)
        du += xs[t - 1].T @ da
        dw += hs[t - 1].T @ da
        dh = da @ w.T
    return hs[-1], du, dw


def test_a_5000_step_rnn_shares_one_weight_across_every_step(rng):
    w = ta.tensor(rng.standard_normal((4, 4)) * 0.3, requires_grad=True)
    u = ta.tensor(rng.standard_normal((3, 4)) * 0.3, requires_grad=True)
    xs = rng.standard_normal((5000, 2, 3))
    h = ta.zeros(2, 4, dtype=np.float64)
    for x in xs:
        h = (ta.tensor(x) @ u + h @ w).tanh()
    upstream = rng.standard_normal((2, 4))
    h.backward(upstream)
    assert w.grad.shape == (4, 4) and np.isfinite(w.grad).all() and np.abs(w.grad).sum() > 0
    h_last, du, dw = tanh_rnn_bptt(xs, u.data, w.data, upstream)
    np.testing.assert_allclose(h.data, h_last, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(w.grad, dw, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(u.grad, du, rtol=1e-10, atol=1e-14)


def test_shared_weight_gradient_is_the_sum_over_its_uses(rng):
    # d/dw sum(tanh(tanh(x w) w)) computed with the engine vs the same with two separate weights.
    x = rng.standard_normal((2, 3))
    w0 = rng.standard_normal((3, 3))
    shared = ta.tensor(w0, requires_grad=True)
    ((ta.tensor(x) @ shared).tanh() @ shared).tanh().sum().backward()
    first, second = ta.tensor(w0, requires_grad=True), ta.tensor(w0, requires_grad=True)
    ((ta.tensor(x) @ first).tanh() @ second).tanh().sum().backward()
    np.testing.assert_allclose(shared.grad, first.grad + second.grad, rtol=1e-12)


def test_x_times_x_counts_both_uses():
    x = ta.tensor([3.0], requires_grad=True)
    (x * x).backward(np.ones(1))
    np.testing.assert_array_equal(x.grad, [6.0])


def test_gradients_accumulate_across_backward_calls_until_cleared():
    x = ta.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_array_equal(x.grad, [5.0, 5.0])


def test_only_leaves_that_ask_get_a_gradient():
    x = ta.tensor([1.0], requires_grad=True)
    c = ta.tensor([2.0])
    y = x * c
    (y * y).sum().backward()
    assert c.grad is None and y.grad is None and x.grad is not None


def test_second_backward_through_a_freed_graph_is_a_clear_error():
    x = ta.tensor([1.0], requires_grad=True)
    y = (x.exp() * 2).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time.*retain_graph=True"):
        y.backward()


def test_retain_graph_allows_a_second_backward():
    x = ta.tensor([1.0], requires_grad=True)
    y = (x.exp() * 2).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad, [4 * np.e], rtol=1e-6)


def test_freeing_releases_saved_arrays():
    x = ta.tensor(np.ones(3), requires_grad=True)
    y = x.exp()
    node = y._ctx
    y.sum().backward()
    assert node.freed and not vars(node).get("_saved")


def test_non_scalar_backward_needs_a_gradient_of_the_outputs_shape():
    y = ta.tensor(np.ones((2, 3)), requires_grad=True) * 2
    with pytest.raises(RuntimeError, match=r"shape \(2, 3\).*needs a scalar"):
        y.backward()
    with pytest.raises(ValueError, match=r"gradient of shape \(3,\) for an output of shape \(2, 3\)"):
        y.backward(np.ones(3))


def test_backward_on_a_tensor_without_grad_explains_why():
    with pytest.raises(RuntimeError, match="does not require grad"):
        ta.ones(2).sum().backward()


def test_no_grad_builds_no_graph_and_detach_cuts_it():
    x = ta.tensor([1.0], requires_grad=True)
    with ta.no_grad():
        y = x * 2
    assert not y.requires_grad and y._ctx is None
    z = (x * 2).detach() * x
    z.sum().backward()
    np.testing.assert_array_equal(x.grad, [2.0])


def test_unused_output_of_a_two_output_function_gets_a_zero_gradient():
    class SplitSquare(ta.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x, 3 * x

        @staticmethod
        def backward(ctx, g_square, g_triple):
            (x,) = ctx.saved_arrays
            return 2 * x * g_square + 3 * g_triple

    x = ta.tensor(np.array([1.0, 2.0]), requires_grad=True)
    square, triple = SplitSquare.apply(x)
    triple.sum().backward()
    np.testing.assert_array_equal(x.grad, [3.0, 3.0])
    assert ta.gradcheck(lambda x: SplitSquare.apply(x), (ta.tensor(np.array([0.5, -1.0]), requires_grad=True),))


def test_getitem_backward_adds_repeated_indices():
    w = ta.tensor(np.zeros((3, 2)), requires_grad=True)
    w[np.array([0, 0, 2, 0])].sum().backward()
    np.testing.assert_array_equal(w.grad, [[3, 3], [0, 0], [1, 1]])


def test_no_grad_nests_recurses_and_works_as_a_bare_decorator():
    guard = ta.no_grad()

    @guard
    def recurse(n):
        assert not ta.is_grad_enabled()
        return recurse(n - 1) if n else None

    recurse(3)
    assert ta.is_grad_enabled()
    with guard:
        with guard:
            pass
        assert not ta.is_grad_enabled()
    assert ta.is_grad_enabled()

    @ta.no_grad
    def infer(x):
        return x * 2

    assert not infer(ta.tensor([1.0], requires_grad=True)).requires_grad and ta.is_grad_enabled()
    with ta.no_grad():
        with ta.enable_grad():
            assert (ta.tensor([1.0], requires_grad=True) * 2).requires_grad
        assert not ta.is_grad_enabled()


def test_a_custom_backward_with_the_wrong_number_or_kind_of_gradients_is_named():
    class TooFew(ta.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            return x * scale

        @staticmethod
        def backward(ctx, g):
            return g  # forgot the None for `scale`

    class WrongDtype(ta.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g.astype(np.float64) * 2

    x = ta.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="TooFew.backward returned 1 gradients, but forward took 2 arguments"):
        TooFew.apply(x, 3.0).sum().backward()
    with pytest.raises(RuntimeError, match="WrongDtype.backward returned a float64 gradient .* a float32 tensor"):
        WrongDtype.apply(x).sum().backward()

    class WrongShapeForTheSecond(ta.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g, g[:1]

    with pytest.raises(RuntimeError, match=r"WrongShapeForTheSecond.backward returned .* shape \(1,\) for argument 1, "):
        WrongShapeForTheSecond.apply(x, ta.tensor([3.0, 4.0], requires_grad=True)).sum().backward()


def test_ta_backward_checks_the_gradient_shapes():
    y = ta.tensor(np.ones((2, 3)), requires_grad=True) * 2
    with pytest.raises(ValueError, match=r"gradient of shape \(3,\) for an output of shape \(2, 3\)"):
        ta.backward([y], [np.ones(3)])


def test_summing_a_gradient_never_changes_an_array_a_backward_handed_back():
    # The walk adds in place only into sums it made itself: here every use of m hands back the
    # very same saved array, which must come out of the walk unchanged.
    handed_back = np.array([1.0, 2.0])

    class HandsBackItsSavedArray(ta.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(handed_back)
            return x.copy()

        @staticmethod
        def backward(ctx, g):
            (saved,) = ctx.saved_arrays
            return saved

    x = ta.tensor(np.array([0.5, -1.0]), requires_grad=True)
    m = x * 1.0
    total = sum(HandsBackItsSavedArray.apply(m) for _ in range(4))
    total.backward(np.ones(2))
    np.testing.assert_array_equal(handed_back, [1.0, 2.0])
    np.testing.assert_array_equal(x.grad, 4 * handed_back)


def test_a_node_used_by_many_later_nodes_gets_their_sum_in_either_order_of_creation(rng):
    # s is used by nodes made both before and after an unrelated branch; the walk (newest
    # node first) must still give s's node the whole sum before visiting it.
    x = ta.tensor(rng.standard_normal(3), requires_grad=True)
    s = x.tanh()
    early = s * 2.0
    unrelated = x.exp()
    late = s * s
    y = (early + unrelated * late + s).sum()
    y.backward()
    t, e = np.tanh(x.data), np.exp(x.data)
    np.testing.assert_allclose(x.grad, (2 + 2 * e * t + 1) * (1 - t * t) + e * t * t, rtol=1e-12)


def test_a_freed_node_met_deep_in_a_second_graph_is_a_clear_error():
    x = ta.tensor([1.0], requires_grad=True)
    shared = x.exp()
    shared.tanh().sum().backward()        # frees shared's node
    with pytest.raises(RuntimeError, match="Exp a second time.*retain_graph=True"):
        (shared * 2).sum().backward()


def test_the_drawing_order_is_the_order_the_walk_visits():
    from tinyattn.autograd.engine import reverse_topological_order

    x = ta.tensor(np.ones(2), requires_grad=True)
    a = x.exp()
    y = (a * x.tanh() + a).sum()
    order = reverse_topological_order([y._ctx])
    with ta.autograd.trace() as tape:
        y.backward()
    assert [record.node_id for record in tape] == [id(node) for node in order]
    assert [record.name for record in tape] == ["Sum", "Add", "Mul", "Tanh", "Exp"]


def test_ctx_saved_tensors_names_saved_arrays():
    class Twice(ta.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 2 * x

        @staticmethod
        def backward(ctx, grad):
            ctx.saved_tensors  # PyTorch's spelling: the error says which name holds the arrays
            return (2 * grad,)

    y = Twice.apply(ta.tensor([1.0], requires_grad=True))
    with pytest.raises(AttributeError, match="ctx.saved_arrays"):
        y.sum().backward()
