"""Findings of a fresh adversarial review (2026-11-27) at the ops' public entry points: each test
failed on the tree it reviewed (a silent difference from PyTorch, or Python's or numpy's raw words)."""
import numpy as np
import pytest

import tinyattn as ta


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

