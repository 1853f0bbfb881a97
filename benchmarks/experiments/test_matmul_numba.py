"""The experimental Numba matmul kernel (matmul_numba.py beside this file) against numpy's.

Not part of the suite (it tests no code of the package): run it with
    .venv/bin/python -m pytest -q benchmarks/experiments/test_matmul_numba.py
"""
import os
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.dirname(__file__))
import matmul_numba as mm  # noqa: E402

# Same examples on every run; no deadline, because the first call may JIT-compile or load.
SETTINGS = settings(deadline=None, derandomize=True, max_examples=40)
DTYPES = [np.float32, np.float64]
IMPLEMENTATIONS = {"matmul_numba": mm.matmul_numba}


def assert_matches_reference(c, a, b):
    """|C - C_ref| <= 8 * eps * k * (|A| @ |B|) + tiny: the standard error bound of a dot
    product of length k, with room for a different summation order and FMA rounding."""
    ref = mm.matmul_reference(a, b)
    assert c.shape == ref.shape and c.dtype == a.dtype
    assert c.flags.c_contiguous
    eps = np.finfo(a.dtype).eps
    k = a.shape[-1]
    bound = 8 * eps * max(k, 1) * np.matmul(np.abs(a).astype(np.float64), np.abs(b))
    err = np.abs(c.astype(np.float64) - ref)
    assert np.all(err <= bound + np.finfo(a.dtype).tiny), f"max error {err.max()}"


def random(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


sizes = st.integers(1, 65)
batch_dims = st.lists(st.integers(1, 3), min_size=0, max_size=2)


@st.composite
def operand_shapes(draw):
    """Two shapes (..., n, k), (..., k, m) whose batch dims broadcast, often with 1s."""
    n, k, m = draw(sizes), draw(sizes), draw(sizes)
    batch = draw(batch_dims)
    a_batch = [d if draw(st.booleans()) else 1 for d in batch]
    b_batch = [d if draw(st.booleans()) else 1 for d in batch]
    # Drop leading batch axes from one side sometimes: (5, 6) @ (2, 6, 7).
    a_batch = a_batch[draw(st.integers(0, len(a_batch))):]
    b_batch = b_batch[draw(st.integers(0, len(b_batch))):]
    return tuple(a_batch) + (n, k), tuple(b_batch) + (k, m)


def make_layout(rng, shape, dtype, layout):
    """An array of `shape` stored as C order, a transposed view, or a strided slice."""
    if layout == "contiguous":
        return random(rng, shape, dtype)
    if layout == "transposed":  # what backward makes: b.swapaxes(-1, -2) of a stored array
        return random(rng, shape[:-2] + shape[-1:] + shape[-2:-1], dtype).swapaxes(-1, -2)
    big = random(rng, tuple(2 * d for d in shape), dtype)  # every other element on each axis
    return big[tuple(slice(None, None, 2) for _ in shape)]


layouts = st.sampled_from(["contiguous", "transposed", "strided"])


@pytest.mark.parametrize("name", IMPLEMENTATIONS)
@pytest.mark.parametrize("dtype", DTYPES)
@SETTINGS
@given(shapes=operand_shapes(), a_layout=layouts, b_layout=layouts, seed=st.integers(0, 2**16))
def test_matches_reference(name, dtype, shapes, a_layout, b_layout, seed):
    rng = np.random.default_rng(seed)
    a = make_layout(rng, shapes[0], dtype, a_layout)
    b = make_layout(rng, shapes[1], dtype, b_layout)
    a_before, b_before = a.copy(), b.copy()
    c = IMPLEMENTATIONS[name](a, b)
    assert_matches_reference(c, a, b)
    np.testing.assert_array_equal(a, a_before)  # inputs are not modified
    np.testing.assert_array_equal(b, b_before)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "a_shape, b_shape",
    [
        ((64, 12, 64), (64, 64, 12)),  # batched attention-sized products
        ((4, 1, 5, 6), (3, 6, 7)),  # broadcast on both sides
        ((5, 6), (2, 6, 7)),  # 2-D left operand against a batch
        ((1, 1), (1, 1)),
        ((6, 8), (8, 8)),  # exactly one micro-tile
        ((7, 9), (9, 17)),  # one past a tile edge in every direction
        ((130, 70), (70, 100)),  # several tiles, with remainders
    ],
)
def test_named_shapes(dtype, a_shape, b_shape):
    rng = np.random.default_rng(0)
    a, b = random(rng, a_shape, dtype), random(rng, b_shape, dtype)
    assert_matches_reference(mm.matmul_numba(a, b), a, b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_backward_layouts(dtype):
    """grad @ B.T and A.T @ grad, the two products of matmul's backward pass."""
    rng = np.random.default_rng(1)
    a, b = random(rng, (3, 20, 30), dtype), random(rng, (3, 30, 40), dtype)
    grad = random(rng, (3, 20, 40), dtype)
    assert_matches_reference(mm.matmul_numba(grad, b.swapaxes(-1, -2)), grad, b.swapaxes(-1, -2))
    assert_matches_reference(mm.matmul_numba(a.swapaxes(-1, -2), grad), a.swapaxes(-1, -2), grad)
    a2 = random(rng, (50, 33), dtype)
    assert_matches_reference(mm.matmul_numba(a2.T, a2), a2.T, a2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_empty_inner_dimension_gives_zeros(dtype):
    a, b = np.ones((4, 0), dtype), np.ones((0, 5), dtype)
    for f in IMPLEMENTATIONS.values():
        c = f(a, b)
        assert c.shape == (4, 5) and c.dtype == dtype
        np.testing.assert_array_equal(c, np.zeros((4, 5), dtype))
    assert mm.matmul_numba(np.ones((0, 3), dtype), np.ones((3, 2), dtype)).shape == (0, 2)


def test_exact_on_integers():
    """Small integers multiply exactly, so kernel and reference must agree bit for bit."""
    rng = np.random.default_rng(2)
    a = rng.integers(-4, 5, (2, 37, 29)).astype(np.float64)
    b = rng.integers(-4, 5, (2, 29, 23)).astype(np.float64)
    np.testing.assert_array_equal(mm.matmul_numba(a, b), a @ b)


def test_infinities_propagate():
    """No fastmath: inf and nan follow IEEE rules."""
    a = np.array([[np.inf, 1.0], [1.0, 2.0]])
    b = np.array([[1.0, 0.0], [1.0, 1.0]])
    with np.errstate(invalid="ignore"):
        expected = a @ b  # includes inf * 0 = nan
    np.testing.assert_array_equal(mm.matmul_numba(a, b), expected)


def test_rejects_vectors():
    with pytest.raises(ValueError):
        mm.matmul_numba(np.ones(3), np.ones((3, 2)))
