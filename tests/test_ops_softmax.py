"""Softmax / log-softmax kernels: each Numba kernel against its numpy reference, the
references against the math (rows sum to 1, finite differences), and the edge cases
(masks, fully masked rows, -inf, large values, non-contiguous inputs)."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tinyattn.ops import arrays, reference as R
from tinyattn.ops.kernels import softmax as K
from tinyattn.ops import use_backend

TOL = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-13)}
DTYPES = [np.float32, np.float64]


def close(a, b, dtype, scale=1.0):
    # `scale`: the size of the numbers that were summed. A backward entry y_i * (g_i - sum)
    # can cancel to almost nothing, so its error is relative to |g|, not to itself.
    tol = TOL[dtype]
    np.testing.assert_allclose(a, b, rtol=tol["rtol"], atol=tol["atol"] * max(scale, 1.0))


def check_out(out, x):
    assert out.dtype == x.dtype and out.shape == x.shape and out.flags.c_contiguous


@pytest.fixture(autouse=True)
def no_warnings():
    # Any RuntimeWarning (overflow, invalid value, divide by zero) is a test failure here.
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


shapes = st.tuples(
    st.lists(st.integers(1, 5), min_size=0, max_size=3),  # leading dims: ndim 1..4
    st.integers(1, 65),  # last axis, odd sizes included
).map(lambda t: tuple(t[0]) + (t[1],))


@settings(deadline=None, derandomize=True, max_examples=40)
@given(shape=shapes, dtype=st.sampled_from(DTYPES), scale=st.sampled_from([1.0, 30.0]),
       layout=st.sampled_from(["c", "strided", "transposed"]))
def test_numba_matches_reference(shape, dtype, scale, layout):
    rng = np.random.default_rng([*shape, len(layout)])

    def make():
        # a non-contiguous view with the requested shape, holding random values
        if layout == "strided":
            big = rng.standard_normal(shape[:-1] + (2 * shape[-1],)) * scale
            return big.astype(dtype)[..., ::2]
        if layout == "transposed":
            return (rng.standard_normal(shape[::-1]) * scale).astype(dtype).T
        return (rng.standard_normal(shape) * scale).astype(dtype)

    x, g = make(), make()
    if layout != "c" and len(shape) > 1 and min(shape) > 1:
        assert not x.flags.c_contiguous
    x_copy = x.copy()

    y = K.softmax(x)
    check_out(y, x)
    close(y, R.softmax(x), dtype)
    close(y.sum(-1), np.ones(shape[:-1]), dtype)
    gs = np.abs(g).max()
    close(K.softmax_backward(y, g), R.softmax_backward(y, g), dtype, gs)

    z = K.log_softmax(x)
    check_out(z, x)
    close(z, R.log_softmax(x), dtype)
    close(K.log_softmax_backward(z, g), R.log_softmax_backward(z, g), dtype,
          gs * shape[-1])
    np.testing.assert_array_equal(x, x_copy)  # inputs untouched


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mask_shape", [(4, 1, 1, 9), (1, 3, 5, 9), (4, 3, 5, 1), (9,),
                                        (5, 9), (4, 3, 5, 9), (1, 1, 1, 1)])
def test_masks_broadcast(dtype, mask_shape):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3, 5, 9)).astype(dtype)
    mask = rng.random(mask_shape) < 0.6
    mask[(0,) * (len(mask_shape) - 1)] = False  # at least one row fully masked
    y = K.softmax(x, mask)
    check_out(y, x)
    ref = R.softmax(x, mask)
    close(y, ref, dtype)
    keep = np.broadcast_to(mask, x.shape)
    assert np.all(y[~keep] == 0)  # excluded: exactly zero
    sums = y.sum(-1)
    any_kept = keep.any(-1)
    close(sums[any_kept], np.ones(any_kept.sum()), dtype)
    assert np.all(sums[~any_kept] == 0)
    assert not any_kept.all()  # the fully masked rows really are there


@pytest.mark.parametrize("f", [K.softmax, R.softmax])
@pytest.mark.parametrize("dtype", DTYPES)
def test_edge_rows(f, dtype):
    inf = np.inf
    x = np.array([[1000.0, -1000.0, 999.0, 0.0],  # would overflow a naive exp
                  [-inf, 1.0, -inf, 2.0],  # -inf entries get 0
                  [-inf, -inf, -inf, -inf],  # all -inf, no mask: zeros by convention
                  [5.0, 6.0, 7.0, 8.0],  # fully masked below
                  [-1000.0, -1000.0, -1001.0, -inf]], dtype)
    mask = np.array([[True] * 4] * 3 + [[False] * 4, [True, True, True, False]])
    y = f(x, mask)
    assert np.all(np.isfinite(y))
    e = np.exp(np.array([0.0, -1.0]))
    close(y[0], [1 / (1 + np.exp(-1)), 0, np.exp(-1) / (1 + np.exp(-1)), 0], dtype)
    close(y[1], [0, e[1] / e.sum(), 0, e[0] / e.sum()], dtype)
    assert np.all(y[2] == 0) and np.all(y[3] == 0)
    close(y[4], [e[0] / (2 * e[0] + e[1]), e[0] / (2 * e[0] + e[1]), e[1] / (2 * e[0] + e[1]), 0],
          dtype)
    # the same rows through log-softmax (no mask): -inf exactly where x is -inf (log of the
    # all-zero softmax row included), finite elsewhere even where softmax underflows to 0
    lf = K.log_softmax if f is K.softmax else R.log_softmax
    z = lf(x)
    y0 = f(x)
    np.testing.assert_array_equal(np.isneginf(z), np.isneginf(x))
    close(z[0], [0, -2000, -1, -1000] - np.log1p(np.exp(-1)), dtype)
    close(np.exp(z), y0, dtype)
    # backward through a fully masked row stays zero, not NaN
    g = np.ones_like(x)
    bf = K.softmax_backward if f is K.softmax else R.softmax_backward
    dx = bf(y, g)
    assert np.all(np.isfinite(dx)) and np.all(dx[3] == 0)


def _numeric_vjp(fwd, x, g, h=1e-6):
    """d/dx of sum(g * fwd(x)) by central differences, one element at a time."""
    num = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += h
        xm[i] -= h
        num[i] = (np.sum(g * fwd(xp)) - np.sum(g * fwd(xm))) / (2 * h)
    return num


@pytest.mark.parametrize("which", ["softmax", "log_softmax"])
@pytest.mark.parametrize("impl", ["numba", "reference"])
def test_backward_finite_differences(which, impl):
    # d/dx of L(x) = sum(g * f(x)) must equal backward(f(x), g), checked by central differences
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 7))
    g = rng.standard_normal((3, 7))
    module = K if impl == "numba" else R
    fwd, bwd = getattr(module, which), getattr(module, f"{which}_backward")
    dx = bwd(fwd(x), g)
    np.testing.assert_allclose(dx, _numeric_vjp(fwd, x, g), rtol=1e-6, atol=1e-8)


def test_masked_backward_finite_differences():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 6))
    mask = np.array([True, False, True, True, False, True])
    g = rng.standard_normal((2, 6))
    dx = K.softmax_backward(K.softmax(x, mask), g)
    np.testing.assert_allclose(dx, _numeric_vjp(lambda z: K.softmax(z, mask), x, g), rtol=1e-6, atol=1e-8)
    assert np.all(dx[:, ~mask] == 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dispatch_default_is_numba_and_matches(dtype):
    x = np.random.default_rng(4).standard_normal((2, 3, 17)).astype(dtype)
    y = arrays.softmax(x)
    check_out(y, x)
    close(y, R.softmax(x), dtype)
    close(arrays.log_softmax(x), R.log_softmax(x), dtype)
    g = np.ones_like(x)
    close(arrays.softmax_backward(y, g), R.softmax_backward(y, g), dtype)
    z = arrays.log_softmax(x)
    close(arrays.log_softmax_backward(z, g), R.log_softmax_backward(z, g), dtype)


def test_zero_size_and_1d():
    for shape in [(0, 5), (3, 0), (7,)]:
        x = np.random.default_rng(6).standard_normal(shape)
        y = K.softmax(x)
        assert y.shape == shape
        if x.size:
            close(y, R.softmax(x), np.float64)


@pytest.mark.parametrize("dtype", DTYPES)
def test_large_input_split_over_threads(dtype, monkeypatch):
    # big enough (> _SPLIT_MIN entries, lowered here to keep the test small) that the wrappers
    # run two halves of the rows on two threads: the second half must find its own mask rows
    monkeypatch.setattr(K, "_SPLIT_MIN", 1 << 15)
    monkeypatch.setattr(K, "_THREADS", 2)
    assert 8 * 4 * 33 * 40 >= K._SPLIT_MIN
    rng = np.random.default_rng(7)
    x = rng.standard_normal((8, 4, 33, 40)).astype(dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    for mshape in [(8, 1, 1, 40), (1, 4, 33, 1), (33, 40)]:
        mask = rng.random(mshape) < 0.7
        y = K.softmax(x, mask)
        close(y, R.softmax(x, mask), dtype)
        close(K.softmax_backward(y, g), R.softmax_backward(y, g), dtype, 5)
    z = K.log_softmax(x)
    close(z, R.log_softmax(x), dtype)
    close(K.log_softmax_backward(z, g), R.log_softmax_backward(z, g), dtype, 200)


@pytest.mark.parametrize("dtype, gap", [(np.float32, -100.0), (np.float64, -720.0)])
def test_a_weight_below_the_smallest_normal_number_is_zero(dtype, gap):
    """exp(gap) is subnormal: the kernel writes 0 (making subnormals made masked rows 2.5x slower)."""
    y = K.softmax(np.array([[0.0, gap, -np.inf]], dtype), np.array([True, True, False]))
    assert y.tolist() == [[1.0, 0.0, 0.0]]
    assert 0 < R.softmax(np.array([[0.0, gap]], dtype))[0, 1] < np.finfo(dtype).tiny  # numpy keeps the subnormal


def test_one_allowed_thread_keeps_softmax_on_one(monkeypatch):
    """NUMBA_NUM_THREADS=1 (a one-thread benchmark) must not put half the rows on a second thread."""
    class NoPool:
        def submit(self, *args):
            raise AssertionError("softmax used a second thread")

    monkeypatch.setattr(K, "_SPLIT_MIN", 1 << 10)
    monkeypatch.setattr(K, "_POOL", NoPool())
    monkeypatch.setattr(K, "_THREADS", 1)
    x = np.random.default_rng(8).standard_normal((64, 64))
    y = K.softmax(x, np.tril(np.ones((64, 64), bool)))
    K.softmax_backward(y, x)
    with pytest.raises(AssertionError, match="second thread"):
        monkeypatch.setattr(K, "_THREADS", 2)
        K.softmax(x)


# ----------------------------------------------------------------------------- fast_exp
def _ulps(a, b):
    it = np.int32 if a.dtype == np.float32 else np.int64
    return np.abs(a.view(it).astype(np.int64) - b.view(it).astype(np.int64))


@pytest.mark.parametrize("dtype, lo, hi", [(np.float32, -104.0, 89.0), (np.float64, -746.0, 710.0)])
def test_fast_exp_accuracy(dtype, lo, hi):
    # fast_exp (the vectorizable exp every kernel uses) against np.exp: a dense sweep of the
    # softmax range [lo, 0] (subnormal results and the underflow to 0 included), the positive
    # range up to overflow, and the special values
    import numba
    from tinyattn.ops.kernels.fast_exp import fast_exp

    @numba.njit
    def exp_all(a):
        out = np.empty_like(a)
        for j in range(a.shape[0]):
            out[j] = fast_exp(a[j])
        return out

    f = np.finfo(dtype)
    special = [-np.inf, np.inf, np.nan, 0.0, -0.0, f.tiny, -f.tiny, f.max, -f.max, lo, hi,
               np.log(f.max), np.log(f.tiny), np.log(f.smallest_subnormal)]
    x = np.concatenate([np.linspace(lo, 0, 1_000_001), np.linspace(0, hi, 100_001),
                        special]).astype(dtype)
    y = exp_all(x)
    with np.errstate(over="ignore"):
        # float32: the float64 exp rounded once, i.e. (almost always) the correctly rounded
        # result; numpy's own float32 exp is up to 2 ulp from it
        ref = np.exp(x.astype(np.float64)).astype(dtype)
    assert y.dtype == dtype
    np.testing.assert_array_equal(np.isnan(y), np.isnan(x))
    ok = ~np.isnan(x)
    np.testing.assert_array_equal(np.isinf(y[ok]), np.isinf(ref[ok]))  # overflow at the same place
    assert np.all(y[x == -np.inf] == 0) and np.all(y[x == 0] == 1)
    fin = ok & np.isfinite(ref)
    assert _ulps(y[fin], ref[fin]).max() <= 1  # measured: 1 ulp, in both dtypes
    assert _ulps(y[fin], ref[fin]).mean() < 0.15  # measured: 0.08 (float32), 0.09 (float64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exp_nonpositive_is_fast_exp_on_its_range(dtype):
    # the softmax forward's exp (fast_exp without its edges): the same bits as fast_exp on
    # [ln(smallest normal), 0], and NaN stays NaN
    import numba
    from tinyattn.ops.kernels.fast_exp import exp_nonpositive, fast_exp

    @numba.njit
    def both(a):
        out, edgeless = np.empty_like(a), np.empty_like(a)
        for j in range(a.shape[0]):
            out[j], edgeless[j] = fast_exp(a[j]), exp_nonpositive(a[j])
        return out, edgeless

    lowest = np.log(np.finfo(dtype).tiny)
    x = np.concatenate([np.linspace(lowest, 0, 1_000_001), [lowest, -0.0, 0.0, np.nan]]).astype(dtype)
    want, got = both(x)
    np.testing.assert_array_equal(got, want)
    assert np.isnan(got[-1]) and got.dtype == dtype


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 7, 8, 9, 16, 33, 300])
def test_row_lengths_around_the_unroll(dtype, n):
    # the reductions go 8 entries at a time plus a tail: the max and the sums must see the
    # tail too, wherever the largest entry sits; masked and unmasked rows
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n + 2, n)).astype(dtype)
    x[np.arange(n), np.arange(n)] = 50.0  # row i has its max at column i (last rows: none)
    mask = rng.random((n + 2, n)) < 0.7
    g = rng.standard_normal(x.shape).astype(dtype)
    for m in [None, mask]:
        y = K.softmax(x, m)
        close(y, R.softmax(x, m), dtype)
        close(K.softmax_backward(y, g), R.softmax_backward(y, g), dtype, 5)
    z = K.log_softmax(x)
    close(z, R.log_softmax(x), dtype, 50)
    close(K.log_softmax_backward(z, g), R.log_softmax_backward(z, g), dtype, 5 * n)


@pytest.mark.parametrize("dtype", DTYPES)
def test_masked_entries_may_hold_anything(dtype):
    # excluded entries are never used: inf, -inf, NaN or huge values there change nothing
    x = np.array([[1.0, np.inf, 2.0, np.nan, -np.inf, 1e30, 3.0, -1e30, 0.5]], dtype)
    mask = np.array([True, False, True, False, False, False, True, False, True])
    y = K.softmax(x, mask)
    clean = np.where(mask, x, 0).astype(dtype)
    close(y, R.softmax(clean, mask), dtype)
    assert np.all(y[0, ~mask] == 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_nan_row_stays_nan_in_kernel_and_reference(dtype):
    x = np.array([[np.nan, np.nan, np.nan], [1.0, np.nan, 0.0], [1.0, 2.0, 3.0]], dtype)
    for fn in (K.softmax, R.softmax, K.log_softmax, R.log_softmax):
        with np.errstate(invalid="ignore"):
            y = fn(x)
        assert np.isnan(y[0]).all() and np.isnan(y[1]).all() and np.isfinite(y[2]).all(), fn.__name__
