"""Every Function of tests/registry.py beside its PyTorch counterpart, for test_registry_vs_torch.py.

One line per op: row(Function, name, tinyattn call, torch call, inputs). `inputs(dtype)` is a
hypothesis strategy for a tuple of arguments that both calls take in order: each float array becomes a
leaf that requires grad (a tinyattn Tensor keeping the array's layout, a torch tensor with the same
strides); anything else (dims, flags, index arrays) is passed as it is, numpy arrays as torch tensors
on the torch side. The shared strategies below draw shapes with 0-d and zero-size operands,
transposed and strided layouts, and extremes (NaN, +-inf, 0, +-100) among ordinary values.

A registry Function with no torch counterpart is in NO_COUNTERPART with the reason. A deliberate
difference is a row whose strategy avoids it, with a comment saying what and why.
"""
import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays, mutually_broadcastable_shapes

import tinyattn as ta
from tinyattn.autograd import inplace as inplace_rules
from tinyattn.autograd import rules_elementwise as ew
from tinyattn.autograd import rules_nn as nn_ops
from tinyattn.autograd import rules_reduce as red
from tinyattn.autograd import rules_shape as shp
import tinyattn.nn.functional as F
from tinyattn.nn import gelu, layers, losses
from tinyattn.nn.fused import additive_attention_node as aa
from tinyattn.nn.fused import attentive_decoder as ad
from tinyattn.nn.fused import gru_sequence as gs
from tinyattn.nn.fused import lstm_sequence as lseq
from tinyattn.nn.fused import recurrent_steps as rs
from tinyattn.nn.fused.dot_product_attention_node import ScaledDotProductAttention
from tinyattn.nn import scaled_dot_product_attention as sdpa_spelling

try:
    import torch
    TF = torch.nn.functional
except ImportError:  # the table is still read (every Function listed?); the comparison skips
    torch = TF = None

NAN, INF = float("nan"), float("inf")
EXTREMES = (NAN, INF, -INF, 0.0, 100.0, -100.0)
NO_NAN = tuple(v for v in EXTREMES if v == v)
NO_ZERO = tuple(v for v in EXTREMES if v != 0.0)
FINITE = (0.0, 100.0, -100.0)
NO_INF = (NAN,) + FINITE
LAYOUTS = ("contiguous", "transposed", "strided")


def laid_out(values, layout):
    """The same values, C-ordered, transposed (F-ordered) or every other column of a wider array."""
    if values.ndim == 0 or layout == "contiguous":
        return values
    if layout == "transposed":
        return np.ascontiguousarray(values.T).T
    wide = np.zeros(values.shape[:-1] + (2 * values.shape[-1],), values.dtype)
    wide[..., ::2] = values
    return wide[..., ::2]


@st.composite
def array(draw, dtype, shape=None, min_dims=0, max_dims=3, min_side=0, max_side=4, low=-3.0, high=3.0,
          extremes=EXTREMES):
    """A float array of `dtype`: ordinary values, in half the draws with some of `extremes` among them.
    No subnormal numbers: where they underflow differs between libraries (torch's norm at 1e-308 is NaN)."""
    if shape is None:
        shape = draw(array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side))
    width = np.finfo(dtype).bits
    values = draw(arrays(dtype, shape, elements=st.floats(low, high, width=width, allow_subnormal=False)))
    if extremes and draw(st.booleans()):
        pick = draw(arrays(np.int8, shape, elements=st.integers(0, 3 * len(extremes))))
        for code, value in enumerate(extremes):
            values = np.where(pick == code, np.asarray(value, dtype), values)
    return laid_out(values, draw(st.sampled_from(LAYOUTS)))


def one(**kw):
    return lambda dtype: st.tuples(array(dtype, **kw))


def broadcast(n=2, **kw):
    """n arrays of mutually broadcastable shapes (0-d and size-0 sides included)."""
    @st.composite
    def draw_them(draw, dtype):
        shapes = draw(mutually_broadcastable_shapes(num_shapes=n, min_dims=0, max_dims=3, min_side=0, max_side=3))
        return tuple(draw(array(dtype, s, **kw)) for s in shapes.input_shapes)
    return draw_them


