"""ta.compile's fusion (compile/fuse.py): runs of element-wise calls as one generated Numba loop.

fuse="exact" (the default) must give eager's bits on every model and on awkward operands (special
values, broadcast, 0-d, zero-size, both float dtypes); fuse="all" is within 1e-6 relative in
float32 where it fuses tanh and exp; fusion must actually happen on the composed GRU model.
"""
import warnings

import numpy as np
import pytest

import tinyattn as ta
from tinyattn.compile.fuse import TOLERANCE
from tinyattn.compile.step import CompiledStep
from tests.test_compile import _same_training, _train, _translation_batch

SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3e38, -3e38, 1.0, -1.0, 0.5])


def _values(rng, shape, dtype):
    """Random normals at several scales, with signed zeros, infinities, NaN, huge and subnormal values."""
    x = np.asarray(rng.standard_normal(shape) * 10.0 ** rng.integers(-8, 9, shape))
    flat = x.reshape(-1)
    picks = rng.random(flat.size) < 0.1
    flat[picks] = rng.choice(SPECIAL, picks.sum())
    return np.asarray(x.astype(dtype))


def chain(a, b, c, m):
    """An element-wise run the capture sees as numpy calls: a*b + c (no FMA allowed), where, /, a
    constant that float32 rounds (0.1), a comparison, negation."""
    t = a * b + c
    u = np.where(m, t - 0.1 * a, -t) / (b + 2.0)
    return u, t > c


def transcendental(a, b, c, m):
    """Each output is a transcendental's own result on an exact argument: its error is the function's
    (an addition after it could cancel, and amplify any error relative to the sum)."""
    return np.tanh(a * b), np.exp(c - b * 0.25)


def _bits(x):
    return np.asarray(x).reshape(-1).view(np.uint8)


def _plans(step):
    return [plan for entry in step.entries.values() for plan in entry.plans]


def _replayed(fn, make, fuse, calls=4):
    """(eager results, compiled results) of `calls` calls on new random operands each time."""
    step = ta.compile(fn, fuse=fuse)
    eager, compiled = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for call in range(calls):
            operands = make(np.random.default_rng(call))
            eager.append(fn(*operands))
            compiled.append(step(*operands))
    assert sum(entry.replays for entry in step.entries.values()) == calls - 2
    return eager[2:], compiled[2:], step


LAYOUTS = {  # shapes of a, b, c, m: the result's shape is a's
    "same shape": ((5, 7), (5, 7), (5, 7), (5, 7)),
    "broadcast": ((3, 5, 7), (5, 1), (7,), (3, 1, 7)),
    "0-d": ((), (), (), ()),
    "zero-size": ((0, 7), (0, 7), (7,), (0, 7)),
}


def _make(shapes, dtype):
    def make(rng):
        a, b, c = (_values(rng, shape, dtype) for shape in shapes[:3])
        return a, b, c, np.asarray(rng.random(shapes[3]) < 0.5)
    return make


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_exact_fusion_gives_eager_bits(layout, dtype):
    with np.errstate(all="ignore"):
        eager, compiled, step = _replayed(chain, _make(LAYOUTS[layout], dtype), "exact")
    for x, y in zip(eager, compiled):
        for e, c in zip(x, y):
            assert e.dtype == c.dtype and e.shape == c.shape
            assert np.array_equal(_bits(e), _bits(c)), f"{layout} {dtype}: bits differ"
    (plan,) = _plans(step)
    assert plan.fused and all(run.exact for run in plan.fused)
    assert len(plan.code) < plan.captured


def _direct(step, operands):
    """Call the plan's one fused loop itself on `operands` (the step's inputs, in any layout)."""
    plan = _plans(step)[0]
    (ins,) = [ins for ins in plan.code if ins[0] == "host" and hasattr(ins[1], "py_func")]
    position = {reg: at for at, _, reg in plan.inputs}
    return ins[1](*[operands[position[arg.index]] for arg in ins[2]])


def test_exact_loop_over_many_values_and_strided_views():
    """The loop of a*b + c ... over 200k special and random values, then on Fortran-ordered and
    reversed, sliced views (the plan fuses contiguous operands only, but its loop takes any layout)."""
    make = _make(((400, 500), (400, 500), (400, 500), (400, 500)), np.float32)
    with np.errstate(all="ignore"):
        eager, compiled, step = _replayed(chain, make, "exact", calls=3)
        assert all(np.array_equal(_bits(e), _bits(c)) for e, c in zip(eager[0], compiled[0]))
        views = [x.T.copy().T for x in make(np.random.default_rng(9))]  # Fortran order
        views = [x[::-1] if k % 2 else x for k, x in enumerate(views)]
        expected = chain(*[np.ascontiguousarray(v) for v in views])
        got = _direct(step, views)
    assert np.array_equal(_bits(got[0]), _bits(expected[0]))
    assert np.array_equal(got[1], expected[1])


