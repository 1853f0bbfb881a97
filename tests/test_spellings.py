"""Every op of docs/API.md under both spellings (ta.NAME and x.NAME; dim=/keepdim= and
axis=/keepdims=), and the PyTorch spellings a GPT lecture types first (x.bool(), ~mask, logical_*,
new_zeros, type, mT, to("cuda")), against torch where it is installed.

The walk reads the op lists from docs/API.md itself, so an op added there that lacks one of its
spellings fails here.
"""
import inspect
import pathlib
import re

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn.functional as F
from tinyattn.autograd.spellings import KNOWN

API = pathlib.Path(__file__).resolve().parents[1] / "docs" / "API.md"

# What docs/API.md lists that PyTorch itself has under one spelling only (and why).
METHOD_ONLY = {
    "expand": "PyTorch has no torch.expand",
    "repeat": "torch.repeat does not exist (torch.repeat_interleave is another op)",
    "contiguous": "PyTorch has no torch.contiguous",
    "view": "PyTorch has no torch.view",
    "new_zeros": "PyTorch has no torch.new_zeros", "new_ones": "nor torch.new_ones", "new_full": "nor torch.new_full",
    "type": "torch.type does not exist", "to": "nor torch.to", "mT": "a property",
    "bool": "ta.bool is the dtype, as torch.bool",
}
FUNCTION_ONLY = {
    "cat": "takes a list of tensors", "stack": "takes a list of tensors",
    "where": "torch's x.where(cond, y) puts the arguments in another order; ta.where(cond, x, y) only",
    "einsum": "takes several operands", "eye": "makes a tensor", "full_like": "makes a tensor",
    "std_mean": "PyTorch has no x.std_mean",
}


def _doc_ops():
    """The op names of docs/API.md's tensor sections: the "methods:" lines and the ops a tutorial
    reaches for (from the ta.cat line to the line on names tinyattn lacks)."""
    text = API.read_text()
    methods = text[text.index("# methods: ") + len("# methods: "):text.index("#          x[basic slices")]
    ops = text[text.index("ta.cat(tensors, axis=0)"):text.index("# A PyTorch (or numpy) name tinyattn lacks")]
    names = set(re.findall(r"\b(?:x|ta)\.(\w+)\b", ops)) - {"NAME"}  # NAME: the docs' placeholder
    while "(" in methods:  # the methods' list without its parenthesised remarks: "sum/mean, exp, ..."
        methods = re.sub(r"\([^()]*\)", "", methods)
    names |= set(re.findall(r"\b[a-z_]+\b", methods.replace("#", ""))) - {"t"}
    return sorted(names)


DOC_OPS = _doc_ops()


def test_the_walk_reads_the_op_lists_of_the_docs():
    """The parser finds the ops the docs list, so the walk below covers them (not an empty list)."""
    for name in ("sum", "mean", "softmax", "log_softmax", "masked_fill", "reshape", "max", "var", "topk",
                 "split", "chunk", "squeeze", "unbind", "flip", "cat", "stack", "add", "pow", "multinomial"):
        assert name in DOC_OPS, (name, DOC_OPS)


@pytest.mark.parametrize("name", DOC_OPS)
def test_every_documented_op_is_both_ta_name_and_x_name(name):
    """docs/API.md: "Each is ta.NAME(x, ...) and x.NAME(...) unless marked"; ta.max, ta.add, ta.norm,
    ta.unsqueeze, x.multinomial, ... were missing."""
    if name not in FUNCTION_ONLY:
        assert getattr(ta.Tensor, name, None) is not None, f"x.{name} is documented but missing"
    if name not in METHOD_ONLY:
        assert callable(getattr(ta, name, None)), f"ta.{name} is documented but missing"


def _own_spellings(fn):
    """The dim-like and keepdim-like parameters `fn` spells itself (after dim_or_axis's wrapping)."""
    params = inspect.signature(fn).parameters
    return [p for p in ("dim", "axis", "dims") if p in params], [p for p in ("keepdim", "keepdims") if p in params]


