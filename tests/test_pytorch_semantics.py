"""Answers that used to differ from PyTorch's without a word: 0-d gradients, NaN in relu and max,
dtype promotion in cat/stack, PyTorch's index order, grad mode per thread, and clear errors where
a raw numpy one came out."""
import threading

import numpy as np
import pytest

import tinyattn as ta


def test_a_0d_tensor_used_three_times_gets_every_gradient():
    """The walk's `total += grad` rebound a numpy scalar: x.grad was [4, 4]."""
    x = ta.tensor(np.array([1.0, 2.0]), requires_grad=True)
    s = x.sum()
    (s * s + s).backward()
    assert np.array_equal(x.grad, [7.0, 7.0])  # d(s^2 + s)/ds = 2s + 1 = 7


def test_micrograds_sanity_check_on_0d_tensors_matches_pytorch():
    """micrograd's test_sanity_check (Karpathy), on 0-d tensors: x.grad was 10, PyTorch says 46."""
    x = ta.tensor(np.array(-4.0), requires_grad=True)
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    assert y.item() == -20.0 and x.grad.item() == 46.0 and x.grad.shape == ()


def test_micrograds_more_ops_on_0d_tensors_match_pytorch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (ta, torch):
        a = lib.tensor(np.array(-4.0), requires_grad=True)
        b = lib.tensor(np.array(2.0), requires_grad=True)
        c = a + b
        d = a * b + b ** 3
        c = c + c + 1
        c = c + 1 + c + (-a)
        d = d + d * 2 + (b + a).relu()
        d = d + 3 * d + (b - a).relu()
        e = c - d
        f = e ** 2
        g = f / 2.0
        g = g + 10.0 / f
        g.backward()
        results.append([float(g.detach().numpy()), float(np.asarray(a.grad)), float(np.asarray(b.grad))])
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_and_quick_gelu_of_a_0d_tensor_stay_0d(dtype):
    x = ta.tensor(np.array(0.3, dtype=dtype), requires_grad=True)
    y = x.sigmoid()
    assert y.shape == ()
    y.backward()
    assert x.grad.shape == () and np.isclose(x.grad, y.item() * (1 - y.item()))
    quick_gelu = x * (1.702 * x).sigmoid()  # GELU's sigmoid form (Hendrycks and Gimpel 2016)
    assert quick_gelu.shape == ()


def test_relu_and_max_pass_the_gradient_to_a_nan_as_pytorch_does():
    x = ta.tensor(np.array([1.0, np.nan, -2.0]), requires_grad=True)
    x.relu().sum().backward()
    assert np.array_equal(x.grad, [1.0, 1.0, 0.0])  # torch: relu's backward lets NaN's gradient through
    rows = ta.tensor(np.array([[1.0, np.nan, 2.0], [3.0, 1.0, 0.0]]), requires_grad=True)
    rows.max(axis=1).sum().backward()
    assert np.array_equal(rows.grad, [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])  # the NaN is the row's maximum


