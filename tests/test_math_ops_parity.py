"""Element-wise maths, rounding, activations, x ** tensor, lerp, std_mean, repeat_interleave and
cross_entropy's class weights and probability targets equal PyTorch's: outputs and gradients
(random upstream) in float64 and float32, on transposed (non-contiguous), broadcast, 0-d and
zero-size inputs, and at the kinks where PyTorch picks a slope; integer inputs keep PyTorch's dtypes
and bad arguments name the op and the fix."""
import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn.functional as F
from tinyattn.autograd.dtypes import ShapeError
from tinyattn.autograd.tensor import wrap

torch = pytest.importorskip("torch")
TF = torch.nn.functional

R = np.random.default_rng(28)
A = R.standard_normal((4, 3)).T                    # (3, 4), transposed: non-contiguous
POS = R.uniform(0.3, 2.5, (4, 3)).T                # (3, 4) positive, transposed
EMPTY = np.zeros((0, 3))
SCALAR = np.array(0.7)
COUNTS = np.array([2, 0, 1])
TARGET = np.array([0, 3, -100, 1, 3])
WEIGHT = np.array([0.5, 2.0, 1.0, 1.5])
LOGITS = R.standard_normal((4, 5)).T               # (5, 4), transposed
PROBS = R.dirichlet(np.ones(4), 5)



def _tw(z):
    """The class weights as a tinyattn tensor of the logits' dtype (and _pw: PyTorch's)."""
    return ta.tensor(WEIGHT, dtype=z.dtype)


def _pw(z):
    return torch.tensor(WEIGHT, dtype=z.dtype)


# element-wise ops: (name, tinyattn fn, torch fn, an input inside the op's domain, of shape (3, 4))
UNARY = [
    ("sin", ta.sin, torch.sin, A * 3), ("cos", lambda x: x.cos(), torch.cos, A * 3),
    ("tan", ta.tan, torch.tan, A * 0.5), ("sinh", lambda x: x.sinh(), torch.sinh, A * 2),
    ("cosh", ta.cosh, torch.cosh, A * 2), ("asinh", lambda x: x.asinh(), torch.asinh, A * 4),
    ("acosh", ta.acosh, torch.acosh, POS + 1.0), ("atanh", lambda x: x.atanh(), torch.atanh, np.tanh(A)),
    ("log2", ta.log2, torch.log2, POS), ("exp2", lambda x: x.exp2(), torch.exp2, A * 3),
    ("rsqrt", ta.rsqrt, torch.rsqrt, POS), ("rsqrt method", lambda x: x.rsqrt(), lambda x: x.rsqrt(), POS),
    ("floor", ta.floor, torch.floor, A * 3), ("ceil", lambda x: x.ceil(), torch.ceil, A * 3),
    ("trunc", ta.trunc, torch.trunc, A * 3), ("sign", lambda x: x.sign(), torch.sign, A),
    ("round", ta.round, torch.round, A * 3),
    ("mish", F.mish, TF.mish, A * 4), ("softsign", F.softsign, TF.softsign, A * 3),
    ("hardswish", F.hardswish, TF.hardswish, A * 4), ("relu6", F.relu6, TF.relu6, A * 5 + 2),
    ("hardtanh", F.hardtanh, TF.hardtanh, A * 2), ("celu", F.celu, torch.celu, A * 2),
]
CASES = []
for name, ours, theirs, inside in UNARY:  # each op on a transposed input, a 0-d one and an empty one
    CASES += [(name, ours, theirs, [inside]), (f"{name} 0-d", ours, theirs, [np.array(inside[1, 2])]),
              (f"{name} empty", ours, theirs, [EMPTY + inside.flat[0]])]