OTHER = {"dim": "axis", "axis": "dim", "dims": "axis", "keepdim": "keepdims", "keepdims": "keepdim"}
X = ta.tensor(np.arange(24.0).reshape(2, 3, 4) % 7)
EXTRA = {"topk": {"k": 2}, "split": {"split_size_or_sections": 1}, "chunk": {"chunks": 2},
         "gather": {"index": ta.tensor(np.zeros((2, 3, 4), np.int64))}, "unflatten": {"sizes": (3, 1)},
         "multinomial": {}, "repeat_interleave": {"repeats": 2}}
FIRST = {"cat": [X, X], "stack": [X, X]}


def _arrays(result):
    return [np.asarray(part.data) for part in result] if isinstance(result, tuple) else [np.asarray(result.data)]


def _spellings_of(name):
    """(callable, its first argument) for each of ta.NAME and x.NAME that exists."""
    first = FIRST.get(name, X)
    out = []
    if callable(getattr(ta, name, None)):
        out.append((getattr(ta, name), first))
    if callable(getattr(ta.Tensor, name, None)) and name not in FUNCTION_ONLY:
        out.append((getattr(ta.Tensor, name), first))
    return out


AXIS_OPS = [name for name in DOC_OPS for fn, _ in _spellings_of(name) if _own_spellings(fn)[0]]


def test_the_axis_ops_include_the_ones_that_refused_axis():
    for name in ("var", "std", "logsumexp", "cumsum", "norm", "topk", "split", "chunk", "squeeze", "unbind",
                 "flip", "sum", "mean", "max", "min", "softmax", "log_softmax", "cat", "stack", "argmax"):
        assert name in AXIS_OPS, name


@pytest.mark.parametrize("name", sorted(set(AXIS_OPS)))
def test_every_axis_op_takes_both_spellings_and_refuses_both_at_once(name):
    """dim=/keepdim= and axis=/keepdims= on every op that takes an axis: var, std, logsumexp,
    cumsum, norm, topk, split, chunk, squeeze, unbind and flip refused axis= (TypeError)."""
    for fn, first in _spellings_of(name):
        dims, keeps = _own_spellings(fn)
        assert dims, f"{fn.__qualname__} takes no axis under either spelling"
        own = dims[0]
        extra = dict(EXTRA.get(name, {}))
        value = 1
        want = _arrays(fn(first, **{own: value}, **extra))
        got = fn(first, **{OTHER[own]: value}, **extra)
        if name in ("max", "min") and own == "dim":  # x.max(dim) is (values, indices); axis= the values
            got, want = [np.asarray(got.data)], want[:1]
        else:
            got = _arrays(got)
        assert len(got) == len(want) and all(np.array_equal(g, w) for g, w in zip(got, want)), (fn, own)
        with pytest.raises(TypeError, match=f"{name}: got both"):
            fn(first, **{own: value, OTHER[own]: value}, **extra)
        if name in ("max", "min") and own == "dim":
            continue  # checked below with the values-only spelling
        if keeps:
            keep = keeps[0]
            want = _arrays(fn(first, **{own: value, keep: True}, **extra))
            for spelling in ({own: value, OTHER[keep]: True}, {OTHER[own]: value, OTHER[keep]: True}):
                assert all(np.array_equal(g, w) for g, w in zip(_arrays(fn(first, **spelling, **extra)), want))
            with pytest.raises(TypeError, match=f"{name}: got both"):
                fn(first, **{own: value, keep: True, OTHER[keep]: False}, **extra)


def test_both_spellings_at_once_is_a_typeerror_also_when_one_is_positional():
    """x.sum(0, dim=1) and F.softmax(x, 0, dim=1) picked one silently (F.softmax) or by accident."""
    for call in (lambda: X.sum(0, dim=1), lambda: F.softmax(X, 0, dim=1), lambda: F.log_softmax(X, 0, dim=1),
                 lambda: X.var(0, axis=1), lambda: ta.cat([X, X], 0, dim=1), lambda: X.max(axis=0, dim=1),
                 lambda: X.sum(keepdims=True, keepdim=False), lambda: X.max(axis=0, keepdim=True, keepdims=False)):
        with pytest.raises(TypeError, match="got both"):
            call()


