"""Tensor creation, dtype rules and the errors a learner meets first."""
import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F


def test_python_lists_give_float32_and_int64_ndarrays_keep_their_dtype():
    assert ta.tensor([1.0, 2.0]).dtype == np.float32
    assert ta.tensor([[1, 2]]).dtype == np.int64
    assert ta.tensor([True, False]).dtype == np.bool_
    assert ta.tensor(np.ones(3, np.float64)).dtype == np.float64
    assert ta.tensor(np.ones(3, np.int32)).dtype == np.int32
    assert ta.Tensor([1.5]).dtype == np.float32


def test_tensor_copies_its_data():
    array = np.zeros(3)
    t = ta.tensor(array)
    array[0] = 5
    assert t.data[0] == 0


@pytest.mark.parametrize("scalar", [2.5, 2, np.float64(2.5), np.int64(3), np.float32(0.5), np.array(2.0)])
def test_scalars_never_change_a_tensors_dtype(scalar):
    x = ta.tensor([1.0, 2.0])
    for y in (x * scalar, scalar * x, x + scalar, scalar - x, x / scalar, scalar / x, x ** 2.0):
        assert y.dtype == np.float32
    assert (x * np.sqrt(8.0)).dtype == np.float32


def test_float32_and_float64_in_one_op_is_a_type_error_naming_both():
    a, b = ta.ones(2), ta.ones(2, dtype=np.float64)
    with pytest.raises(TypeError, match="float32 and float64"):
        a + b
    with pytest.raises(TypeError, match="float64 and float32"):
        b @ a
    assert (a.double() + b).dtype == np.float64


def test_int_tensors_join_float_tensors_in_the_floats_dtype():
    assert (ta.ones(3) * ta.tensor([1, 2, 3])).dtype == np.float32


def test_requires_grad_on_integers_or_bools_is_a_type_error():
    with pytest.raises(TypeError, match="floating"):
        ta.tensor([1, 2], requires_grad=True)
    with pytest.raises(TypeError, match="floating"):
        ta.tensor(np.array([True]), requires_grad=True)


def test_gradient_has_the_tensors_shape_and_dtype():
    x = ta.tensor(np.ones((2, 3), np.float32), requires_grad=True)
    (x * ta.tensor(np.full((4, 2, 3), 2.0, np.float32))).sum().backward()
    assert x.grad.shape == (2, 3) and x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad, np.full((2, 3), 8.0))


def test_cast_gradient_returns_in_the_source_dtype():
    x = ta.tensor([1.0, 2.0], requires_grad=True)
    (x.double() * 3.0).sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad, [3.0, 3.0])


@pytest.mark.parametrize("expr, message", [
    (lambda: ta.ones(2, 3) @ ta.ones(4, 5), r"matmul: \(2, 3\) @ \(4, 5\): inner sizes 3 and 4 differ"),
    (lambda: ta.ones(2, 2, 3) @ ta.ones(5, 3, 4), r"matmul: .*batch dims \(2,\) and \(5,\) do not broadcast"),
    (lambda: ta.ones(2, 3) + ta.ones(4, 5), r"add: \(2, 3\) \+ \(4, 5\): shapes do not broadcast"),
    (lambda: ta.ones(2, 3) * ta.ones(2), r"mul: \(2, 3\) \* \(2,\)"),
    (lambda: ta.ones(2, 3).reshape(4, 2), r"reshape: cannot view \(2, 3\) \(6 elements\) as \(4, 2\)"),
    (lambda: ta.cat([ta.ones(2, 3), ta.ones(3, 3)], axis=1), r"cat: tensor 1 has shape \(3, 3\)"),
    (lambda: ta.ones(2, 3).softmax(-1, mask=np.ones((3, 2), bool)), r"softmax: mask \(3, 2\) does not broadcast"),
    (lambda: ta.ones(2, 3).masked_fill(np.ones(4, bool), 0.0), r"masked_fill: mask \(4,\)"),
])
def test_shape_errors_name_the_op_and_both_shapes(expr, message):
    with pytest.raises(ta.ShapeError, match=message):
        expr()