HALVES = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.25, 0.0, -0.0])
CASES += [
    # PyTorch's choice at the kinks and the steps (and round's halves to even)
    ("round halves to even", ta.round, torch.round, [HALVES]),
    ("round decimals=2", lambda x: x.round(decimals=2), lambda x: x.round(decimals=2), [A * 10]),
    ("round decimals=-1", lambda x: ta.round(x, decimals=-1), lambda x: torch.round(x, decimals=-1), [A * 100]),
    ("sign at 0 and NaN", ta.sign, torch.sign, [np.array([0.0, -2.0, 3.0, np.nan, -np.inf])]),
    ("hardtanh at its ends, min_val/max_val", lambda x: F.hardtanh(x, min_val=-0.5, max_val=2.0),
     lambda x: TF.hardtanh(x, min_val=-0.5, max_val=2.0), [np.array([-0.5, 2.0, -1.0, 0.3, 3.0])]),
    ("relu6 at 0 and 6", F.relu6, TF.relu6, [np.array([0.0, 6.0, -1.0, 3.0, 7.0])]),
    ("hardswish at -3 and 3", F.hardswish, TF.hardswish, [np.array([-3.0, 3.0, -4.0, 0.0, 4.0, -1.5])]),
    ("mish far out", F.mish, TF.mish, [np.array([-100.0, -30.0, 0.0, 30.0, 100.0])]),
    ("celu alpha at 0", lambda x: F.celu(x, alpha=0.5), lambda x: TF.celu(x, alpha=0.5), [np.array([0.0, -1.0, 1.0, -40.0])]),
    ("softsign at 0", F.softsign, TF.softsign, [np.array([0.0, -1.0, 1.0])]),
    ("acosh at 1", ta.acosh, torch.acosh, [np.array([1.0, 2.0])]),
    # x ** tensor: both gradients, broadcast, PyTorch's zeros at a = 0 and at b = 0
    ("tensor ** tensor, broadcast", lambda a, b: a ** b, lambda a, b: a ** b, [POS, A[0]]),
    ("x.pow(tensor), 0-d exponent", lambda a, b: a.pow(b), lambda a, b: a.pow(b), [POS, SCALAR]),
    ("ta.pow: zeros in base and exponent", ta.pow, torch.pow,
     [np.array([0.0, 0.0, 2.0, 0.0, 0.5, -2.0]), np.array([0.0, 2.0, 0.0, 1.5, -1.0, 3.0])]),
    ("ta.pow(number, tensor)", lambda b: ta.pow(2.5, b), lambda b: torch.pow(2.5, b), [A]),
    ("tensor ** tensor, empty", lambda a, b: a ** b, lambda a, b: a ** b, [EMPTY, A[:, 0]]),
    ("tensor ** tensor, 0-d both", ta.pow, torch.pow, [np.array(1.3), SCALAR]),
    # lerp: a number weight on both sides of 0.5 and at 1, a tensor weight broadcast
    ("lerp number weights", lambda a, b: (ta.lerp(a, b, 0.3), a.lerp(b, 0.8), a.lerp(b, 1.0)),
     lambda a, b: (torch.lerp(a, b, 0.3), a.lerp(b, 0.8), a.lerp(b, 1.0)), [A, A[0] * 2]),
    ("lerp tensor weight, broadcast", ta.lerp, torch.lerp, [A, A[:, :1] * 2, R.uniform(-0.5, 1.5, 4)]),
    ("lerp 0-d", ta.lerp, torch.lerp, [SCALAR, np.array(-1.0), np.array(0.6)]),
    ("lerp empty", ta.lerp, torch.lerp, [EMPTY, A[:, 0], np.array(0.2)]),
    # std_mean: std's arguments
    ("std_mean", lambda x: ta.std_mean(x), lambda x: torch.std_mean(x), [A]),
    ("std_mean dim keepdim", lambda x: ta.std_mean(x, 1, keepdim=True), lambda x: torch.std_mean(x, 1, keepdim=True), [A]),
    ("std_mean dims, correction=0", lambda x: ta.std_mean(x, (0, 1), correction=0),
     lambda x: torch.std_mean(x, (0, 1), correction=0), [A]),
    ("std_mean unbiased=False", lambda x: ta.std_mean(x, 0, unbiased=False), lambda x: torch.std_mean(x, 0, unbiased=False), [A]),
    ("std_mean 0-d", lambda x: ta.std_mean(x, correction=0), lambda x: torch.std_mean(x, correction=0), [SCALAR]),
    ("std_mean empty dim", lambda x: ta.std_mean(x, 1), lambda x: torch.std_mean(x, 1), [EMPTY.T]),
    # repeat_interleave: an int, counts, dim=None flattens, a 0-d input, an empty one
    ("repeat_interleave int dim", lambda x: x.repeat_interleave(2, dim=1), lambda x: x.repeat_interleave(2, dim=1), [A]),
    ("repeat_interleave counts dim 0", lambda x: ta.repeat_interleave(x, ta.tensor(COUNTS), dim=0),
     lambda x: torch.repeat_interleave(x, torch.tensor(COUNTS), dim=0), [A]),
    ("repeat_interleave flattened", lambda x: x.repeat_interleave(3), lambda x: x.repeat_interleave(3), [A]),
    ("repeat_interleave dim -1, one count", lambda x: x.repeat_interleave(ta.tensor([2]), dim=-1),
     lambda x: x.repeat_interleave(torch.tensor([2]), dim=-1), [A]),
    ("repeat_interleave 0-d", lambda x: x.repeat_interleave(3), lambda x: x.repeat_interleave(3), [SCALAR]),
    ("repeat_interleave empty", lambda x: x.repeat_interleave(2, dim=1), lambda x: x.repeat_interleave(2, dim=1), [EMPTY]),
    # cross_entropy: class weights with ignore_index and smoothing; probability targets (their gradient too)
    ("cross_entropy weight", lambda z: F.cross_entropy(z, TARGET, weight=_tw(z)),
     lambda z: TF.cross_entropy(z, torch.tensor(TARGET), weight=_pw(z)), [LOGITS]),
    ("cross_entropy weight, smoothing", lambda z: F.cross_entropy(z, TARGET, weight=_tw(z).data, label_smoothing=0.3),
     lambda z: TF.cross_entropy(z, torch.tensor(TARGET), weight=_pw(z), label_smoothing=0.3), [LOGITS]),
    ("cross_entropy weight none", lambda z: F.cross_entropy(z, TARGET, weight=_tw(z).data, reduction="none", label_smoothing=0.1),
     lambda z: TF.cross_entropy(z, torch.tensor(TARGET), weight=_pw(z), reduction="none", label_smoothing=0.1),
     [LOGITS]),
    ("cross_entropy weight sum, (N, C, d)", lambda z: F.cross_entropy(z, TARGET[:4].reshape(2, 2) % 4, weight=_tw(z).data, reduction="sum"),
     lambda z: TF.cross_entropy(z, torch.tensor(TARGET[:4].reshape(2, 2) % 4), weight=_pw(z), reduction="sum"),
     [R.standard_normal((2, 4, 2))]),
    ("ta.cross_entropy weight, classes last", lambda z: ta.cross_entropy(z, TARGET % 4, weight=_tw(z).data, ignore_index=3),
     lambda z: TF.cross_entropy(z, torch.tensor(TARGET % 4), weight=_pw(z), ignore_index=3), [LOGITS]),
    ("cross_entropy probabilities", lambda z, q: F.cross_entropy(z, q), lambda z, q: TF.cross_entropy(z, q), [LOGITS, PROBS]),
    ("cross_entropy probabilities, weight, smoothing, sum",
     lambda z, q: F.cross_entropy(z, q, weight=_tw(z).data, label_smoothing=0.2, reduction="sum"),
     lambda z, q: TF.cross_entropy(z, q, weight=_pw(z), label_smoothing=0.2, reduction="sum"), [LOGITS, PROBS.T.T]),
    ("cross_entropy probabilities (N, C, d) none", lambda z, q: F.cross_entropy(z, q, reduction="none"),
     lambda z, q: TF.cross_entropy(z, q, reduction="none"), [R.standard_normal((2, 4, 3)), R.dirichlet(np.ones(4), (2, 3)).transpose(0, 2, 1)]),
    ("cross_entropy probabilities, unbatched (C,)", lambda z, q: F.cross_entropy(z, q, weight=_tw(z).data),
     lambda z, q: TF.cross_entropy(z, q, weight=_pw(z)), [LOGITS[0], PROBS[0]]),
    ("cross_entropy probabilities, empty batch, sum", lambda z, q: F.cross_entropy(z, q, reduction="sum"),
     lambda z, q: TF.cross_entropy(z, q, reduction="sum"), [np.zeros((0, 4)), np.zeros((0, 4))]),
    ("cross_entropy weight, empty batch, none", lambda z: F.cross_entropy(z, TARGET[:0], weight=_tw(z).data, reduction="none"),
     lambda z: TF.cross_entropy(z, torch.tensor(TARGET[:0]), weight=_pw(z), reduction="none"), [np.zeros((0, 4))]),
]