def test_cat_and_stack_promote_integers_to_the_float_dtype_and_backward_runs():
    x = ta.tensor(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    ids = ta.tensor(np.array([3, 4]))
    for joined in (ta.cat([x, ids]), ta.stack([x, ids])):
        assert joined.dtype == np.float32
        x.grad = None
        (joined * 2).sum().backward()
        assert np.array_equal(x.grad, [2.0, 2.0])
    assert ta.cat([ta.tensor([True]), ids]).dtype == np.int64


def test_cat_of_0d_tensors_says_so_and_names_stack():
    with pytest.raises(ta.ShapeError, match=r"zero-dimensional tensor \(at position 0\).*ta.stack"):
        ta.cat([ta.tensor(1.0), ta.tensor(2.0)])
    assert ta.stack([ta.tensor(1.0), ta.tensor(2.0)]).shape == (2,)


@pytest.mark.parametrize("index", [
    (0, slice(None), np.array([2, 0, 1])),
    (np.array([1, 0, 1]), slice(None), 3),
    (Ellipsis, 1, np.array([0, 4])),
    (None, 1, slice(None), np.array([3, 3]), slice(1, 4)),
    (1, np.array([[True, False, True, True], [False] * 4, [True] * 4])),
])
def test_integers_beside_arrays_index_in_pytorchs_order(index):
    """numpy put t[0, :, idx]'s picked axis first; PyTorch picks with the integer first."""
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(0).standard_normal((2, 3, 4, 5))
    ours, theirs = ta.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    picked = ours[index]
    expected = theirs[tuple(torch.tensor(p) if isinstance(p, np.ndarray) else p for p in index)]
    assert picked.shape == tuple(expected.shape)
    np.testing.assert_array_equal(picked.data, expected.detach().numpy())
    upstream = np.random.default_rng(1).standard_normal(picked.shape)
    picked.backward(upstream)
    expected.backward(torch.tensor(upstream))
    np.testing.assert_array_equal(ours.grad, theirs.grad.numpy())


def test_no_grad_and_fused_hold_per_thread():
    """Two threads with overlapping blocks used to leave is_fused() False for good."""
    entered, release = threading.Barrier(2), threading.Event()
    seen = {}

    def in_block(name, flag):
        with ta.no_grad(), ta.fused(flag):
            entered.wait()
            seen[name] = (ta.is_grad_enabled(), ta.is_fused())
            release.wait(5)

    threads = [threading.Thread(target=in_block, args=(name, flag)) for name, flag in (("a", False), ("b", True))]
    for thread in threads:
        thread.start()
    while len(seen) < 2:  # both threads are inside their blocks now
        threading.Event().wait(0.01)
    assert ta.is_grad_enabled() and ta.is_fused()  # this thread never entered a block
    release.set()
    for thread in threads:
        thread.join()
    assert seen == {"a": (False, False), "b": (False, True)}
    assert ta.is_grad_enabled() and ta.is_fused()


@pytest.mark.parametrize("call, error, words", [
    (lambda: ta.arange(0, 5, 0), ValueError, "step must be nonzero"),
    (lambda: ta.arange(5, 0, 1), ValueError, "inconsistent with step sign"),
    (lambda: ta.full((2, 3), "a"), TypeError, "fill_value must be a real number"),
    (lambda: ta.ones(2).masked_fill(np.array([True, False]), "a"), TypeError, "masked_fill: value must be a number"),
    (lambda: ta.ones(2, 3).sum(axis=1.5), TypeError, "sum: axis must be an int or a tuple of ints, got 1.5"),
])
def test_bad_arguments_get_errors_that_name_the_op(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_randint_takes_pytorchs_size_keyword():
    ta.manual_seed(0)
    draws = ta.randint(10, size=(3, 4))
    assert draws.shape == (3, 4) and draws.dtype == np.int64
    assert draws.data.min() >= 0 and draws.data.max() < 10


def test_f_cross_entropy_takes_pytorchs_layout_with_the_classes_on_axis_1():
    """(B, C, T) logits: tinyattn read the classes off the last axis, silently wrong when C == T."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    logits, target = rng.standard_normal((2, 4, 4)), np.array([[0, 3, 1, 2], [3, 3, -100, 0]])
    ours = ta.tensor(logits, requires_grad=True)
    theirs = torch.tensor(logits, requires_grad=True)
    loss = ta.nn.functional.cross_entropy(ours, target, label_smoothing=0.1)
    expected = torch.nn.functional.cross_entropy(theirs, torch.tensor(target), label_smoothing=0.1)
    loss.backward()
    expected.backward()
    np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-12)
    np.testing.assert_allclose(ours.grad, theirs.grad.numpy(), rtol=1e-10)
    # tinyattn's own ta.cross_entropy keeps the classes last
    np.testing.assert_allclose(ta.cross_entropy(ta.tensor(logits.transpose(0, 2, 1)), target, label_smoothing=0.1).item(),
                               expected.item(), rtol=1e-12)


def test_a_0d_tensor_beside_an_array_index_is_an_integer_and_tuples_pick_like_lists():
    torch = pytest.importorskip("torch")
    data = np.arange(36.0).reshape(4, 3, 3)
    ours, theirs = ta.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    picked = ours[ta.tensor(2), :, ta.tensor([0, 2, 1])]
    expected = theirs[torch.tensor(2), :, torch.tensor([0, 2, 1])]
    np.testing.assert_array_equal(picked.data, expected.detach().numpy())
    repeated, expected_repeated = ours[:, (1, 1, 2)], theirs[:, (1, 1, 2)]
    (picked.sum() + repeated.sum()).backward()
    (expected.sum() + expected_repeated.sum()).backward()
    np.testing.assert_array_equal(ours.grad, theirs.grad.numpy())


def test_saturated_probabilities_and_constant_entries_give_pytorchs_finite_gradients():
    torch = pytest.importorskip("torch")
    p_values, targets = np.array([0.0, 1.0, 0.3, 1.0]), np.array([0.0, 1.0, 1.0, 0.5])
    ours, theirs = ta.tensor(p_values, requires_grad=True), torch.tensor(p_values, requires_grad=True)
    ta.nn.functional.binary_cross_entropy(ours, ta.tensor(targets)).backward()
    torch.nn.functional.binary_cross_entropy(theirs, torch.tensor(targets)).backward()
    np.testing.assert_allclose(ours.grad, theirs.grad.numpy(), rtol=1e-8)  # PyTorch's 1e-12 guard is a float32
    flat = ta.tensor(np.full(4, 2.0), requires_grad=True)
    flat.std().backward()
    assert np.array_equal(flat.grad, np.zeros(4))  # PyTorch: 0 where the std is 0, not NaN


def test_cumsum_and_einsum_of_0d_tensors_stay_0d_through_backward():
    x = ta.tensor(np.array(2.0), requires_grad=True)
    y = x.cumsum(0)
    assert y.shape == ()
    (y * ta.einsum(",->", x, x)).backward()  # d(x * x^2)/dx = 3 x^2
    assert x.grad.shape == () and x.grad.item() == 12.0
