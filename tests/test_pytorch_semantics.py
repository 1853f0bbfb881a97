"""Answers that used to differ from PyTorch's without a word: 0-d gradients, NaN in relu, max,
abs and clamp, dtype promotion in cat/stack, PyTorch's index order, grad mode per thread (and its
decorators), Python's operators and conversions on tensors (&, |, ^, in, int(), bool()), PyTorch's
keywords, reductions over an empty dim list, and clear errors where a raw numpy one came out."""
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


# --- @ta.no_grad / @ta.enable_grad as decorators keep no state between calls ---
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


# --- Python's operators and conversions, PyTorch's keywords, NaN and empty dim lists at the ops' entry points ---
@pytest.mark.parametrize("op", ["and", "or", "xor"])
def test_bool_mask_bitwise_operators(op):
    """mask_a & mask_b (PyTorch's everyday way to combine masks; ~mask is supported) fails with
    Python's bare "unsupported operand type(s) for &: 'Tensor' and 'Tensor'"."""
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    ta_a, ta_b = ta.tensor(a), ta.tensor(b)
    got = {"and": lambda: ta_a & ta_b, "or": lambda: ta_a | ta_b, "xor": lambda: ta_a ^ ta_b}[op]()
    want = {"and": a & b, "or": a | b, "xor": a ^ b}[op]
    np.testing.assert_array_equal(np.asarray(got.data), want)


def test_contains_on_2d_tensor():
    """`3.0 in x` for a 2-D tensor (PyTorch: True) raises numpy's bare
    "The truth value of an array with more than one element is ambiguous"."""
    x = ta.tensor(np.arange(6.0).reshape(2, 3))
    assert (3.0 in x) is True
    assert (7.0 in x) is False


def test_int_of_a_one_element_tensor():
    """int(logits.argmax()) / int(x[0, 0]) (PyTorch: a Python int) raises Python's bare
    "int() argument must be a string, a bytes-like object or a real number, not 'Tensor'";
    float(x) works, int(x) and using a 0-d int tensor as an index (range(n), list[i]) do not."""
    x = ta.tensor(np.array([[1.5, 2.0], [3.0, 4.0]]))
    assert int(x.argmax()) == 3
    assert int(x[0, 0]) == 1
    assert list(range(5))[ta.tensor(np.array(2))] == 2


def test_sign_of_a_bool_tensor():
    """(mask).sign(): PyTorch returns the bool tensor; tinyattn raises numpy's raw
    "UFuncTypeError: ufunc 'sign' did not contain a loop with signature matching types"."""
    m = ta.tensor(np.array([True, False]))
    np.testing.assert_array_equal(np.asarray(m.sign().data), [True, False])


def test_bool_of_a_many_element_tensor_names_tinyattn():
    """bool(x > 0) on many elements: numpy's raw "The truth value of an array with more than one
    element is ambiguous. Use a.any() or a.all()" (a.any() is numpy's advice, not a tensor's)."""
    x = ta.tensor(np.array([1.0, -1.0]))
    with pytest.raises(Exception) as info:
        bool(x > 0)
    assert "truth value of an array" not in str(info.value)


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_dim_with_keepdims(op):
    """x.max(dim=1, keepdims=True) and x.max(1, keepdims=True) (PyTorch: (values, indices) of
    shape (3, 1)) raise "max: got both axis=None and dim=1; they are one argument" although only
    one axis was given; the other ops take dim= with keepdims= (docs: both spellings everywhere)."""
    torch = pytest.importorskip("torch")
    a = np.random.RandomState(0).randn(3, 4)
    want = getattr(torch.tensor(a), op)(dim=1, keepdims=True)
    for call in (lambda x: getattr(x, op)(dim=1, keepdims=True),
                 lambda x: getattr(x, op)(1, keepdims=True)):
        got = call(ta.tensor(a))
        np.testing.assert_array_equal(got[0].data, want.values.numpy())
        np.testing.assert_array_equal(np.asarray(got[1].data), want.indices.numpy())


def test_transpose_and_split_take_pytorch_keywords():
    """x.transpose(dim0=0, dim1=1) and x.split(split_size=2, dim=1) are PyTorch's keywords; tinyattn
    raises Python's bare "got an unexpected keyword argument 'dim0'"."""
    x = ta.tensor(np.arange(12.0).reshape(3, 4))
    assert x.transpose(dim0=0, dim1=1).shape == (4, 3)
    assert [p.shape for p in x.split(split_size=2, dim=1)] == [(3, 2), (3, 2)]


def test_abs_gradient_at_nan():
    """d|x|/dx at x = NaN: PyTorch 0 (its sgn), tinyattn NaN, silently (not among the documented
    edge values; found by a random differential run, 1 of 1500 draws that had a NaN)."""
    torch = pytest.importorskip("torch")
    a = np.array([np.nan, -2.0, 3.0])
    x = ta.tensor(a, requires_grad=True)
    x.abs().sum().backward()
    t = torch.tensor(a, requires_grad=True)
    t.abs().sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), t.grad.numpy())


def test_clamp_with_a_nan_bound():
    """x.clamp(0.0, nan): PyTorch propagates the NaN bound (all NaN); tinyattn ignores it and
    clamps below at 0 only, silently."""
    torch = pytest.importorskip("torch")
    a = np.array([-1.0, 0.5, 3.0])
    got = ta.tensor(a).clamp(0.0, float("nan")).data
    want = torch.tensor(a).clamp(0.0, float("nan")).numpy()
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", ["sum", "mean", "std", "var", "norm"])
@pytest.mark.parametrize("dims", [(), []])
def test_reduction_over_an_empty_dim_list(op, dims):
    """x.sum(dim=()) / x.mean(dim=[]): PyTorch reduces over every dim (a 0-d result); tinyattn
    reduces over none and returns x's shape (numpy's reading), silently. It happens with
    generic code such as x.sum(dim=tuple(range(1, x.ndim))) on a 1-D x."""
    torch = pytest.importorskip("torch")
    a = np.arange(6.0).reshape(2, 3)
    want = getattr(torch.tensor(a), op)(dim=dims).numpy()
    got = getattr(ta.tensor(a), op)(dim=dims).data
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want)