# float32: PyTorch's float32 kernels round differently (and mish, tan, rsqrt ... are computed in other orders)
TOLERANCES = {np.float64: dict(rtol=1e-9, atol=1e-12), np.float32: dict(rtol=2e-5, atol=2e-6)}


def test_the_samples_include_non_contiguous_0d_empty_and_broadcast_inputs():
    arrays = [a for case in CASES for a in case[3]]
    assert any(not a.flags.c_contiguous for a in arrays) and any(a.ndim == 0 for a in arrays)
    assert any(a.size == 0 for a in arrays)
    assert any(len({a.shape for a in case[3]}) > 1 for case in CASES)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name, ours, theirs, arrays", CASES, ids=[c[0] for c in CASES])
def test_forward_and_gradients_equal_pytorchs(name, ours, theirs, arrays, dtype):
    arrays = [a.astype(dtype) for a in arrays]  # astype keeps a transposed layout (order="K")
    mine = [wrap(a).requires_grad_() for a in arrays]
    yours = [torch.tensor(np.array(a, order="C"), requires_grad=True) for a in arrays]  # 0-d stays 0-d
    out, expected = _as_tuple(ours(*mine)), _as_tuple(theirs(*yours))
    assert len(out) == len(expected)
    rng = np.random.default_rng(5)
    tol = TOLERANCES[dtype]
    ups = []
    for o, e in zip(out, expected):
        e = e.detach().numpy()
        assert o.data.shape == e.shape and o.data.dtype == e.dtype, (name, o.data.shape, o.data.dtype, e.shape, e.dtype)
        np.testing.assert_allclose(o.data, e, err_msg=name, **tol)
        ups.append(rng.standard_normal(o.data.shape).astype(dtype))
    pairs = [(o, e, u) for o, e, u in zip(out, expected, ups) if o.requires_grad]
    assert pairs, f"{name}: no output on the graph"
    ta.backward([o for o, _, _ in pairs], [u for _, _, u in pairs])
    torch.autograd.backward([e for _, e, _ in pairs], [torch.tensor(u) for _, _, u in pairs])
    for i, (m, y) in enumerate(zip(mine, yours)):
        expected_grad = np.zeros(m.shape, dtype) if y.grad is None else y.grad.numpy()
        got = np.zeros(m.shape, dtype) if m.grad is None else m.grad
        assert got.dtype == expected_grad.dtype, name
        np.testing.assert_allclose(got, expected_grad, err_msg=f"{name}: d/d input {i}", **tol)