def gates(g, h):
    """Column slices of one contiguous array (a GRU's gates): the loop reads g at offsets."""
    return g[:, :7] * h + g[:, 7:14] / (g[:, 14:] - 3.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_slices_of_a_contiguous_array_are_read_through_it(dtype):
    def make(rng):
        return _values(rng, (5, 21), dtype), _values(rng, (5, 7), dtype)
    with np.errstate(all="ignore"):
        eager, compiled, step = _replayed(gates, make, "exact")
    assert all(np.array_equal(_bits(e), _bits(c)) for e, c in zip(eager, compiled))
    (run,) = _plans(step)[0].fused
    assert run.names.count("getitem") == 3 and run.exact


def test_transcendental_runs_within_tolerance_in_float32_and_only_under_all():
    """Normal results within 1e-6 relative (measured: 1.9e-7, ~3 ulp); subnormal ones (exp of a large
    negative number) within 1 ulp; infinities, NaN and zeros the same values (tanh(-0.0) may be +0.0)."""
    make = _make(((128, 400), (128, 400), (128, 400), (128, 400)), np.float32)
    tiny = np.finfo(np.float32).tiny
    with np.errstate(all="ignore"):
        eager, compiled, step = _replayed(transcendental, make, "all")
        for x, y in zip(eager, compiled):
            for e, c in zip(x, y):
                assert np.array_equal(e, c, equal_nan=True) or np.array_equal(np.isnan(e), np.isnan(c))
                assert np.array_equal(e[~np.isfinite(e)], c[~np.isfinite(e)], equal_nan=True)
                assert np.array_equal(e == 0, c == 0)
                normal = np.isfinite(e) & (np.abs(e) >= tiny)
                error = np.abs(c[normal].astype(np.float64) - e[normal]) / np.abs(e[normal])
                assert error.max() <= TOLERANCE, error.max()
                subnormal = np.isfinite(e) & (np.abs(e) < tiny) & (e != 0)
                assert np.all(np.abs(c[subnormal].astype(np.float64) - e[subnormal]) <= 2.0 ** -149)
        assert any(not run.exact for run in _plans(step)[0].fused)
        _, _, exact_step = _replayed(transcendental, make, "exact")
    assert all(run.exact for run in _plans(exact_step)[0].fused)


@pytest.mark.parametrize("fused", [True, False])
def test_gru_attention_model_is_fused_and_bit_identical(fused):
    def build():
        model = ta.models.Seq2Seq(11, 9, pad_id=0, bos_id=1, eos_id=2, embed_dim=8, hidden_size=12)
        return model, lambda m, s, l, t: m.loss(s, l, t)
    run = _same_training(build, _translation_batch, fused=fused)  # bit for bit against eager
    (plan,) = _plans(run)
    assert len(plan.code) < plan.captured and plan.fused
    text = run.explain()
    assert f"{plan.captured} array calls before fusion, {len(plan.code)} after" in text and "exact" in text


def test_fuse_all_trains_the_gru_model_within_tolerance(monkeypatch):
    def build():
        model = ta.models.Seq2Seq(11, 9, pad_id=0, bos_id=1, eos_id=2, embed_dim=8, hidden_size=12)
        return model, lambda m, s, l, t: m.loss(s, l, t)
    eager, _, _ = _train(build, _translation_batch, False, steps=4, fused=False)
    monkeypatch.setattr(ta, "compile", lambda fn: CompiledStep(fn, fuse="all"))
    compiled, _, run = _train(build, _translation_batch, True, steps=4, fused=False)
    assert any(not r.exact for r in _plans(run)[0].fused)
    for (la, ga, _), (lb, gb, _) in zip(eager, compiled):
        assert la == pytest.approx(lb, rel=1e-5)
        for x, y in zip(ga, gb):
            np.testing.assert_allclose(y, x, rtol=1e-4, atol=1e-6)


def test_fuse_false_and_a_bad_mode():
    with np.errstate(all="ignore"):
        _, _, step = _replayed(chain, _make(LAYOUTS["same shape"], np.float32), False, calls=3)
    (plan,) = _plans(step)
    assert not plan.fused and len(plan.code) == plan.captured
    with pytest.raises(ValueError, match="fuse is 'exact'"):
        ta.compile(chain, fuse="fast")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_float_argument_of_the_step_is_cast_as_numpy_casts_it(dtype):
    """A Python float passed to the step is an input of the plan: numpy casts it to the array's dtype
    at every call (NumPy 2), so a run that reads it is left to numpy rather than computed in float64."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((16, 16)).astype(dtype), rng.standard_normal((16, 16)).astype(dtype)

    def arithmetic(a, b, s):
        return (a * s + b) * s - a

    def comparison(a, b, s):
        return np.where(a > s, a, b) * 2.0
    for fn in (arithmetic, comparison):
        step = ta.compile(fn)
        for s in (0.3, 0.7, 0.1, 1.3, 0.1):
            np.testing.assert_array_equal(np.asarray(step(a, b, s)), fn(a, b, s))
    a01 = np.full(4, 0.1, dtype)  # 0.1 > 0.1 is False in numpy's cast; float64's 0.1 would differ in float32
    step = ta.compile(comparison)
    for s in (0.5, 0.25, 0.1, 0.1):
        np.testing.assert_array_equal(np.asarray(step(a01, a01 * 0, s)), comparison(a01, a01 * 0, s))
