"""tinyattn.ops.kernels.sums: a sum over axes as a product with ones must equal numpy's sum, shape and all."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tinyattn as ta
from tinyattn.ops import fast_path
from tinyattn.ops.arrays import sum_over


@st.composite
def arrays_and_axes(draw):
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=0, max_size=4)))
    axes = tuple(sorted(draw(st.sets(st.integers(0, max(0, len(shape) - 1)), max_size=len(shape))))) if shape else ()
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int64, np.bool_]))
    order = draw(st.sampled_from(["C", "F"]))  # F: not C-contiguous, numpy's own path
    seed = draw(st.integers(0, 2 ** 16))
    data = np.random.default_rng(seed).standard_normal(shape) * 3
    array = np.asarray(data > 0 if dtype is np.bool_ else data.astype(dtype), order=order)
    return array, axes, draw(st.booleans())


@given(arrays_and_axes())
def test_sum_over_equals_numpy_sum_for_any_axes_dtype_and_layout(case):
    x, axes, keepdims = case
    got, want = sum_over(x, axes, keepdims), np.sum(x, axis=axes, keepdims=keepdims)
    assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype
    tolerance = 1e-5 if x.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * max(1, x.size))


@pytest.mark.parametrize("shape, axes", [((64, 12, 64), (2,)), ((64, 12, 128), (1,)), ((64, 12, 64), (0, 1)),
                                         ((768, 192), (0,)), ((3, 4, 5, 6), (1, 2))])
def test_each_blas_case_in_float64(shape, axes, rng):
    x = rng.standard_normal(shape)
    np.testing.assert_allclose(sum_over(x, axes), x.sum(axis=axes), rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(sum_over(x, axes, True), x.sum(axis=axes, keepdims=True), rtol=1e-13, atol=1e-12)


def test_sum_and_mean_of_a_tensor_match_numpy_and_their_gradients_check(rng):
    x = ta.tensor(rng.standard_normal((4, 6, 5)), requires_grad=True)
    np.testing.assert_allclose(x.sum(1).data, x.data.sum(1), rtol=1e-13)
    np.testing.assert_allclose(x.mean((1, 2), keepdims=True).data, x.data.mean((1, 2), keepdims=True), rtol=1e-13)
    assert x.float().mean(0).dtype == np.float32
    with pytest.raises(TypeError, match="mean: x is int64.*float"):  # as PyTorch, which has no integer mean
        ta.tensor(np.arange(6)).mean()
    assert ta.autograd.gradcheck(lambda t: t.sum(1) * t.mean(1) + t.sum((0, 1)), [x])


def test_mean_of_float16_accumulates_as_numpy_does_without_overflow():
    # numpy's mean adds float16 in float32: 10,000 tens sum past float16's largest (65504)
    x = np.full((2, 10000), 10, np.float16)
    for axes in [None, 1]:
        got, want = ta.tensor(x).mean(axes).data, np.mean(x, axis=axes)
        assert got.dtype == want.dtype == np.float16
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape, axes, kernel", [
    ((64, 192), (0,), False),       # a Linear's bias gradient: numpy's row adds won (bench_first_axis_sums.py)
    ((64, 12, 64), (0,), False),    # 64 rows: a tie at best
    ((128, 192), (0,), False),
    ((2048, 64), (0,), True),       # many rows: the product won 2.5-4x
    ((64, 12, 64), (0, 1), True),   # 768 rows
    ((64, 12, 64), (2,), True),     # a last or middle axis: always the product
    ((64, 12, 64), (1,), True),
    ((4, 30, 5), (0, 2), True),     # not the first axes (unbroadcast's kind): the product, whatever the rows
    ((64, 192), [0], False),        # axes as a list, as a caller may pass them
    ((64, 12, 64), None, False)])   # every axis: numpy's pairwise order
def test_the_door_sends_few_first_rows_to_numpy_and_the_rest_to_the_product(shape, axes, kernel):
    worth = fast_path.TABLE["sum_over"][2]
    for dtype in (np.float32, np.float64):
        assert worth(np.zeros(shape, dtype), axes) is kernel