def _as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def test_integers_keep_their_dtype_as_pytorchs():
    ints = np.array([-3, 0, 2, 7])
    for name in ("floor", "ceil", "trunc", "round", "sign"):
        ours, theirs = getattr(ta, name)(ta.tensor(ints)), getattr(torch, name)(torch.tensor(ints))
        assert ours.dtype == np.int64 and ours.data.tolist() == theirs.tolist(), name
    for name in ("sin", "log2", "exp2", "rsqrt", "acosh"):  # integers into analytic functions become float32
        ours, theirs = getattr(ta, name)(ta.tensor(ints + 4)), getattr(torch, name)(torch.tensor(ints + 4))
        assert ours.dtype == np.float32 and theirs.dtype == torch.float32, name
        np.testing.assert_allclose(ours.data, theirs.numpy(), rtol=1e-6)
    powers = ta.tensor(ints) ** ta.tensor([2, 3, 0, 1])
    assert powers.dtype == np.int64 and powers.data.tolist() == (torch.tensor(ints) ** torch.tensor([2, 3, 0, 1])).tolist()
    mixed = ta.tensor([2, 3]) ** ta.tensor([0.5, 2.0])  # int base, float exponent: the float's dtype
    assert mixed.dtype == np.float32


def test_mean_over_an_empty_batch_is_0_with_probability_targets_too():
    """tinyattn's documented choice (docs/API.md, Differences): PyTorch gives NaN."""
    z = ta.tensor(np.zeros((0, 4)), requires_grad=True)
    loss = F.cross_entropy(z, np.zeros((0, 4)))
    loss.backward()
    assert loss.item() == 0 and z.grad.shape == (0, 4)