def with_dim(min_side=0, **kw):
    """An array of at least one dim, a dim of it (negative or not) and a keepdim flag."""
    @st.composite
    def draw_them(draw, dtype):
        x = draw(array(dtype, min_dims=1, min_side=min_side, **kw))
        return x, draw(st.integers(-x.ndim, x.ndim - 1)), draw(st.booleans())
    return draw_them


def then(strategy, *more):
    """The arrays `strategy` draws, followed by one draw of each of `more`."""
    return lambda dtype: st.tuples(strategy(dtype), *more).map(lambda t: tuple(t[0]) + tuple(t[1:]))


@st.composite
def distinct(draw, dtype, min_dims=1):
    """Distinct values (a permutation): top-k and max pick the same elements as torch."""
    shape = draw(array_shapes(min_dims=min_dims, max_dims=3, min_side=1, max_side=4))
    values = (np.array(draw(st.permutations(range(int(np.prod(shape)))))) * 0.25 - 2.0).astype(dtype)
    return laid_out(values.reshape(shape), draw(st.sampled_from(LAYOUTS))), draw(st.integers(-len(shape), len(shape) - 1))


@st.composite
def matmul_pair(draw, dtype):
    """(..., n, k) @ (..., k, m) with broadcast batch dims, or 1-D on either side."""
    n, k, m = draw(st.integers(0, 3)), draw(st.integers(0, 3)), draw(st.integers(0, 3))
    batch = draw(mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, max_side=2)).input_shapes
    left = (k,) if draw(st.booleans()) else batch[0] + (n, k)
    right = (k,) if draw(st.booleans()) else batch[1] + (k, m)
    return draw(array(dtype, left)), draw(array(dtype, right))


@st.composite
def joinable(draw, dtype, same=False):
    """Two arrays equal in shape but along a dim (cat), or equal (stack), and that dim."""
    shape = draw(array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    other = list(shape)
    if not same:
        other[dim] = draw(st.integers(0, 3))
    return draw(array(dtype, shape)), draw(array(dtype, tuple(other))), dim


@st.composite
def index_rows(draw, dtype):
    """An array and an int index array of its first dim (repeats allowed)."""
    x = draw(array(dtype, min_dims=1, min_side=1))
    return x, draw(arrays(np.int64, draw(array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=3)),
                          elements=st.integers(-x.shape[0], x.shape[0] - 1)))


@st.composite
def slices(draw, dtype):
    """An array and a basic slice of its first dim (positive steps: torch takes no negative ones)."""
    x = draw(array(dtype, min_dims=1))
    start, stop = draw(st.integers(-4, 4)), draw(st.integers(-4, 4))
    return x, slice(start, stop, draw(st.integers(1, 3)))


@st.composite
def bool_mask(draw, dtype, n_values=1):
    """An array and a bool mask that broadcasts against it."""
    x = draw(array(dtype))
    mask_shape = draw(st.sampled_from([x.shape[i:] for i in range(x.ndim + 1)]))
    return (x, draw(arrays(np.bool_, mask_shape)))


@st.composite
def gather_index(draw, dtype):
    x = draw(array(dtype, min_dims=1, min_side=1))
    dim = draw(st.integers(0, x.ndim - 1))
    shape = tuple(draw(st.integers(0, s)) if i != dim else draw(st.integers(0, 3)) for i, s in enumerate(x.shape))
    return x, dim, draw(arrays(np.int64, shape, elements=st.integers(0, x.shape[dim] - 1)))