def test_max_with_axis_honours_keepdim():
    """x.max(axis=0, keepdim=True) dropped keepdim (numpy's spelling read keepdims only)."""
    assert X.max(axis=0, keepdim=True).shape == (1, 3, 4)
    assert X.min(axis=(0, 2), keepdim=True).shape == (1, 3, 1)


def test_names_that_exist_are_not_in_the_list_of_missing_ones():
    """spellings.KNOWN is for names tinyattn lacks; one that became real on both tinyattn and
    Tensor would be dead advice."""
    dead = [name for name in KNOWN if hasattr(ta, name) and callable(getattr(ta.Tensor, name, None))]
    assert dead == []


# --- against PyTorch ---------------------------------------------------------------------------------

def _torch():
    return pytest.importorskip("torch")


def test_a_newcomers_first_mask_and_its_inverse_match_torch():
    """ta.triu(ta.ones(T, T), 1).bool() was an AttributeError; ~mask (which the mask warning
    advises) a TypeError."""
    torch = _torch()
    T = 4
    mask = ta.triu(ta.ones(T, T), 1).bool()
    want = torch.triu(torch.ones(T, T), 1).bool()
    assert mask.dtype == ta.bool and np.array_equal(mask.data, want.numpy())
    assert np.array_equal((~mask).data, (~want).numpy())
    scores = ta.randn(T, T)
    filled = scores.masked_fill(~mask, 0.0)
    assert np.array_equal(filled.data, torch.tensor(scores.data).masked_fill(~want, 0.0).numpy())


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
def test_invert_is_logical_on_bool_and_bitwise_on_integers_as_torch(dtype):
    torch = _torch()
    data = np.array([[0, 1, 5], [-3, 7, 2]]).astype(dtype)
    assert np.array_equal((~ta.tensor(data)).data, (~torch.tensor(data)).numpy())
    assert (~ta.tensor(data)).dtype == data.dtype


@pytest.mark.parametrize("dtype", [ta.float32, ta.float64])
def test_invert_on_a_float_tensor_is_a_typeerror_as_torch(dtype):
    torch = _torch()
    with pytest.raises(TypeError):
        ~torch.ones(2, dtype=getattr(torch, np.dtype(dtype).name))
    with pytest.raises(TypeError, match=r"~ \(invert\) takes a bool or integer tensor, got float"):
        ~ta.ones(2, dtype=dtype)


def test_logical_ops_match_torch_as_functions_and_methods_broadcast_and_transposed():
    torch = _torch()
    a = np.array([[0.0, 1.5, -2.0], [0.0, 0.0, 3.0]])
    b = np.array([[1, 0, 2]])
    ta_a, ta_b, t_a, t_b = ta.tensor(a).T, ta.tensor(b).T, torch.tensor(a).T, torch.tensor(b).T
    for op in ("logical_and", "logical_or"):
        want = getattr(torch, op)(t_a, t_b).numpy()
        for got in (getattr(ta, op)(ta_a, ta_b), getattr(ta_a, op)(ta_b)):
            assert got.dtype == ta.bool and np.array_equal(got.data, want), op
    want = torch.logical_not(t_a).numpy()
    for got in (ta.logical_not(ta_a), ta_a.logical_not()):
        assert got.dtype == ta.bool and np.array_equal(got.data, want)
    empty = ta.zeros(0, 3)
    assert ta.logical_and(empty, ta.ones(3)).shape == (0, 3)
    assert ta.logical_not(ta.tensor(0.0)).shape == () and bool(ta.logical_not(ta.tensor(0.0)))
    with pytest.raises(ta.ShapeError, match=r"logical_and: shapes \(3, 2\) and \(4,\)"):
        ta.logical_and(ta_a, ta.ones(4))


