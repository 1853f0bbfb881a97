"""Every Function of tinyattn, with sample inputs to gradcheck it on.

A case is (Function, name, fn, make_inputs): make_inputs(rng) returns the float64 tensors
(requires_grad=True) that fn(*inputs) differentiates. Samples cover broadcasting,
non-contiguous inputs and edge values, kept away from kinks (relu at 0) and ties (max).
test_gradcheck_registry.py checks them all, and fails if a Function has no case here:
a new op is not done until it is listed below. A Function none of whose samples has a
non-contiguous input is also checked on its first case with every input laid out
non-contiguously (NON_CONTIGUOUS_CASES, at the end), and the test fails if one still has none.
"""
import numpy as np

import tinyattn as ta
from tinyattn.autograd import inplace as inplace_rules
from tinyattn.autograd import rules_elementwise as ew
from tinyattn.autograd import rules_nn as nn_ops
from tinyattn.autograd import rules_reduce as red
from tinyattn.autograd import rules_shape as shp
from tinyattn.autograd.tensor import wrap

CASES = []


def case(function, name, fn, make_inputs):
    CASES.append((function, name, fn, make_inputs))


def leaf(array):
    """A float64 leaf that keeps the array's layout (strided or transposed views stay so)."""
    return wrap(np.asarray(array, dtype=np.float64) if not isinstance(array, np.ndarray) else array).requires_grad_()


def normal(*shape):
    return lambda rng: leaf(rng.standard_normal(shape))


def positive(*shape):
    return lambda rng: leaf(rng.uniform(0.5, 2.0, shape))


def transposed(*shape):
    """Non-contiguous: the transpose of a C-ordered array of the reversed shape."""
    return lambda rng: leaf(rng.standard_normal(shape[::-1]).T)


def strided(*shape):
    """Non-contiguous: every other column of a wider array."""
    return lambda rng: leaf(rng.standard_normal(shape[:-1] + (2 * shape[-1],))[..., ::2])