def test_new_names_are_real_and_rsqrt_no_longer_a_known_missing_name():
    x = ta.tensor([1.0, 4.0])
    np.testing.assert_allclose(x.rsqrt().data, [1.0, 0.5])
    assert "rsqrt" not in ta.autograd.spellings.KNOWN
    for name in ("sin", "cos", "tan", "sinh", "cosh", "asinh", "acosh", "atanh", "floor", "ceil", "round", "trunc",
                 "sign", "lerp", "log2", "exp2", "rsqrt", "pow", "repeat_interleave"):
        assert callable(getattr(ta, name)) and callable(getattr(x, name)), name
    assert callable(ta.std_mean)
    for name in ("celu", "hardtanh", "softsign", "hardswish", "mish", "relu6"):
        assert callable(getattr(F, name)) and name in F.__all__, name


@pytest.mark.parametrize("call, error, words", [
    (lambda: ta.sin(3.0), TypeError, "sin: input must be a Tensor"),
    (lambda: ta.tensor([2, 3]) ** ta.tensor([1, -1]), ValueError, "negative integer powers"),
    (lambda: ta.tensor([[1.0, 2.0]]) ** ta.tensor([1.0, 2.0, 3.0]), ShapeError, "pow: (1, 2) ** (3,)"),
    (lambda: ta.lerp(ta.tensor([1.0]), 2.0, 0.5), TypeError, "lerp: end must be a Tensor"),
    (lambda: ta.lerp(ta.tensor([1.0, 2.0]), ta.tensor([1.0, 2.0, 3.0]), 0.5), ShapeError, "lerp: input (2,), end (3,)"),
    (lambda: ta.tensor([1.0]).round(1.5), TypeError, "round: decimals must be an int"),
    (lambda: ta.tensor([1.0, 2.0]).repeat_interleave(ta.tensor([1, 2, 3])), ShapeError, "3 repeats for 2 entries"),
    (lambda: ta.tensor([1.0, 2.0]).repeat_interleave(-1), ValueError, "repeats must be >= 0"),
    (lambda: ta.tensor([1.0, 2.0]).repeat_interleave(1.5), TypeError, "repeats must be an int"),
    (lambda: ta.tensor([1.0, 2.0]).repeat_interleave(2, output_size=3), ValueError, "output_size=3"),
    (lambda: F.cross_entropy(ta.tensor(LOGITS), TARGET, weight=WEIGHT[:3]), ShapeError, "one number per class, shape (4,)"),
    (lambda: F.cross_entropy(ta.tensor(LOGITS), TARGET, weight=ta.tensor(WEIGHT, requires_grad=True)), ValueError,
     ".detach() on it"),
    (lambda: F.cross_entropy(ta.tensor(LOGITS).float(), TARGET, weight=ta.tensor(WEIGHT)), TypeError,
     "weight is float64 but the logits are float32"),
    (lambda: F.cross_entropy(ta.tensor(LOGITS), PROBS, ignore_index=1), ValueError, "applies to class targets only"),
    (lambda: F.cross_entropy(ta.tensor(LOGITS), np.zeros((5, 4), np.int64)), TypeError, "target is int64"),
    (lambda: F.relu6(ta.tensor([1.0]), inplace=True), ValueError, "relu6: inplace=True is not supported"),
    (lambda: F.hardtanh(ta.tensor([1.0]), 2.0, 1.0), ValueError, "min_val 2.0 is above max_val 1.0"),
    (lambda: F.mish(ta.tensor([1, 2])), TypeError, "mish: input is int64"),
])
def test_bad_arguments_name_the_op_and_the_fix(call, error, words):
    with pytest.raises(error) as raised:
        call()
    assert words in str(raised.value)


def test_repeat_interleave_of_counts_alone_and_powers_with_a_numpy_operand():
    assert ta.repeat_interleave(ta.tensor([2, 0, 1])).data.tolist() == torch.repeat_interleave(torch.tensor([2, 0, 1])).tolist()
    x, t = ta.tensor(np.array([1.0, 2.0]), requires_grad=True), torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    ((np.array([2.0, 3.0]) ** x) + x ** np.array([3.0, 0.5])).sum().backward()
    ((torch.tensor(np.array([2.0, 3.0])) ** t) + t ** torch.tensor(np.array([3.0, 0.5]))).sum().backward()
    np.testing.assert_allclose(x.grad, t.grad.numpy(), rtol=1e-12)