@pytest.mark.parametrize("dtype", [ta.float32, ta.float64, ta.int64])
def test_new_zeros_ones_full_follow_the_tensors_dtype_as_torch(dtype):
    torch = _torch()
    x = ta.ones(2, 3, dtype=dtype)
    tx = torch.ones(2, 3, dtype=getattr(torch, np.dtype(dtype).name))
    pairs = [(x.new_zeros(2, 3), tx.new_zeros(2, 3)), (x.new_zeros((4,)), tx.new_zeros((4,))),
             (x.new_ones(3), tx.new_ones(3)), (x.new_full((2, 2), 7), tx.new_full((2, 2), 7)),
             (x.new_zeros(0, 2), tx.new_zeros(0, 2)), (x.new_ones(()), tx.new_ones(())),
             (x.new_zeros(2, dtype=ta.int32), tx.new_zeros(2, dtype=torch.int32)),
             (x.new_full((2,), 1.5, dtype=ta.float64), tx.new_full((2,), 1.5, dtype=torch.float64))]
    for got, want in pairs:
        assert got.dtype == np.dtype(str(want.dtype).replace("torch.", "")), (got.dtype, want.dtype)
        assert np.array_equal(got.data, want.numpy())
        assert not got.requires_grad
    leaf = ta.ones(2, requires_grad=True, dtype=ta.float64)
    made = leaf.new_zeros(3, requires_grad=True)
    assert made.requires_grad and made.is_leaf and not leaf.new_ones(3).requires_grad
    with pytest.raises(RuntimeError, match="runs on the CPU"):
        x.new_zeros(2, device="cuda")


@pytest.mark.parametrize("dtype", [ta.float16, ta.float32, ta.float64, ta.int32, ta.int64, ta.bool])
def test_type_names_and_casts_as_torch(dtype):
    """x.type() is PyTorch's type name with tinyattn's prefix; x.type(dtype) casts."""
    torch = _torch()
    tx = torch.zeros(2, dtype=getattr(torch, np.dtype(dtype).name if dtype is not ta.bool else "bool"))
    assert ta.zeros(2, dtype=dtype).type() == tx.type().replace("torch.", "tinyattn.")
    x = ta.tensor([1.5, -2.0])
    assert x.type(dtype).dtype == np.dtype(dtype)
    assert x.type(tx.type()).dtype == np.dtype(dtype)  # "torch.DoubleTensor" as torch takes it