def away_from_zero(*shape):
    """Values with |x| >= 0.1, so relu's kink at 0 is never inside the finite difference."""
    def make(rng):
        x = rng.uniform(0.1, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
        return leaf(x)
    return make


def distinct(*shape):
    """A random permutation of well-separated values: no ties for max."""
    return lambda rng: leaf(rng.permutation(np.prod(shape)).reshape(shape) * 0.1 + 0.01)


def inputs(*makers):
    return lambda rng: tuple(make(rng) for make in makers)


# --- element-wise ------------------------------------------------------------------------
case(ew.Add, "broadcast rows", lambda a, b: a + b, inputs(normal(3, 4), normal(4)))
case(ew.Add, "broadcast both", lambda a, b: a + b, inputs(normal(2, 1, 3), normal(4, 1)))
case(ew.Add, "number and strided", lambda a: 2.5 + a, inputs(strided(3, 4)))
case(ew.Sub, "broadcast column", lambda a, b: a - b, inputs(normal(3, 4), normal(3, 1)))
case(ew.Sub, "number minus tensor", lambda a: 1.0 - a, inputs(transposed(3, 4)))
case(ew.Mul, "broadcast", lambda a, b: a * b, inputs(normal(2, 3, 4), normal(3, 1)))
case(ew.Mul, "same node twice", lambda a: a * a, inputs(normal(5)))
case(ew.Mul, "one number per row (the row-scaling kernel)", lambda a, s: s * a, inputs(normal(2, 3, 4), normal(2, 3, 1)))
case(ew.Mul, "one number per column (the column-scaling kernel)", lambda a, v: a * v, inputs(normal(2, 3, 4), normal(4)))
case(ew.Div, "broadcast", lambda a, b: a / b, inputs(normal(2, 3), positive(3)))
case(ew.Div, "number over tensor", lambda b: 1.0 / b, inputs(positive(4, 2)))
case(ew.Neg, "plain", lambda a: -a, inputs(transposed(2, 3)))
case(ew.RoundedDiv, "floor and trunc, broadcast, transposed (gradient 0)",
     lambda a, b: (a.div(b, rounding_mode="floor"), a.div(b, rounding_mode="trunc")), inputs(transposed(2, 3), positive(3)))
case(ew.Pow, "fractional", lambda a: a ** 2.5, inputs(positive(3, 2)))
case(ew.Pow, "negative", lambda a: a ** -1.5, inputs(positive(4)))
case(ew.Pow, "integer, any sign", lambda a: a ** 3, inputs(normal(3, 3)))
case(ew.Abs, "away from the kink", lambda a: abs(a), inputs(away_from_zero(3, 4)))
case(ew.Exp, "plain", lambda a: a.exp(), inputs(normal(3, 4)))
case(ew.Log, "positive", lambda a: a.log(), inputs(positive(3, 4)))
case(ew.Sqrt, "positive", lambda a: a.sqrt(), inputs(positive(3, 4)))
case(ew.Tanh, "plain", lambda a: a.tanh(), inputs(strided(2, 5)))
case(ew.Sigmoid, "plain", lambda a: a.sigmoid(), inputs(normal(3, 4)))
case(ew.Sigmoid, "large values", lambda a: (a * 8.0).sigmoid(), inputs(normal(6)))
case(ew.Relu, "away from the kink", lambda a: a.relu(), inputs(away_from_zero(3, 4)))
case(ew.Cast, "clone: float64 to float64", lambda a: a.clone(), inputs(normal(3)))
case(ew.PowOfNumber, "2.5 ** x", lambda a: 2.5 ** a, inputs(normal(3, 2)))
case(ew.PowOfNumber, "0.3 ** x, transposed", lambda a: 0.3 ** a, inputs(transposed(2, 3)))

# --- reductions -----------------------------------------------------------------------------
case(red.Sum, "all", lambda a: a.sum(), inputs(normal(3, 4)))
case(red.Sum, "axes, keepdims", lambda a: a.sum(axis=(0, 2), keepdims=True), inputs(transposed(2, 3, 4)))
case(red.Sum, "last axis", lambda a: a.sum(axis=-1), inputs(normal(2, 3, 4)))
case(red.Mean, "all", lambda a: a.mean(), inputs(normal(3, 4)))
case(red.Mean, "axis 1", lambda a: a.mean(axis=1), inputs(strided(2, 3, 4)))
case(red.Max, "all", lambda a: a.max(), inputs(distinct(3, 4)))
case(red.Max, "axis, keepdims", lambda a: a.max(axis=-1, keepdims=True), inputs(distinct(2, 3, 4)))

# --- shapes ---------------------------------------------------------------------------------
case(shp.Reshape, "plain", lambda a: a.reshape(4, 3), inputs(normal(2, 6)))
case(shp.Reshape, "non-contiguous", lambda a: a.reshape(-1), inputs(transposed(3, 4)))
case(shp.Permute, "transpose", lambda a: a.transpose(0, 2), inputs(normal(2, 3, 4)))
case(shp.Permute, ".T", lambda a: a.T, inputs(normal(3, 5)))
case(shp.GetItem, "slices", lambda a: a[1:, ::-2], inputs(normal(3, 5)))
case(shp.GetItem, "repeated rows (embedding)", lambda w: w[np.array([[0, 2, 0], [1, 0, 0]])], inputs(normal(4, 3)))
case(shp.GetItem, "one element per row", lambda k: k[np.arange(3), np.array([2, 0, 2])], inputs(normal(3, 4, 2)))
case(shp.GetItem, "bool mask", lambda a: a[np.array([True, False, True])], inputs(normal(3, 2)))
case(shp.Cat, "axis 1", lambda a, b: ta.cat([a, b], axis=1), inputs(normal(2, 3), transposed(2, 4)))
case(shp.Stack, "new axis 1", lambda a, b, c: ta.stack([a, b, c], axis=1), inputs(normal(2, 3), normal(2, 3), strided(2, 3)))
case(shp.Unbind, "axis 1, some slices unused", lambda a: ta.unbind(a, axis=1)[::2], inputs(transposed(2, 5, 3)))
case(ew.Where, "broadcast", lambda a, b: ta.where(np.array([True, False, True]), a, b), inputs(normal(2, 3), normal(2, 1)))
case(ew.Where, "number branch", lambda a: ta.where(np.array([[True], [False]]), a, 0.0), inputs(normal(2, 3)))
case(shp.MaskedFill, "broadcast mask", lambda a: a.masked_fill(np.array([False, True, False]), -1.0), inputs(normal(2, 3)))

# --- matmul, softmax, losses --------------------------------------------------------------------
case(nn_ops.MatMul, "2-D", lambda a, b: a @ b, inputs(normal(3, 4), normal(4, 5)))
case(nn_ops.MatMul, "broadcast batch", lambda a, b: a @ b, inputs(normal(2, 1, 3, 4), normal(3, 4, 2)))
case(nn_ops.MatMul, "transposed operands", lambda a, b: a @ b, inputs(transposed(3, 4), transposed(2, 4, 5)))
case(nn_ops.MatMul, "vector @ matrix", lambda a, b: a @ b, inputs(normal(4), normal(2, 4, 3)))
case(nn_ops.MatMul, "matrix @ vector", lambda a, b: a @ b, inputs(normal(3, 4), normal(4)))
case(nn_ops.MatMul, "vector @ vector", lambda a, b: a @ b, inputs(normal(4), strided(4)))
case(nn_ops.Softmax, "last axis", lambda a: a.softmax(-1), inputs(normal(2, 3, 5)))
case(nn_ops.Softmax, "axis 1, non-contiguous", lambda a: a.softmax(1), inputs(transposed(2, 4, 3)))
case(nn_ops.Softmax, "mask with an empty row", lambda a: a.softmax(-1, mask=np.array([[True, False, True], [False, False, False]])),
     inputs(normal(2, 2, 3)))
case(nn_ops.LogSoftmax, "last axis", lambda a: a.log_softmax(-1), inputs(normal(3, 5)))
case(nn_ops.LogSoftmax, "axis 0", lambda a: a.log_softmax(0), inputs(strided(4, 3)))
case(nn_ops.CrossEntropy, "(N, C)", lambda z: ta.cross_entropy(z, np.array([0, 3, 1, 3])), inputs(normal(4, 5)))
case(nn_ops.CrossEntropy, "(B, T, C), ignore_index", lambda z: ta.cross_entropy(z, np.array([[1, 0, -1], [2, -1, -1]]), ignore_index=-1),
     inputs(normal(2, 3, 4)))

# --- picking, padding, einsum (the ops tutorials reach for) ------------------------------------

case(shp.Gather, "dim 1, repeated picks, index narrower than x", lambda a: a.gather(1, np.array([[0, 0], [3, 1], [2, 2]])),
     inputs(transposed(3, 4)))
case(shp.Gather, "topk's values (dim 0)", lambda a: ta.topk(a, 2, dim=0).values, inputs(distinct(4, 3)))
case(shp.Gather, "max(dim) and min(dim): the gradient goes to the index", lambda a: (a.max(1).values, a.min(0, keepdim=True).values),
     inputs(distinct(3, 4)))
case(shp.Cumsum, "dim 1, non-contiguous", lambda a: a.cumsum(1), inputs(strided(3, 4)))
case(shp.Cumsum, "dim 0", lambda a: ta.cumsum(a, dim=0), inputs(normal(4, 2)))
case(shp.Pad, "last two dims, one width negative", lambda a: ta.nn.functional.pad(a, (1, 2, -1, 1), value=0.5),
     inputs(transposed(2, 3, 4)))
case(shp.Expand, "new leading dim and a size-1 dim", lambda a: a.expand(2, 3, -1), inputs(normal(1, 4)))
case(shp.Reshape, "repeat: an expand of every element, then a reshape", lambda a: a.repeat(2, 1, 3), inputs(transposed(2, 3)))
case(nn_ops.Einsum, "batched matmul bij,bjk->bik", lambda a, b: ta.einsum("bij,bjk->bik", a, b), inputs(normal(2, 3, 4), transposed(2, 4, 5)))
case(nn_ops.Einsum, "attention scores bhqd,bhkd->bhqk", lambda q, k: ta.einsum("bhqd,bhkd->bhqk", q, k),
     inputs(normal(2, 2, 3, 4), strided(2, 2, 5, 4)))
case(nn_ops.Einsum, "outer product i,j->ij", lambda u, v: ta.einsum("i,j->ij", u, v), inputs(normal(3), normal(4)))
case(nn_ops.Einsum, "trace ii-> and a sum over a letter only one operand has", lambda a, b: (ta.einsum("ii->", a), ta.einsum("ij,k->k", b, a[0])),
     inputs(normal(3, 3), normal(2, 4)))
case(nn_ops.Einsum, "three operands, implicit output", lambda a, b, c: ta.einsum("ij,jk,kl", a, b, c), inputs(normal(2, 3), normal(3, 4), normal(4, 2)))

# The composed tutorial ops, each listed under the Function that makes its output (kept away from
# ties and kinks: at a tie the one-sided slopes differ, and test_tutorial_ops_parity.py checks
# PyTorch's choice there).
import tinyattn.nn.functional as F  # noqa: E402

_T01 = np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
case(nn_ops.CrossEntropy, "reduction='none', label smoothing, ignore_index -100",
     lambda z: F.cross_entropy(z, np.array([2, -100, 0, 1]), reduction="none", label_smoothing=0.3), inputs(transposed(4, 3)))
case(nn_ops.CrossEntropy, "(N, C, d) as PyTorch, reduction='sum', label smoothing",
     lambda z: F.cross_entropy(z, np.array([[1, 0], [2, 2]]), reduction="sum", label_smoothing=0.1), inputs(normal(2, 3, 2)))
case(shp.MaskedFill, "tril and triu (diagonal 1)", lambda a: (a.tril(), ta.triu(a, diagonal=1)), inputs(transposed(2, 3, 4)))
case(shp.Split, "split by sizes, chunk", lambda a: a.split([1, 3], dim=1) + a.chunk(2, dim=0), inputs(transposed(3, 4)))
case(shp.Split, "last axis, a piece unused", lambda a: a.split(2, -1)[1:], inputs(strided(2, 3, 5)))
case(ew.Cast, "flip two dims (a copy of the reversed view)", lambda a: a.flip((0, 2)), inputs(strided(2, 3, 4)))
case(shp.GetItem, "one element: a 0-d view", lambda a: (a[1, 2], a[0][1]), inputs(transposed(3, 4)))


def _changed_through_views(a, b):
    """In-place changes through views of a copy of a: its history becomes CopySlices (inplace.py)."""
    h = a * 1.0
    h.T[1][1:].mul_(b)  # a column of a transposed input, by a tensor in the graph
    h[0, 2].add_(h[2, 0] * 2)  # one element, by another
    return h


def _element_filled(a):
    h = a * 2.0
    h[1:][0, 1].fill_(2.0)  # an element of a view: no gradient to what was there
    return h


case(inplace_rules.CopySlices, "column and element of a transposed input", _changed_through_views,
     inputs(transposed(3, 4), normal(2)))
case(inplace_rules.CopySlices, "a 0-d element of a view filled", _element_filled, inputs(strided(3, 3)))
case(shp.Reshape, "squeeze, flatten, unflatten, contiguous", lambda a: (a.reshape(1, 3, 1, 4).squeeze(), a.flatten(),
     a.unflatten(1, (2, 2)), a.contiguous()), inputs(transposed(3, 4)))
case(ew.Where, "maximum and minimum, broadcast", lambda a, b: (ta.maximum(a, b), b.minimum(a)), inputs(distinct(3, 4), normal(4)))
case(ew.Where, "clamp by numbers and by a tensor", lambda a, lo: (a.clamp(-0.25, 0.45), ta.clip(a, min=lo)),
     inputs(distinct(3, 4), lambda rng: leaf(np.array([0.05, 0.37, 0.8, 0.5]))))
case(ew.Where, "norm (2), leaky_relu, elu, softplus", lambda a: (a.norm(dim=1), F.leaky_relu(a, 0.1), F.elu(a * 2), F.softplus(a * 4, 2.0, 3.0)),
     inputs(away_from_zero(3, 4)))
case(red.Sum, "norm p=1 and p=3", lambda a: (a.norm(1, dim=0), a.norm(3) ** 3.0), inputs(away_from_zero(3, 4)))
case(ew.Div, "var over two dims", lambda a: a.var((0, 2)), inputs(strided(2, 3, 4)))
case(ew.Sqrt, "std, correction 0", lambda a: a.std(1, correction=0, keepdim=True), inputs(normal(3, 4)))
case(shp.Reshape, "logsumexp", lambda a: (a * 40).logsumexp(1), inputs(normal(3, 4)))
case(ew.Neg, "min over everything", lambda a: a.min(), inputs(distinct(3, 4)))
case(red.Mean, "binary cross-entropy (weighted) and with logits (pos_weight)", lambda p, z: (
     F.binary_cross_entropy(p, _T01, weight=np.array([1.0, 2.0, 0.5])),
     F.binary_cross_entropy_with_logits(z * 5, _T01, pos_weight=np.array([2.0, 1.0, 0.5]))),
     inputs(lambda rng: leaf(rng.uniform(0.1, 0.9, (2, 3))), away_from_zero(2, 3)))
from tinyattn.nn import losses  # noqa: E402
case(losses.BinaryCrossEntropy, "probabilities and soft targets", lambda p, t: F.binary_cross_entropy(p, t, reduction="none"),
     inputs(lambda rng: leaf(rng.uniform(0.1, 0.9, (2, 3))), lambda rng: leaf(rng.uniform(0.0, 1.0, (2, 3)))))

# --- layers (tinyattn.nn) ---------------------------------------------------------------------
from tinyattn.nn import layers  # noqa: E402

_W = lambda rng: leaf(rng.standard_normal((3, 4)))  # noqa: E731  a (out=3, in=4) weight
case(layers.LinearFunction, "(B, T, in) with bias", lambda x, w, b: layers.LinearFunction.apply(x, w, b),
     inputs(normal(2, 5, 4), _W, normal(3)))
case(layers.LinearFunction, "non-contiguous input, no bias", lambda x, w: layers.LinearFunction.apply(x, w, None),
     inputs(transposed(6, 4), _W))
# The padding row's gradient is zero by design (it is not the true gradient), so the sample
# looks up other rows; test_nn.py checks that the padding row gets nothing.
case(layers.EmbeddingFunction, "repeated indices",
     lambda w: layers.EmbeddingFunction.apply(w, np.array([[1, 0, 3], [3, 3, 2]]), 4), inputs(normal(5, 3)))
case(layers.LayerNormFunction, "last axis, affine",
     lambda x, w, b: layers.LayerNormFunction.apply(x, w, b, (2,), 1e-5), inputs(normal(2, 3, 5), normal(5), normal(5)))
case(layers.LayerNormFunction, "weight, no bias (bias=False)",
     lambda x, w: layers.LayerNormFunction.apply(x, w, None, (1,), 1e-5), inputs(transposed(3, 4), normal(4)))
case(layers.LayerNormFunction, "last two axes, no affine",
     lambda x: layers.LayerNormFunction.apply(x, None, None, (1, 2), 1e-5), inputs(strided(2, 3, 4)))

# --- fused recurrent steps --------------------------------------------------------------------
from tinyattn.nn.fused import recurrent_steps as rs  # noqa: E402

_KEEP = np.array([[True], [False], [True]])  # the middle sequence has ended: its state is frozen
case(rs.GRUStep, "plain", lambda gi, h, w, b: rs.GRUStep.apply(gi, h, w, b, None),
     inputs(normal(3, 12), normal(3, 4), normal(12, 4), normal(12)))
case(rs.GRUStep, "frozen row, no bias", lambda gi, h, w: rs.GRUStep.apply(gi, h, w, None, _KEEP),
     inputs(normal(3, 12), strided(3, 4), normal(12, 4)))
case(rs.LSTMStep, "plain", lambda gi, h, c, w, b: rs.LSTMStep.apply(gi, h, c, w, b, None),
     inputs(normal(3, 16), normal(3, 4), normal(3, 4), normal(16, 4), normal(16)))
case(rs.LSTMStep, "frozen row", lambda gi, h, c, w, b: rs.LSTMStep.apply(gi, h, c, w, b, _KEEP),
     inputs(normal(3, 16), normal(3, 4), transposed(3, 4), normal(16, 4), normal(16)))

# --- attention ----------------------------------------------------------------------------------
from tinyattn.nn import scaled_dot_product_attention as sdpa_spelling  # noqa: E402
from tinyattn.nn.fused.dot_product_attention_node import ScaledDotProductAttention  # noqa: E402


def _fused_sdpa(*args, **kwargs):
    """F.scaled_dot_product_attention's argument handling into the fused node, whatever TINYATTN_FUSED says."""
    with ta.fused(True):
        return sdpa_spelling.scaled_dot_product_attention(*args, **kwargs)


_PAD = np.array([[True, True, False, True], [False, False, False, False]])  # batch 1 attends to nothing
case(ScaledDotProductAttention, "3-D with padding mask and an empty row",
     lambda q, k, v: _fused_sdpa(q, k, v, mask=_PAD[:, None]), inputs(normal(2, 3, 5), normal(2, 4, 5), normal(2, 4, 6)))
case(ScaledDotProductAttention, "4-D heads, causal, non-contiguous",
     lambda q, k, v: _fused_sdpa(q, k, v, mask=np.tril(np.ones((4, 4), bool)), scale=0.7),
     inputs(transposed(2, 3, 4, 5), normal(2, 3, 4, 5), strided(2, 3, 4, 2)))
# bias: a learned additive bias (PyTorch's float attn_mask), broadcast over the batch, with -inf
# hiding one key; keep: a fixed dropout multiplier (0 or 1/(1-p)) of the weights.
_KEEP_HALF = np.random.default_rng(0).choice([0.0, 2.0], (2, 3, 4))
_HIDE = np.where(np.eye(3, 4, k=1, dtype=bool), -np.inf, 0.0)
case(ScaledDotProductAttention, "additive bias (trained) and -inf bias",
     lambda q, k, v, b: _fused_sdpa(q, k, v, bias=b + _HIDE),
     inputs(normal(2, 2, 3, 5), normal(2, 2, 4, 5), normal(2, 2, 4, 3), normal(2, 1, 3, 4)))
case(ScaledDotProductAttention, "dropout multiplier, mask",
     lambda q, k, v: ScaledDotProductAttention.apply(q, k, v, _PAD[:, None], 0.5, None, _KEEP_HALF),
     inputs(normal(2, 3, 5), normal(2, 4, 5), normal(2, 4, 6)))

# --- activations -----------------------------------------------------------------------------
from tinyattn.nn import gelu  # noqa: E402

case(gelu.GELUFunction, "exact (erf), wide range", lambda x: gelu.gelu(x * 3.0), inputs(strided(3, 5)))
case(gelu.GELUFunction, "tanh approximation", lambda x: gelu.gelu(x * 3.0, approximate="tanh"), inputs(normal(4, 3)))

from tinyattn.nn.fused import additive_attention_node as aa  # noqa: E402

# (query, W, projected keys U k, v, values); the second batch entry attends to nothing
case(aa.AdditiveAttention, "two queries, padding mask with an empty row",
     lambda q, W, uk, v, values: aa.AdditiveAttention.apply(q, W, uk, v, values, _PAD[:, None]),
     inputs(normal(2, 2, 3), normal(5, 3), normal(2, 4, 5), normal(1, 5), strided(2, 4, 3)))
case(aa.AdditiveAttention, "causal (Tq, Tk) mask, non-contiguous query",
     lambda q, W, uk, v, values: aa.AdditiveAttention.apply(q, W, uk, v, values, np.tril(np.ones((4, 4), bool))),
     inputs(transposed(2, 4, 3), normal(5, 3), normal(2, 4, 5), normal(1, 5), normal(2, 4, 2)))

from tinyattn.nn.fused import attentive_decoder as ad  # noqa: E402

# (embedded (B, T, E), state (B, H), U k (B, S, h), values (B, S, Dv), W (h, H), v (1, h),
#  weight_ih (3H, E + Dv), weight_hh (3H, H), bias_ih, bias_hh): B 2, T 3, E 2, H 4, S 4, h 5, Dv 3
case(ad.AttentiveGRUDecoder, "padding mask with an empty row, biases, one row stopping after 1 step",
     lambda e, s, uk, values, W, v, w_ih, w_hh, b_ih, b_hh: ad.AttentiveGRUDecoder.apply(
         e, s, uk, values, W, v, w_ih, w_hh, b_ih, b_hh, _PAD[:, None], np.array([1, 3])),
     inputs(normal(2, 3, 2), normal(2, 4), normal(2, 4, 5), strided(2, 4, 3), normal(5, 4), normal(1, 5),
            normal(12, 5), normal(12, 4), normal(12), normal(12)))
case(ad.AttentiveGRUDecoder, "no mask, no biases, non-contiguous words",
     lambda e, s, uk, values, W, v, w_ih, w_hh: ad.AttentiveGRUDecoder.apply(
         e, s, uk, values, W, v, w_ih, w_hh, None, None, None, None),
     inputs(transposed(2, 3, 2), normal(2, 4), normal(2, 4, 5), normal(2, 4, 3), normal(5, 4), normal(1, 5),
            normal(12, 5), normal(12, 4)))

from tinyattn.nn.fused import gru_sequence as gs  # noqa: E402

# (gi (B, T, 3H), h0 (B, H), weight_hh (3H, H), bias_hh): B 3, T 4, H 2; rows of lengths 4, 1, 3
case(gs.GRUSequence, "lengths, forward in time",
     lambda gi, h0, w, b: gs.GRUSequence.apply(gi, h0, w, b, np.array([4, 1, 3]), False),
     inputs(normal(3, 4, 6), normal(3, 2), normal(6, 2), normal(6)))
case(gs.GRUSequence, "no lengths, backward in time, no bias, non-contiguous input",
     lambda gi, h0, w: gs.GRUSequence.apply(gi, h0, w, None, None, True),
     inputs(transposed(3, 4, 6), strided(3, 2), normal(6, 2)))

from tinyattn.nn.fused import lstm_sequence as ls  # noqa: E402

# (gi (B, T, 4H), h0, c0 (B, H), weight_hh (4H, H), bias_hh): B 3, T 4, H 2; rows of lengths 4, 1, 3
case(ls.LSTMSequence, "lengths, backward in time",
     lambda gi, h0, c0, w, b: ls.LSTMSequence.apply(gi, h0, c0, w, b, np.array([4, 1, 3]), True),
     inputs(normal(3, 4, 8), normal(3, 2), normal(3, 2), normal(8, 2), normal(8)))
case(ls.LSTMSequence, "no lengths, forward in time, no bias, non-contiguous input",
     lambda gi, h0, c0, w: ls.LSTMSequence.apply(gi, h0, c0, w, None, None, False),
     inputs(transposed(3, 4, 8), normal(3, 2), strided(3, 2), normal(8, 2)))


# --- the ops of issue 28 (tests/test_math_ops_parity.py checks them against PyTorch) --------
def away_from(points, low, high, *shape, layout=lambda a: a):
    """Uniform in [low, high), each value at least 0.1 from every kink in `points` (laid out by `layout`)."""
    def make(rng):
        x = rng.uniform(low, high, shape)
        for p in points:
            x = np.where(abs(x - p) < 0.1, p + 0.1 * np.sign(x - p + 1e-9) + 0.05, x)
        return leaf(layout(x))
    return make


_FRACTIONS = lambda rng: leaf((rng.integers(-3, 3, (4, 3)) + rng.choice([0.3, 0.62], (4, 3))).T)  # noqa: E731
_WEIGHT = np.array([0.5, 2.0, 1.0, 1.5])
case(ew.PowTensor, "tensor ** tensor, broadcast, transposed base", lambda a, b: a ** b, inputs(
     lambda rng: leaf(rng.uniform(0.5, 2.0, (4, 3)).T), normal(4)))
case(ew.PowTensor, "ta.pow, 0-d exponent, strided base", lambda a, b: ta.pow(a, b), inputs(
     lambda rng: leaf(rng.uniform(0.5, 2.0, (3, 8))[:, ::2]), lambda rng: leaf(np.array(1.7))))
case(ew.Rsqrt, "transposed", lambda a: a.rsqrt(), inputs(lambda rng: leaf(rng.uniform(0.5, 2.0, (4, 3)).T)))
case(ew.Log2, "strided", lambda a: ta.log2(a), inputs(lambda rng: leaf(rng.uniform(0.5, 2.0, (3, 8))[:, ::2])))
case(ew.Exp2, "transposed", lambda a: a.exp2(), inputs(transposed(3, 4)))
case(ew.Sin, "transposed", lambda a: a.sin(), inputs(transposed(3, 4)))
case(ew.Cos, "strided", lambda a: ta.cos(a), inputs(strided(3, 4)))
case(ew.Tan, "within (-1.2, 1.2), transposed", lambda a: a.tan(), inputs(lambda rng: leaf(rng.uniform(-1.2, 1.2, (4, 3)).T)))
case(ew.Sinh, "strided", lambda a: a.sinh(), inputs(strided(3, 4)))
case(ew.Cosh, "transposed", lambda a: ta.cosh(a), inputs(transposed(3, 4)))
case(ew.Asinh, "strided", lambda a: a.asinh(), inputs(lambda rng: leaf(3 * rng.standard_normal((3, 8))[:, ::2])))
case(ew.Acosh, "above 1, transposed", lambda a: ta.acosh(a), inputs(lambda rng: leaf(rng.uniform(1.2, 3.0, (4, 3)).T)))
case(ew.Atanh, "within (-0.8, 0.8), strided", lambda a: a.atanh(), inputs(lambda rng: leaf(rng.uniform(-0.8, 0.8, (3, 8))[:, ::2])))
case(ew.Step, "floor, ceil, round (also decimals=1), trunc, sign: zero gradient off the jumps", lambda a: (
     a.floor(), ta.ceil(a), a.round(), ta.round(a, decimals=1), a.trunc(), ta.sign(a)), inputs(_FRACTIONS))
case(ew.Lerp, "tensor weight, broadcast, transposed", lambda a, b, w: ta.lerp(a, b, w),
     inputs(transposed(3, 4), normal(4), lambda rng: leaf(rng.uniform(0.0, 1.0, (3, 1)))))
case(ew.Lerp, "number weights on both sides of 0.5", lambda a, b: (a.lerp(b, 0.25), a.lerp(b, 0.75)), inputs(strided(2, 3), normal(2, 3)))
case(ew.Hardtanh, "hardtanh and relu6 off their kinks, transposed", lambda a: (F.hardtanh(a, -1.0, 2.0), F.relu6(a)),
     inputs(away_from((-1, 0, 2, 6), -3.0, 8.0, 4, 3, layout=np.transpose)))
case(ew.Hardswish, "off the kinks at -3 and 3, strided", lambda a: F.hardswish(a),
     inputs(away_from((-3, 3), -5.0, 5.0, 3, 8, layout=lambda x: x[:, ::2])))
case(ew.Mish, "transposed, large values", lambda a: F.mish(a * 4), inputs(transposed(3, 4)))
case(ew.Where, "celu", lambda a: F.celu(a, alpha=0.7), inputs(away_from_zero(3, 4)))
case(ew.Div, "softsign", lambda a: F.softsign(a), inputs(away_from_zero(3, 4)))
case(red.Mean, "std_mean: the mean", lambda a: ta.std_mean(a, 1, keepdim=True)[1], inputs(transposed(3, 4)))
case(ew.Sqrt, "std_mean: the std, correction 0", lambda a: ta.std_mean(a, (0, 1), correction=0)[0], inputs(strided(3, 4)))
case(shp.GetItem, "repeat_interleave: an int, a tensor of counts with a 0", lambda a: (
     a.repeat_interleave(2), ta.repeat_interleave(a, ta.tensor([1, 0, 3]), dim=0)), inputs(transposed(3, 2)))
case(nn_ops.CrossEntropy, "weight=, ignore_index, label smoothing, transposed",
     lambda z: F.cross_entropy(z, np.array([3, -100, 0, 1, 3]), weight=_WEIGHT, label_smoothing=0.2), inputs(transposed(5, 4)))
case(nn_ops.CrossEntropy, "weight=, reduction='none', (N, C, d)",
     lambda z: F.cross_entropy(z, np.array([[1, 0], [3, 2]]), weight=ta.tensor(_WEIGHT), reduction="none"), inputs(normal(2, 4, 2)))
case(nn_ops.ProbabilityCrossEntropy, "soft targets (their gradient too), weight=, smoothing, transposed",
     lambda z, q: F.cross_entropy(z, q, weight=_WEIGHT, label_smoothing=0.1), inputs(transposed(5, 4), normal(5, 4)))
case(nn_ops.ProbabilityCrossEntropy, "(N, C, d), reduction='none'", lambda z, q: F.cross_entropy(z, q, reduction="none"),
     inputs(strided(2, 4, 3), lambda rng: leaf(rng.dirichlet(np.ones(4), (2, 3)).transpose(0, 2, 1))))


# --- non-contiguous samples -------------------------------------------------------------------
def non_contiguous(tensor):
    """The same values in every other place of an array twice as wide: a non-contiguous leaf
    (a tensor of one element or none stays as it is: numpy calls every such array contiguous)."""
    a = tensor.data
    if a.size <= 1:
        return tensor
    wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
    wide[..., ::2] = a
    return leaf(wide[..., ::2])


def has_non_contiguous_input(inputs):
    return any(not t.data.flags.c_contiguous for t in inputs)


def _relaid(make_inputs):
    return lambda rng: tuple(non_contiguous(t) for t in make_inputs(rng))


def _non_contiguous_cases():
    """For each Function none of whose samples above has a non-contiguous input: its first case
    again, every input laid out non-contiguously (the kernels once wrote such layouts wrong)."""
    rng, covered, derived = np.random.default_rng(0), set(), []
    for function, _, _, make_inputs in CASES:
        if has_non_contiguous_input(make_inputs(rng)):
            covered.add(function)
    for function, name, fn, make_inputs in CASES:
        if function not in covered:
            covered.add(function)
            derived.append((function, f"{name}, every input non-contiguous", fn, _relaid(make_inputs)))
    return derived


NON_CONTIGUOUS_CASES = _non_contiguous_cases()