def test_shape_errors_are_raised_before_any_kernel_runs(monkeypatch):
    from tinyattn.ops import arrays

    def explode(*args):
        raise AssertionError("kernel ran")

    monkeypatch.setattr(arrays, "matmul", explode)
    with pytest.raises(ta.ShapeError):
        ta.ones(2, 3) @ ta.ones(4, 5)


def test_cross_entropy_rejects_bad_targets_clearly():
    logits = ta.zeros(3, 4)
    with pytest.raises(IndexError, match=r"target 4 is not a class index in \[0, 4\)"):
        ta.cross_entropy(logits, np.array([0, 4, 1]))
    with pytest.raises(ta.ShapeError, match=r"targets of shape \(3,\)"):
        ta.cross_entropy(logits, np.array([0, 1]))
    with pytest.raises(TypeError, match="integer class indices"):
        ta.cross_entropy(logits, np.array([0.0, 1.0, 2.0]))


def test_cross_entropy_matches_the_definition_and_ignores_padding(rng):
    logits = rng.standard_normal((2, 3, 5))
    target = np.array([[1, 4, 0], [2, 0, 0]])
    loss = ta.cross_entropy(ta.tensor(logits), target, ignore_index=0)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    kept = target != 0
    expected = -np.mean(np.take_along_axis(log_probs, target[..., None], -1)[..., 0][kept])
    np.testing.assert_allclose(loss.item(), expected, rtol=1e-12)
    everything_ignored = ta.tensor(logits, requires_grad=True)
    loss = ta.cross_entropy(everything_ignored, np.zeros((2, 3), np.int64), ignore_index=0)
    loss.backward()
    assert loss.item() == 0 and not everything_ignored.grad.any()


def test_sigmoid_is_stable_at_plus_minus_1000():
    x = ta.tensor([-1000.0, 0.0, 1000.0], requires_grad=True)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        y = x.sigmoid()
        y.sum().backward()
    np.testing.assert_array_equal(y.data, [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(x.grad, [0.0, 0.25, 0.0])


def test_comparisons_give_bool_tensors_without_gradient():
    x = ta.tensor([1.0, -2.0], requires_grad=True)
    mask = x > 0
    assert mask.dtype == np.bool_ and not mask.requires_grad
    np.testing.assert_array_equal(mask.data, [True, False])


def test_pow_needs_a_number_or_tensor_exponent():
    with pytest.raises(TypeError, match="exponent must be a number or a tensor, got str"):
        ta.ones(2) ** "2"
    assert (ta.ones(2) ** ta.ones(2)).data.tolist() == [1.0, 1.0]  # a tensor exponent: since issue 28


def test_repr_shows_data_and_history():
    x = ta.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == "tensor([1., 2.], requires_grad=True)"
    assert "grad_fn=<Mul>" in repr(x * 2)


def test_manual_seed_repeats_draws():
    ta.manual_seed(3)
    first = ta.randn(4).data
    ta.manual_seed(3)
    np.testing.assert_array_equal(first, ta.randn(4).data)
    state = ta.get_rng_state()
    after = ta.randn(2).data
    ta.set_rng_state(state)
    np.testing.assert_array_equal(after, ta.randn(2).data)


@pytest.mark.parametrize("make", [
    lambda: ta.tensor([1, 2, 3]) * ta.ones(3),
    lambda: ta.ones(3) * ta.tensor([1, 2, 3]),
    lambda: ta.ones(3) + np.arange(3),
    lambda: np.arange(3) - ta.ones(3),
    lambda: np.ones((1, 3), np.int64) @ ta.ones(3, 1),
    lambda: ta.where(np.array([True, False, True]), ta.tensor([1, 2, 3]), ta.ones(3)),
    lambda: ta.tensor([1, 2]) * 2.5,
    lambda: 2.5 / ta.tensor([1, 2]),
    lambda: ta.tensor([1, 2]) / ta.tensor([2, 2]),
    lambda: ta.where(np.array([True]), 1.0, 0.0),
], ids=["int*float", "float*int", "float+int array", "int array-float", "int array@float", "where(int, float)",
        "int*2.5", "2.5/int", "int/int", "where(numbers)"])
def test_integers_meeting_floats_give_float32_in_either_order(make):
    assert make().dtype == np.float32


def test_integer_arithmetic_stays_integer():
    assert (ta.tensor([1, 2]) + 1).dtype == np.int64
    assert (ta.tensor([1, 2]) * ta.tensor([3, 4])).dtype == np.int64


def test_linear_refuses_an_input_of_another_dtype_clearly():
    import tinyattn.nn as nn

    with pytest.raises(TypeError, match="linear: input is int64, the weights float32"):
        nn.Linear(3, 2)(ta.tensor([[1, 2, 3]]))


def test_axis_errors_and_scalars():
    with pytest.raises(ValueError, match="names an axis twice"):
        ta.ones(2, 3).sum(axis=(0, 0))
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        ta.ones(2, 3).mean(axis=2)
    s = ta.tensor(np.array(3.0), requires_grad=True)
    s.sum(0).backward()
    assert s.grad == 1.0


def test_pow_zero_has_zero_gradient_even_at_zero():
    x = ta.tensor(np.array([0.0, 2.0]), requires_grad=True)
    (x ** 0).sum().backward()
    np.testing.assert_array_equal(x.grad, [0.0, 0.0])


def test_masked_fill_refuses_a_value_the_dtype_cannot_hold():
    with pytest.raises(TypeError, match="cannot put -inf into a int64 tensor"):
        ta.tensor([1, 2]).masked_fill(np.array([True, False]), float("-inf"))


def test_number_to_a_tensor_power_and_abs():
    x = ta.tensor(np.array([0.5, -1.0]), requires_grad=True)
    y = 2 ** x + abs(x)
    np.testing.assert_allclose(y.data, 2 ** x.data + np.abs(x.data))
    y.sum().backward()
    np.testing.assert_allclose(x.grad, np.log(2) * 2 ** x.data + np.sign(x.data))
    assert (2 ** ta.ones(2)).dtype == np.float32
    # PyTorch's values: a negative base to a fractional power is NaN; 0 to a negative one, inf
    np.testing.assert_array_equal(((-2) ** x).data, [np.nan, -0.5])
    np.testing.assert_array_equal((0 ** x).data, [0.0, np.inf])


# --- integers into float ops, NaN through relu, a number to a tensor power ---
@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "tanh", "sigmoid"])
def test_float_ops_on_integers_give_float32_as_pytorch(name):
    ints = ta.tensor([1, 2, 3])
    out = getattr(ints, name)()
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.data, getattr(ta.tensor([1.0, 2.0, 3.0]), name)().data, rtol=1e-6)
    assert getattr(ta.tensor([True, True]), name)().dtype == np.float32  # bool too (was float16)