@st.composite
def padded(draw, dtype):
    """An array and F.pad widths for its last one or two dims, negative ones within the size."""
    x = draw(array(dtype, min_dims=2, min_side=1))
    pads = []
    for size in (x.shape[-1], x.shape[-2])[:draw(st.integers(1, 2))]:
        left = draw(st.integers(-(size - 1) // 2 if size > 1 else 0, 2))
        right = draw(st.integers(-(size - 1 - max(0, -left)) if size > 1 else 0, 2))
        pads += [left, max(right, -(size + min(left, 0)) + 1)]
    return x, tuple(pads), draw(st.sampled_from([0.0, 0.5, -INF]))


@st.composite
def expandable(draw, dtype):
    x = draw(array(dtype, max_dims=2, max_side=3))
    sizes = [draw(st.integers(0, 3)) if s == 1 else s for s in x.shape]
    lead = draw(st.lists(st.integers(0, 2), max_size=1))
    return x, tuple(lead + sizes)


@st.composite
def split_sizes(draw, dtype, chunks=False, min_side=0):
    x, dim, _ = draw(with_dim(min_side=min_side)(dtype))
    return x, draw(st.integers(1, 4)), dim


@st.composite
def einsum_operands(draw, dtype):
    equation = draw(st.sampled_from(["ij,jk->ik", "bij,bjk->bik", "i,j->ij", "ii->", "ij->j", "ij,ij->i", "i,i->"]))
    sides, shapes = {}, []
    for term in equation.split("->")[0].split(","):
        shapes.append(tuple(sides.setdefault(letter, draw(st.integers(0, 3))) for letter in term))
    return (equation,) + tuple(draw(array(dtype, s)) for s in shapes)


@st.composite
def class_logits(draw, dtype, classes_last=True):
    """(N, C) logits and targets in [0, C) or -100 (ignored), at least one target kept (an all-ignored
    batch is 0 in tinyattn, NaN in torch: docs/API.md, Differences from PyTorch). Finite logits: a row
    of infinities gives NaN in torch, +-inf in tinyattn (reported on issue 28, not yet decided)."""
    n, c = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    targets = draw(arrays(np.int64, n, elements=st.sampled_from(list(range(c)) + [-100])))
    targets[0] = draw(st.integers(0, c - 1))
    return draw(array(dtype, (n, c), extremes=FINITE)), targets, draw(st.sampled_from([0.0, 0.2]))


@st.composite
def probabilities(draw, dtype):
    """Probabilities (0 and 1 included) and soft targets of one broadcastable shape."""
    shape = draw(array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    p = draw(array(dtype, shape, low=0.0, high=1.0, extremes=(0.0, 1.0)))
    return p, draw(array(dtype, shape, low=0.0, high=1.0, extremes=(0.0, 1.0)))


@st.composite
def linear_operands(draw, dtype):
    n_in, n_out = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    lead = draw(array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
    return draw(array(dtype, lead + (n_in,))), draw(array(dtype, (n_out, n_in))), draw(array(dtype, (n_out,)))


@st.composite
def embedding_operands(draw, dtype):
    w = draw(array(dtype, min_dims=2, max_dims=2, min_side=1))
    idx = draw(arrays(np.int64, draw(array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=3)),
                      elements=st.integers(0, w.shape[0] - 1)))
    return w, idx


@st.composite
def layer_norm_operands(draw, dtype):
    """No 100s in x: a constant row of them has rounding noise for its deviations in torch's float32 (a
    weight gradient ~1e-4), exact zeros in tinyattn's; finite weights (an infinite one: inf vs torch's NaN)."""
    x = draw(array(dtype, min_dims=1, min_side=1, extremes=(NAN, INF, -INF, 0.0)))
    k = draw(st.integers(1, x.ndim))
    shape = x.shape[x.ndim - k:]
    return x, draw(array(dtype, shape, extremes=FINITE)), draw(array(dtype, shape, extremes=FINITE)), k


@st.composite
def attention_operands(draw, dtype):
    batch = draw(array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=2))
    tq, tk, d, dv = (draw(st.integers(1, 3)) for _ in range(4))
    return (draw(array(dtype, batch + (tq, d), extremes=FINITE)), draw(array(dtype, batch + (tk, d), extremes=FINITE)),
            draw(array(dtype, batch + (tk, dv), extremes=FINITE)), draw(st.booleans()))


@st.composite
def bounds(draw, dtype):
    """An array and two bounds that broadcast to its shape (torch's clamp keeps the input's shape)."""
    x = draw(array(dtype, extremes=NO_NAN))
    lo, hi = (draw(array(dtype, draw(st.sampled_from([x.shape[i:] for i in range(x.ndim + 1)])), extremes=NO_NAN))
              for _ in range(2))
    return x, lo, hi


def zeros_somewhere(dtype):
    """An array with a zero row (all of it, in 0- and 1-d), for norms at zero."""
    @st.composite
    def draw_it(draw):
        x = draw(array(dtype, min_dims=1, min_side=1, extremes=None)).copy()
        x[np.abs(x) < 1e-6] = 0  # |x|**3 of a tiny x underflows to 0, where torch's gradient is 0/0 = NaN
        x[0] = 0
        return x, draw(st.integers(0, x.ndim - 1))
    return draw_it()


ROWS = []


def _without_ties(args):
    """The array plus a small ramp: which of several equal entries topk picks is PyTorch's choice of
    algorithm (not documented), so rows that compare indices draw no ties. NaN and inf stay."""
    (x,) = args
    return (x + (np.arange(x.size) * 1e-2).reshape(x.shape).astype(x.dtype),)


def row(function, name, ours, theirs, inputs, marks=(), dtypes=(np.float64, np.float32)):
    """One op: its Function, tinyattn's call, torch's call, the inputs' strategy; a test per dtype."""
    for dtype in dtypes:
        ROWS.append(pytest.param(function, name, ours, theirs, inputs, dtype, marks=marks,
                                 id=f"{function.__name__}: {name} [{np.dtype(dtype).name}]"))


def _fused_sdpa(q, k, v, causal):
    with ta.fused(True):
        return sdpa_spelling.scaled_dot_product_attention(q, k, v, is_causal=causal)[0]


# --- element-wise ------------------------------------------------------------------------
row(ew.Add, "a + b", lambda a, b: a + b, lambda a, b: a + b, broadcast())
row(ew.Sub, "a - b", lambda a, b: a - b, lambda a, b: a - b, broadcast())
row(ew.Mul, "a * b", lambda a, b: a * b, lambda a, b: a * b, broadcast())
row(ew.Div, "a / b", lambda a, b: a / b, lambda a, b: a / b, broadcast())
row(ew.RoundedDiv, "div floor", lambda a, b: a.div(b, rounding_mode="floor"),
    lambda a, b: a.div(b, rounding_mode="floor"), broadcast())
row(ew.RoundedDiv, "div trunc", lambda a, b: a.div(b, rounding_mode="trunc"),
    lambda a, b: a.div(b, rounding_mode="trunc"), broadcast())
row(ew.Neg, "-a", lambda a: -a, lambda a: -a, one())
row(ew.Pow, "a ** number", lambda a, p: a ** p, lambda a, p: a ** p, then(one(), st.sampled_from([2, 3, 0.5, -1.5, 2.5, 0])))
row(ew.Abs, "abs", abs, abs, one())
row(ew.Exp, "exp", lambda a: a.exp(), lambda a: a.exp(), one())
row(ew.Log, "log", lambda a: a.log(), lambda a: a.log(), one())
row(ew.Sqrt, "sqrt", lambda a: a.sqrt(), lambda a: a.sqrt(), one())
row(ew.Rsqrt, "rsqrt", lambda a: a.rsqrt(), lambda a: a.rsqrt(), one())
row(ew.Log2, "log2", lambda a: a.log2(), lambda a: a.log2(), one())
row(ew.Exp2, "exp2", lambda a: a.exp2(), lambda a: a.exp2(), one())
row(ew.Sin, "sin", lambda a: a.sin(), lambda a: a.sin(), one())
row(ew.Cos, "cos", lambda a: a.cos(), lambda a: a.cos(), one())
row(ew.Tan, "tan", lambda a: a.tan(), lambda a: a.tan(), one())
row(ew.Sinh, "sinh", lambda a: a.sinh(), lambda a: a.sinh(), one())
row(ew.Cosh, "cosh", lambda a: a.cosh(), lambda a: a.cosh(), one())
row(ew.Asinh, "asinh", lambda a: a.asinh(), lambda a: a.asinh(), one())
row(ew.Acosh, "acosh", lambda a: a.acosh(), lambda a: a.acosh(), one(low=1.25, high=4.0))
row(ew.Atanh, "atanh", lambda a: a.atanh(), lambda a: a.atanh(), one(low=-0.875, high=0.875))
row(ew.Step, "floor, ceil, trunc, sign, round", lambda a: (a.floor(), a.ceil(), a.trunc(), a.sign(), a.round()),
    lambda a: (a.floor(), a.ceil(), a.trunc(), a.sign(), a.round()), one())
row(ew.PowTensor, "tensor ** tensor", lambda a, b: a.abs() ** b, lambda a, b: a.abs() ** b, broadcast(extremes=FINITE))
row(ew.Lerp, "lerp, tensor weight", lambda a, b, w: a.lerp(b, w), lambda a, b, w: a.lerp(b, w), broadcast(3))
row(ew.Hardtanh, "hardtanh, relu6", lambda a: (F.hardtanh(a, -1.0, 2.0), F.relu6(a)),
    lambda a: (TF.hardtanh(a, -1.0, 2.0), TF.relu6(a)), one())
row(ew.Hardswish, "hardswish", lambda a: F.hardswish(a), lambda a: TF.hardswish(a), one())
row(ew.Mish, "mish", lambda a: F.mish(a), lambda a: TF.mish(a), one())
row(ew.Tanh, "tanh", lambda a: a.tanh(), lambda a: a.tanh(), one())
row(ew.Sigmoid, "sigmoid", lambda a: a.sigmoid(), lambda a: a.sigmoid(), one())
row(ew.Relu, "relu", lambda a: a.relu(), lambda a: a.relu(), one())
row(ew.Cast, "clone", lambda a: a.clone(), lambda a: a.clone(), one())
row(ew.Cast, "double() and float()", lambda a: (a.double(), a.float()), lambda a: (a.double(), a.float()), one())
row(ew.PowOfNumber, "number ** a", lambda a, c: c ** a, lambda a, c: c ** a, then(one(), st.sampled_from([2.5, 0.3, 1.0])))

def _changed_through_views(a, b):
    """In-place changes through views of a copy of a (tinyattn's history: CopySlices, torch's too)."""
    h = a * 1.0
    h.T[1][1:].mul_(b)
    h[0, 2].add_(h[2, 0] * 2)
    return h


row(inplace_rules.CopySlices, "a column and an element changed in place", _changed_through_views, _changed_through_views,
    lambda dtype: st.tuples(array(dtype, shape=(3, 4)), array(dtype, shape=(2,))))


# --- reductions -----------------------------------------------------------------------------
row(red.Sum, "sum()", lambda a: a.sum(), lambda a: a.sum(), one())
row(red.Sum, "sum(dim, keepdim)", lambda a, d, k: a.sum(d, keepdim=k), lambda a, d, k: a.sum(d, keepdim=k), with_dim())
row(red.Mean, "mean()", lambda a: a.mean(), lambda a: a.mean(), one())
row(red.Mean, "mean(dim, keepdim)", lambda a, d, k: a.mean(d, keepdim=k), lambda a, d, k: a.mean(d, keepdim=k), with_dim())
row(red.Max, "max() (ties share)", lambda a: a.max(), lambda a: a.max(), one())
row(ew.Neg, "min() (ties share)", lambda a: a.min(), lambda a: a.min(), one())
# No NaN: with one NaN entry torch's p-norm gradient is NaN everywhere, tinyattn's only where x is
# NaN or the upstream is (docs/API.md, Differences from PyTorch).
row(red.Sum, "norm p=1, 3 (no zero)", lambda a, d, k: (a.norm(1, dim=d, keepdim=k), a.norm(3, dim=d)),
    lambda a, d, k: (a.norm(1, dim=d, keepdim=k), a.norm(3, dim=d)),
    with_dim(extremes=tuple(v for v in NO_ZERO if v == v)))
row(red.Sum, "norm p=1, 3 at zero", lambda a, d: (a.norm(1), a.norm(3, dim=d)), lambda a, d: (a.norm(1), a.norm(3, dim=d)),
    zeros_somewhere)
row(ew.Where, "norm p=2", lambda a, d, k: (a.norm(), a.norm(dim=d, keepdim=k)), lambda a, d, k: (a.norm(), a.norm(dim=d, keepdim=k)),
    with_dim())
# var and std of a row holding an infinity: torch's gradient is -inf/+inf beside the NaN at it, tinyattn's
# (composed of mean, sub, mul) NaN on the whole row; both are meaningless, so infinities are left out.
row(ew.Div, "var(dim)", lambda a, d, k: a.var(d, keepdim=k), lambda a, d, k: a.var(d, keepdim=k), with_dim(extremes=NO_INF))
row(ew.Sqrt, "std(dim, correction=0)", lambda a, d, k: a.std(d, correction=0, keepdim=k),
    lambda a, d, k: a.std(d, correction=0, keepdim=k), with_dim(extremes=NO_INF))
row(shp.Reshape, "logsumexp(dim)", lambda a, d, k: a.logsumexp(d, keepdim=k), lambda a, d, k: a.logsumexp(d, keepdim=k),
    with_dim(min_side=1))
row(ew.Sub, "logsumexp over an empty dim", lambda a, d, k: a.logsumexp(d, keepdim=k),
    lambda a, d, k: a.logsumexp(d, keepdim=k), lambda dtype: st.tuples(st.just(np.zeros((2, 0), dtype)), st.just(1), st.booleans()),
    )

# --- shapes ---------------------------------------------------------------------------------
row(shp.Reshape, "reshape(-1), flatten", lambda a: (a.reshape(-1), a.flatten()), lambda a: (a.reshape(-1), a.flatten()), one())
row(shp.Reshape, "squeeze(), unsqueeze(dim)", lambda a, d, k: (a.squeeze(), a.unsqueeze(d)), lambda a, d, k: (a.squeeze(), a.unsqueeze(d)),
    with_dim())
row(shp.Reshape, "repeat", lambda a: a.repeat(2, *(1,) * a.ndim), lambda a: a.repeat(2, *(1,) * a.ndim), one())
row(shp.Permute, "transpose(0, dim)", lambda a, d, k: a.transpose(0, d), lambda a, d, k: a.transpose(0, d), with_dim())
row(shp.GetItem, "basic slice", lambda a, s: a[s], lambda a, s: a[s], slices)
row(shp.GetItem, "int array (repeats)", lambda a, i: a[i], lambda a, i: a[i], index_rows)
row(shp.GetItem, "bool mask", lambda a, m: a[m], lambda a, m: a[m], lambda dtype: bool_mask(dtype).filter(lambda t: t[1].ndim > 0))
row(ew.Cast, "flip(dim) (a copy, as PyTorch's)", lambda a, d, k: a.flip(d), lambda a, d, k: a.flip(d), with_dim())
row(shp.Cat, "cat", lambda a, b, d: ta.cat([a, b], dim=d), lambda a, b, d: torch.cat([a, b], dim=d), joinable)
row(shp.Stack, "stack", lambda a, b, d: ta.stack([a, b], dim=d), lambda a, b, d: torch.stack([a, b], dim=d),
    lambda dtype: joinable(dtype, same=True))
row(shp.Unbind, "unbind(dim)", lambda a, d, k: ta.unbind(a, dim=d), lambda a, d, k: torch.unbind(a, dim=d), with_dim())
row(shp.MaskedFill, "masked_fill(mask, finite or NaN)", lambda a, m, v: a.masked_fill(m, v), lambda a, m, v: a.masked_fill(m, v),
    then(bool_mask, st.sampled_from([0.0, -1.5, NAN])))
row(shp.MaskedFill, "masked_fill(mask, -inf)", lambda a, m: a.masked_fill(m, -INF), lambda a, m: a.masked_fill(m, -INF),
    bool_mask)
row(shp.MaskedFill, "tril, triu(1)", lambda a: (a.tril(), a.triu(1)), lambda a: (a.tril(), a.triu(1)), one(min_dims=2))
def condition_first(strategy):
    """The first drawn array turned into a bool condition (its positive places)."""
    return lambda dtype: strategy(dtype).map(lambda t: (np.asarray(t[0] > 0),) + tuple(t[1:]))


row(ew.Where, "where(cond, a, b)", lambda c, a, b: ta.where(c, a, b), lambda c, a, b: torch.where(c, a, b),
    condition_first(broadcast(3)))
row(ew.Where, "where(cond, -inf, a)", lambda c, a: ta.where(c, -INF, a), lambda c, a: torch.where(c, -INF, a),
    condition_first(broadcast(2)))
row(ew.Where, "maximum, minimum (no NaN)", lambda a, b: (ta.maximum(a, b), ta.minimum(a, b)),
    lambda a, b: (torch.maximum(a, b), torch.minimum(a, b)), broadcast(extremes=NO_NAN))
row(ew.Where, "maximum, minimum with NaN", lambda a, b: (ta.maximum(a, b), ta.minimum(a, b)),
    lambda a, b: (torch.maximum(a, b), torch.minimum(a, b)), broadcast(extremes=(NAN,)))
row(ew.Where, "clamp(numbers) (no NaN)", lambda a: (a.clamp(-1.0, 1.0), a.clamp(min=0.5)), lambda a: (a.clamp(-1.0, 1.0), a.clamp(min=0.5)),
    one(extremes=NO_NAN))
row(ew.Where, "clamp(numbers) at NaN", lambda a: a.clamp(-1.0, 1.0), lambda a: a.clamp(-1.0, 1.0),
    one(extremes=(NAN,)))
# Bounds never equal: where min == max torch's clamp gives no input a gradient (nobody "won"),
# tinyattn gives it to min (docs/API.md, Differences from PyTorch).
row(ew.Where, "clip(tensor, tensor) (no NaN)", lambda a, lo, hi: ta.clip(a, lo, hi), lambda a, lo, hi: torch.clip(a, lo, hi),
    lambda dtype: bounds(dtype).filter(lambda args: not np.any(args[1] == args[2])))
row(ew.Where, "leaky_relu, softplus", lambda a: (F.leaky_relu(a, 0.1), F.softplus(a, 2.0, 3.0)),
    lambda a: (TF.leaky_relu(a, 0.1), TF.softplus(a, 2.0, 3.0)), one())
row(ew.Where, "elu (no NaN)", lambda a: F.elu(a, 0.7), lambda a: TF.elu(a, 0.7), one(extremes=NO_NAN))
row(ew.Where, "elu at NaN", lambda a: F.elu(a), lambda a: TF.elu(a), one(extremes=(NAN,)))

# --- matmul, softmax, losses --------------------------------------------------------------------
row(nn_ops.MatMul, "a @ b", lambda a, b: a @ b, lambda a, b: a @ b, matmul_pair)
row(nn_ops.Softmax, "softmax(dim)", lambda a, d, k: a.softmax(d), lambda a, d, k: a.softmax(d), with_dim())
row(nn_ops.LogSoftmax, "log_softmax(dim)", lambda a, d, k: a.log_softmax(d), lambda a, d, k: a.log_softmax(d), with_dim())
row(nn_ops.CrossEntropy, "F.cross_entropy (N, C), ignore -100, smoothing",
    lambda z, t, s: F.cross_entropy(z, t, label_smoothing=s), lambda z, t, s: TF.cross_entropy(z, t, label_smoothing=s), class_logits)
row(nn_ops.CrossEntropy, "F.cross_entropy reduction='none'", lambda z, t, s: F.cross_entropy(z, t, reduction="none"),
    lambda z, t, s: TF.cross_entropy(z, t, reduction="none"), class_logits)
row(nn_ops.ProbabilityCrossEntropy, "F.cross_entropy, probability targets",
    lambda z, q: F.cross_entropy(z, q.softmax(-1)), lambda z, q: TF.cross_entropy(z, q.softmax(-1)),
    lambda dtype: st.tuples(array(dtype, shape=(3, 4), extremes=FINITE), array(dtype, shape=(3, 4), extremes=FINITE)))
row(red.Mean, "binary_cross_entropy with logits (pos_weight)",
    lambda z, t: F.binary_cross_entropy_with_logits(z, t, pos_weight=ta.tensor(np.asarray(2.0, z.dtype))),
    lambda z, t: TF.binary_cross_entropy_with_logits(z, t, pos_weight=torch.tensor(2.0, dtype=z.dtype)),
    lambda dtype: probabilities(dtype).map(lambda t: (np.asarray((t[0] - 0.5) * 40), t[1])))
# targets detached: at p = 0 or 1 torch's gradient for a target is +-inf, tinyattn's that of its clamped logs
row(losses.BinaryCrossEntropy, "binary_cross_entropy, soft targets",
    lambda p, t: F.binary_cross_entropy(p, t.detach(), reduction="none"),
    lambda p, t: TF.binary_cross_entropy(p, t.detach(), reduction="none"), probabilities)

# --- picking, padding, einsum -------------------------------------------------------------------
row(shp.Gather, "gather(dim, index)", lambda a, d, i: a.gather(d, i), lambda a, d, i: a.gather(d, i), gather_index)
row(shp.Gather, "topk(k, dim), distinct values", lambda a, d: tuple(a.topk(1, dim=d)), lambda a, d: tuple(a.topk(1, dim=d)), distinct)
row(shp.Gather, "topk with NaN", lambda a: tuple(a.topk(2)), lambda a: tuple(a.topk(2)),
    lambda dtype: one(min_dims=1, min_side=2, extremes=(NAN,))(dtype).map(_without_ties))
row(shp.Gather, "max(dim), min(dim, keepdim)", lambda a, d, k: tuple(a.max(d)) + tuple(a.min(d, keepdim=k)),
    lambda a, d, k: tuple(a.max(d)) + tuple(a.min(d, keepdim=k)), with_dim(min_side=1))
row(shp.Cumsum, "cumsum(dim)", lambda a, d, k: a.cumsum(d), lambda a, d, k: a.cumsum(d), with_dim())
row(shp.Pad, "F.pad, negative widths", lambda a, p, v: F.pad(a, p, value=v), lambda a, p, v: TF.pad(a, p, value=v), padded)
row(shp.Expand, "expand", lambda a, s: a.expand(s), lambda a, s: a.expand(s), expandable)
row(nn_ops.Einsum, "einsum", lambda e, *xs: ta.einsum(e, *xs), lambda e, *xs: torch.einsum(e, *xs), einsum_operands)
# einsum of float32 and int64 has no row: torch refuses mixed dtypes, tinyattn promotes (float32);
# tests/test_edge_values.py checks the dtype.
row(shp.Split, "split(size, dim)", lambda a, n, d: a.split(n, dim=d), lambda a, n, d: a.split(n, dim=d), split_sizes)
row(shp.Split, "chunk(n, dim), dim not empty", lambda a, n, d: a.chunk(n, dim=d), lambda a, n, d: a.chunk(n, dim=d),
    lambda dtype: split_sizes(dtype, min_side=1))
row(shp.Split, "chunk(3) of an empty dim", lambda a: a.chunk(3, dim=1), lambda a: a.chunk(3, dim=1),
    lambda dtype: st.tuples(st.just(np.zeros((2, 0), dtype))))

# --- layers ---------------------------------------------------------------------------------
row(layers.LinearFunction, "F.linear", lambda x, w, b: layers.LinearFunction.apply(x, w, b), lambda x, w, b: TF.linear(x, w, b),
    linear_operands)
row(layers.EmbeddingFunction, "F.embedding", lambda w, i: layers.EmbeddingFunction.apply(w, i, None),
    lambda w, i: TF.embedding(i, w), embedding_operands)
row(layers.LayerNormFunction, "F.layer_norm, last k dims",
    lambda x, w, b, k: layers.LayerNormFunction.apply(x, w, b, tuple(range(x.ndim - k, x.ndim)), 1e-5),
    lambda x, w, b, k: TF.layer_norm(x, x.shape[x.ndim - k:], w, b, 1e-5), layer_norm_operands)
# gelu(-inf): torch NaN; tinyattn NaN in float64, -inf in float32 (reported on issue 28), so no -inf here
row(gelu.GELUFunction, "F.gelu, exact and tanh", lambda a: (gelu.gelu(a), gelu.gelu(a, approximate="tanh")),
    lambda a: (TF.gelu(a), TF.gelu(a, approximate="tanh")), one(extremes=(NAN, INF) + FINITE))
row(ScaledDotProductAttention, "F.scaled_dot_product_attention, is_causal", _fused_sdpa,
    lambda q, k, v, causal: TF.scaled_dot_product_attention(q, k, v, is_causal=causal), attention_operands)

# --- no counterpart --------------------------------------------------------------------------
_LAYER = "a fused step of a layer, no torch op of its own; tests/test_torch_parity.py compares the layer with torch's "
NO_COUNTERPART = {
    rs.GRUStep: _LAYER + "nn.GRUCell (test_cells_match_pytorch)",
    rs.LSTMStep: _LAYER + "nn.LSTMCell (test_lstm_cell_matches_pytorch)",
    gs.GRUSequence: _LAYER + "nn.GRU (test_sequence_layers_with_lengths_match_pytorch)",
    lseq.LSTMSequence: _LAYER + "nn.LSTM (test_sequence_layers_with_lengths_match_pytorch)",
    aa.AdditiveAttention: "Bahdanau's score v^T tanh(W q + U k) in one node: torch has no such op; tests/test_ops_fused.py "
                          "checks it against its numpy reference",
    ad.AttentiveGRUDecoder: "a whole attentive GRU decoder in one node: torch has no such op; tests/test_fused_switch.py "
                            "checks it against the unfused layers",
}