def test_mT_swaps_the_last_two_dims_with_the_gradient_as_torch():
    torch = _torch()
    data = np.random.default_rng(0).standard_normal((2, 3, 4))
    g = np.random.default_rng(1).standard_normal((2, 4, 3))
    x = ta.tensor(data, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    x.mT.backward(g)
    tx.mT.backward(torch.tensor(g))
    assert np.array_equal(x.mT.data, tx.mT.detach().numpy()) and np.allclose(x.grad, tx.grad.numpy())
    assert ta.zeros(0, 5).mT.shape == (5, 0)
    with pytest.raises(RuntimeError):
        torch.ones(3).mT
    with pytest.raises(ta.ShapeError, match=r"mT: needs a matrix .* got shape \(3,\)"):
        ta.ones(3).mT


def test_to_a_device():
    """x.to("cuda") says tinyattn runs on the CPU; "cpu" is x; a device with a dtype, or keywords, as torch."""
    x = ta.ones(2, 3)
    for device in ("cuda", "cuda:0", "mps"):
        with pytest.raises(RuntimeError, match=f"tinyattn runs on the CPU only, there is no '{device}' device"):
            x.to(device)
    with pytest.raises(RuntimeError, match="runs on the CPU"):
        x.to(device="cuda", dtype=ta.float64)
    assert x.to("cpu") is x and x.to(device="cpu") is x and x.to("cpu:0") is x
    assert x.to("cpu", ta.float64).dtype == ta.float64 and x.to(dtype=ta.float64).dtype == ta.float64
    assert x.to(ta.ones(1, dtype=ta.int64)).dtype == ta.int64  # another tensor's dtype, as torch's x.to(other)
    with pytest.raises(TypeError, match="'gpu' is not a dtype or a device"):
        x.to("gpu")


def test_the_functions_the_docs_promise_match_torch():
    """ta.max, ta.min, ta.add, ta.sub, ta.mul, ta.div, ta.neg, ta.pow, ta.unsqueeze, ta.norm and
    x.multinomial were AttributeErrors."""
    torch = _torch()
    data = np.random.default_rng(2).standard_normal((3, 4))
    x, tx = ta.tensor(data).T, torch.tensor(data).T  # transposed: not contiguous
    pairs = [(ta.max(x), torch.max(tx)), (ta.max(x, 1).values, torch.max(tx, 1).values),
             (ta.max(x, 1).indices, torch.max(tx, 1).indices), (ta.min(x, 0, keepdim=True)[0], torch.min(tx, 0, True)[0]),
             (ta.max(x, ta.zeros(3, dtype=ta.float64)), torch.max(tx, torch.zeros(3, dtype=torch.float64))),
             (ta.add(x, 2.0, alpha=3), torch.add(tx, 2.0, alpha=3)), (ta.add(2.0, x), torch.add(2.0, tx)),
             (ta.sub(x, x[0], alpha=2), torch.sub(tx, tx[0], alpha=2)), (ta.mul(x, 3), torch.mul(tx, 3)),
             (ta.div(x, 2), torch.div(tx, 2)), (ta.div(x, 0.3, rounding_mode="floor"),
                                                torch.div(tx, 0.3, rounding_mode="floor")),
             (ta.neg(x), torch.neg(tx)), (ta.pow(x, 2), torch.pow(tx, 2)), (ta.pow(2, x), torch.pow(2, tx)),
             (ta.unsqueeze(x, -1), torch.unsqueeze(tx, -1)), (ta.norm(x), torch.norm(tx)),
             (ta.norm(x, 1, dim=0), torch.norm(tx, 1, dim=0)), (ta.exp(x), torch.exp(tx)),
             (ta.sum(x, dim=0, keepdim=True), torch.sum(tx, dim=0, keepdim=True)),
             (ta.softmax(x, dim=0), torch.softmax(tx, dim=0)), (ta.argmax(x, dim=1), torch.argmax(tx, dim=1))]
    for got, want in pairs:
        assert got.shape == tuple(want.shape) and np.allclose(got.data, want.numpy()), (got, want)
    probs = ta.tensor([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]])
    draws = probs.multinomial(1)
    assert draws.dtype == ta.int64 and draws.shape == (2, 1) and draws.data[0, 0] == 1 and draws.data[1, 0] in (0, 2)


def test_a_function_spelling_carries_the_gradient_and_names_itself():
    x = ta.tensor([[1.0, -2.0], [3.0, 0.5]], dtype=ta.float64, requires_grad=True)
    ta.norm(ta.max(x, 1).values).backward()
    assert np.allclose(x.grad, [[1 / np.sqrt(10), 0], [3 / np.sqrt(10), 0]])
    assert "input" in inspect.signature(ta.max).parameters and ta.max.__name__ == "max"
    with pytest.raises(TypeError, match=r"max: input must be a Tensor, got list"):
        ta.max([1.0, 2.0])


@pytest.mark.parametrize("dtype", [ta.float32, ta.float64])
def test_the_axis_spellings_match_torch(dtype):
    """torch takes axis=/keepdims= as aliases on its reductions; tinyattn did not on var, std,
    logsumexp, cumsum and norm."""
    torch = _torch()
    data = np.random.default_rng(3).standard_normal((3, 4)).astype(dtype)
    x, tx = ta.tensor(data).T, torch.tensor(data).T
    pairs = [(x.var(axis=0), tx.var(axis=0)), (x.std(axis=1, keepdims=True), tx.std(axis=1, keepdims=True)),
             (x.logsumexp(axis=0), tx.logsumexp(axis=0)), (x.cumsum(axis=1), tx.cumsum(axis=1)),
             (x.sum(axis=0, keepdims=True), tx.sum(axis=0, keepdims=True)),
             (ta.squeeze(x[:1], axis=0), torch.squeeze(tx[:1], axis=0)),
             (x.unsqueeze(axis=0), tx.unsqueeze(axis=0)), (ta.cat([x, x], axis=1), torch.cat([tx, tx], axis=1))]
    for got, want in pairs:
        assert got.shape == tuple(want.shape) and np.allclose(got.data, want.numpy(), rtol=1e-5), (got, want)
