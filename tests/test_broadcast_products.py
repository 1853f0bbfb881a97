"""ops/kernels/broadcast_products.py: the one-pass broadcast products equal numpy's, bit for bit."""
import numpy as np
import pytest

from tinyattn.ops import arrays
from tinyattn.ops.kernels.broadcast_products import multiply

CASES = [((64, 12, 128), (64, 12, 1)), ((5, 1), (5, 7)), ((3, 4, 6), (6,)), ((6,), (2, 6)),
         ((2, 3, 4), (1, 3, 1)), ((4, 5), (4, 5)), ((2, 3, 4), (3, 1))]  # the last three: numpy's own path


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("a_shape, b_shape", CASES)
def test_multiply_gives_numpys_bits(a_shape, b_shape, dtype, rng):
    a, b = rng.standard_normal(a_shape).astype(dtype), rng.standard_normal(b_shape).astype(dtype)
    got = multiply(a, b)
    assert got.shape == (a * b).shape and got.dtype == dtype
    np.testing.assert_array_equal(got, a * b)


def test_mixed_dtypes_and_non_contiguous_arrays_take_numpys_path(rng):
    x, s = rng.standard_normal((4, 6)), rng.standard_normal((4, 1)).astype(np.float32)
    assert arrays.multiply(x, s).dtype == (x * s).dtype == np.float64
    strided = rng.standard_normal((4, 12))[:, ::2]
    np.testing.assert_array_equal(arrays.multiply(strided, s), strided * s)


@pytest.mark.parametrize("shape", [(3, 0), (0, 4), (2, 0, 5)])
def test_empty_arrays_give_numpys_answers(shape):
    g = np.ones(shape, np.float32)
    np.testing.assert_array_equal(multiply(g, np.ones(shape[:-1] + (1,), np.float32)), g)