@pytest.mark.parametrize("call, op", [
    (lambda x: F.gelu(x), "gelu"), (lambda x: F.gelu(x, approximate="tanh"), "gelu"), (lambda x: x.mean(), "mean"),
    (lambda x: nn.LayerNorm(2)(x), "LayerNorm"), (lambda x: F.dropout(x, 0.5), "dropout"),
    (lambda x: F.mse_loss(x, x), "mse_loss"), (lambda x: x.softmax(-1), "softmax"),
])
def test_ops_pytorch_refuses_on_integers_refuse_clearly(call, op):
    with pytest.raises(TypeError, match=rf"{op}: .* is int64, but {op} needs a floating tensor; convert it with .float\(\)"):
        call(ta.tensor([[1, 2], [3, -1]]))


def test_relu_keeps_nan_and_integers_as_pytorch():
    out = ta.tensor([np.nan, -1.0, 2.0]).relu()
    assert np.isnan(out.data[0]) and out.data[1] == 0 and out.data[2] == 2
    assert ta.tensor([1, -2]).relu().dtype == np.int64


def test_a_number_to_a_tensor_power():
    x = ta.tensor(np.array([0.0, 1.0, -1.0]), requires_grad=True)
    y = 0 ** x
    np.testing.assert_array_equal(y.data, [1.0, 0.0, np.inf])
    y.backward(np.ones(3))
    np.testing.assert_array_equal(x.grad, [0.0, 0.0, -np.inf])  # PyTorch's values
    assert (2 ** ta.tensor([1, 3])).dtype == np.int64 and (2 ** ta.tensor([1, 3])).data.tolist() == [2, 8]
