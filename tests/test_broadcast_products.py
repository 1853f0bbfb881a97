"""ops/broadcast_products.py: the one-pass broadcast products and their sums equal numpy's."""
import numpy as np
import pytest

from tinyattn.ops import use_backend
from tinyattn.ops.broadcast_products import column_dots, multiply, row_dots

CASES = [((64, 12, 128), (64, 12, 1)), ((5, 1), (5, 7)), ((3, 4, 6), (6,)), ((6,), (2, 6)),
         ((2, 3, 4), (1, 3, 1)), ((4, 5), (4, 5)), ((2, 3, 4), (3, 1))]  # the last three: numpy's own path


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("a_shape, b_shape", CASES)
def test_multiply_gives_numpys_bits(a_shape, b_shape, dtype, rng):
    a, b = rng.standard_normal(a_shape).astype(dtype), rng.standard_normal(b_shape).astype(dtype)
    got = multiply(a, b)
    assert got.shape == (a * b).shape and got.dtype == dtype
    np.testing.assert_array_equal(got, a * b)


@pytest.mark.parametrize("dtype, tolerance", [(np.float32, 1e-5), (np.float64, 1e-13)])
def test_row_and_column_dots_equal_numpys_sums(dtype, tolerance, rng):
    g, x = rng.standard_normal((2, 3, 33)).astype(dtype), rng.standard_normal((2, 3, 33)).astype(dtype)
    np.testing.assert_allclose(row_dots(g, x), (g * x).sum(-1, keepdims=True), rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(column_dots(g, x), (g * x).sum((0, 1)), rtol=tolerance, atol=tolerance)
    with use_backend("numpy"):  # the references give the same
        np.testing.assert_allclose(row_dots(g, x), (g * x).sum(-1, keepdims=True), rtol=tolerance)


def test_mixed_dtypes_and_non_contiguous_arrays_take_numpys_path(rng):
    x, s = rng.standard_normal((4, 6)), rng.standard_normal((4, 1)).astype(np.float32)
    assert multiply(x, s).dtype == (x * s).dtype == np.float64
    strided = rng.standard_normal((4, 12))[:, ::2]
    np.testing.assert_array_equal(multiply(strided, s), strided * s)
    np.testing.assert_allclose(column_dots(strided, strided), (strided * strided).sum(0))


@pytest.mark.parametrize("shape", [(3, 0), (0, 4), (2, 0, 5)])
def test_empty_arrays_give_numpys_answers(shape):
    g = np.ones(shape, np.float32)
    np.testing.assert_array_equal(row_dots(g, g), (g * g).sum(-1, keepdims=True))
    np.testing.assert_array_equal(column_dots(g, g), (g * g).sum(axis=tuple(range(g.ndim - 1))))
    np.testing.assert_array_equal(multiply(g, np.ones(shape[:-1] + (1,), np.float32)), g)
