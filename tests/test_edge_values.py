"""Edge values as PyTorch treats them: NaN (where the gradient goes, topk's order, a beam's
score), a norm at zero, empty dims and 0-d tensors, the dtypes of einsum and rounded division, and
clear errors (naming the op) for the counts, sizes and bounds PyTorch refuses."""
import math

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn.functional as F
from tinyattn.models.decoding import Hypothesis, beam_search

torch = pytest.importorskip("torch")

NAN, INF = math.nan, math.inf


def _grads(fn, *values, dtype=np.float64, upstream=None, layout=lambda a: a):
    """fn's output and the gradients of its inputs, in tinyattn and in torch (same fn, module `m`)."""
    rng = np.random.default_rng(0)
    arrays = [layout(np.asarray(v, dtype)) for v in values]
    ours = [ta.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(np.ascontiguousarray(a), requires_grad=True) for a in arrays]
    y, yt = fn(ta, *ours), fn(torch, *theirs)
    g = rng.standard_normal(yt.shape).astype(dtype) if upstream is None else np.broadcast_to(upstream, yt.shape)
    y.backward(ta.tensor(np.array(g)))
    yt.backward(torch.tensor(np.array(g)))
    np.testing.assert_allclose(y.data, yt.detach().numpy(), rtol=1e-6, equal_nan=True)
    for x, xt in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(x.grad), xt.grad.numpy(), rtol=1e-6, atol=1e-12, equal_nan=False)


def _elu(m, x):
    return F.elu(x) if m is ta else torch.nn.functional.elu(x)


# --- NaN --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", [
    lambda m, x: x.clamp(-1, 1),
    lambda m, x: x.clamp(max=0.5),
    _elu,
    lambda m, x: x.relu(),
], ids=["clamp", "clamp max", "elu", "relu"])
def test_a_nan_entry_routes_the_gradient_as_torch(fn, dtype):
    _grads(fn, [[NAN, 0.5, 2.0], [-3.0, NAN, -0.25]], dtype=dtype, layout=lambda a: a.T)


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_and_minimum_with_a_nan_give_each_operand_the_whole_gradient(op):
    _grads(lambda m, a, b: getattr(m, op)(a, b), [1.0, NAN, 2.0, NAN], [NAN, 1.0, 2.0, NAN])
    _grads(lambda m, a, b: getattr(m, op)(a, b), [[1.0], [NAN]], [NAN, 0.0, 3.0])  # broadcast


@pytest.mark.parametrize("fill", [
    lambda m, x, c: x.masked_fill(c, -INF),
    lambda m, x, c: m.where(c, -INF, x),
    lambda m, x, c: m.where(c, x, INF),
], ids=["masked_fill", "where(c, -inf, x)", "where(c, x, inf)"])
def test_a_nan_gradient_at_a_filled_place_does_not_reach_x(fill):
    # exp(y) * y has gradient exp(y) (1 + y): 0 * -inf = NaN at y = -inf, which torch's where drops
    cond = [[True, False, False], [False, False, True]]
    _grads(lambda m, x: (lambda y: y.exp() * y)(fill(m, x, m.tensor(cond))), [[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])


def test_topk_ranks_nan_first_as_torch():
    data = np.array([[INF, NAN, -INF, 3.0, NAN], [1.0, 2.0, NAN, 0.0, -1.0]])
    for k, largest in ((4, True), (3, False)):  # (torch's order among tied NaNs at the end is its own)
        ours, theirs = ta.tensor(data).topk(k, largest=largest), torch.tensor(data).topk(k, largest=largest)
        np.testing.assert_array_equal(ours.indices.data, theirs.indices.numpy())
        np.testing.assert_array_equal(ours.values.data, theirs.values.numpy())
    ours, theirs = ta.tensor(data.T).topk(2, dim=0), torch.tensor(data.T).topk(2, dim=0)  # transposed
    np.testing.assert_array_equal(ours.indices.data, theirs.indices.numpy())


class _NanAfterWordTwo:
    """A translator whose every hypothesis that wrote word 2 gets NaN logits (a broken model)."""
    bos_id = 1

    def begin(self, source, lengths):
        return None, {"row": np.arange(len(source))}

    def advance(self, tokens, memory, state):
        logits = np.tile(np.array([-1.0, -5.0, 0.5, 1.0]), (len(tokens), 1))
        logits[tokens == 2] = NAN
        return logits, state, None


def test_beam_search_does_not_hide_a_nan_log_probability():
    best = beam_search(_NanAfterWordTwo(), np.zeros((1, 3), np.int64), np.array([3]), eos_id=0, beam_size=2, max_len=4)
    assert isinstance(best[0], Hypothesis) and math.isnan(best[0].score)


# --- a norm at zero -------------------------------------------------------------------------

@pytest.mark.parametrize("p", [3, 0.5, 1.5, 1])
def test_a_norm_at_zero_has_gradient_zero_as_torch(p):
    _grads(lambda m, x: x.norm(p), [0.0, 0.0, 0.0], upstream=1.0)
    _grads(lambda m, x: x.norm(p, dim=1), [[0.0, 0.0], [0.0, 2.0], [1.0, -3.0]], layout=lambda a: a.T.copy().T)
    _grads(lambda m, x: x.norm(p, dim=1, keepdim=True), np.zeros((2, 3), np.float32), dtype=np.float32)


# --- empty dims and 0-d tensors -----------------------------------------------------------------

def test_chunk_of_an_empty_dim_gives_the_pieces_asked_for():
    ours, theirs = ta.zeros(2, 0).chunk(3, 1), torch.zeros(2, 0).chunk(3, 1)
    assert [p.shape for p in ours] == [tuple(p.shape) for p in theirs]


@pytest.mark.parametrize("keepdim", [False, True])
def test_logsumexp_over_an_empty_dim_keeps_the_graph(keepdim):
    x = ta.zeros(2, 0, dtype=np.float64, requires_grad=True)
    y = x.logsumexp(1, keepdim=keepdim)
    xt = torch.zeros(2, 0, dtype=torch.float64, requires_grad=True)
    yt = xt.logsumexp(1, keepdim=keepdim)
    np.testing.assert_array_equal(y.data, yt.detach().numpy())
    y.sum().backward()
    yt.sum().backward()
    assert np.asarray(x.grad).shape == tuple(xt.grad.shape) == (2, 0)


def test_a_dim_out_of_range_of_a_0d_tensor_is_an_index_error():
    for dim in (0, -1):
        assert ta.tensor(3.0).squeeze(dim).shape == tuple(torch.tensor(3.0).squeeze(dim).shape)
    with pytest.raises(IndexError, match="squeeze: axis 10 is out of range"):
        ta.tensor(3.0).squeeze(10)
    with pytest.raises(IndexError, match="squeeze"):
        ta.ones(2).squeeze(2)
    with pytest.raises(IndexError, match="unbind: a 0-d tensor"):
        ta.tensor(3.0).unbind()


# --- dtypes ---------------------------------------------------------------------------------

def test_einsum_of_float32_and_int64_is_float32():
    out = ta.einsum("i,i->", ta.ones(3), ta.tensor([1, 2, 3]))
    assert out.dtype == np.float32 and out.item() == 6.0


@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_rounded_division_keeps_torchs_dtype_and_values(mode):
    a, b = np.array([7, -7, 7, -7, 6, 0], np.int32), np.array([2, 2, -2, -2, 3, 5], np.int32)
    for other, other_t in ((ta.tensor(b), torch.tensor(b)), (2, 2), (ta.tensor(b.astype(np.int64)), torch.tensor(b.astype(np.int64)))):
        ours, theirs = ta.tensor(a).div(other, rounding_mode=mode), torch.tensor(a).div(other_t, rounding_mode=mode)
        assert ours.dtype == np.dtype(str(theirs.dtype).split(".")[1])
        np.testing.assert_array_equal(ours.data, theirs.numpy())
    with pytest.raises(ZeroDivisionError, match="div: integer division by zero"):
        ta.tensor(a).div(0, rounding_mode=mode)


@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_backward_through_a_rounded_float_division_gives_zero(mode):
    _grads(lambda m, a, b: a.div(b, rounding_mode=mode) * a, [[1.5, -2.5, 3.25]], [[2.0], [-0.5]])
    _grads(lambda m, a: a.div(2.0, rounding_mode=mode), [1.5, -2.5], dtype=np.float32)


# --- values PyTorch refuses are refused by name; the edges it accepts work ----------------------

@pytest.mark.parametrize("call, error, words", [
    (lambda: ta.multinomial(ta.tensor([1.0, 2.0]), -1), ValueError, "multinomial: num_samples must be at least 1"),
    (lambda: ta.multinomial(ta.tensor([1.0, 2.0]), 0), ValueError, "multinomial: num_samples"),
    (lambda: ta.multinomial(ta.tensor([1.0, 2.0]), 1.5), TypeError, "multinomial: num_samples must be a whole number"),
    (lambda: F.pad(ta.ones(2, 3), (-5, 0)), ValueError, r"pad: widths \(-5, 0\) cut 5 entries from dim 1 of \(2, 3\)"),
    (lambda: F.pad(ta.ones(2, 3), (-2, -2)), ValueError, "pad: widths"),
    (lambda: F.pad(ta.ones(2, 3), (1.5, 0)), TypeError, "pad: each width must be a whole number"),
    (lambda: ta.ones(2).repeat(-1, 1), ValueError, "repeat: each number of copies must be at least 0"),
    (lambda: ta.ones(3).topk(1.5), TypeError, "topk: k must be a whole number"),
    (lambda: ta.ones(3).split(1.5), TypeError, "split: the piece size must be a whole number"),
    (lambda: ta.ones(3).split([1.5, 1.5]), TypeError, "split: each size must be a whole number"),
    (lambda: ta.ones(3).chunk(1.5), TypeError, "chunk: chunks must be a whole number"),
    (lambda: ta.maximum(ta.ones(2, 3), ta.ones(4)), ValueError, r"maximum: shapes \(2, 3\) and \(4,\) do not broadcast"),
    (lambda: ta.ones(2, 3).clamp(ta.ones(4)), ValueError, r"clamp: shapes \(2, 3\) and \(4,\) do not broadcast"),
    (lambda: ta.ones(2, 3).clamp_(max=ta.ones(4)), ValueError, r"clamp: shapes \(2, 3\) and \(4,\)"),
    (lambda: ta.ones(2, 3).clamp("a"), TypeError, "clamp: min must be a Tensor or a number, got 'a'"),
    (lambda: ta.minimum(ta.ones(2), "a"), TypeError, "minimum: other must be a Tensor or a number"),
    (lambda: ta.ones(2).add(ta.ones(2), alpha=ta.tensor(2.0)), TypeError, "add: alpha must be a number, got Tensor"),
    (lambda: ta.ones(2).sub(ta.ones(2), alpha=ta.tensor(2.0)), TypeError, "sub: alpha must be a number"),
    (lambda: ta.full_like(ta.ones(2), "a"), TypeError, "full_like: fill_value must be a real number"),
    (lambda: ta.ones(2, 2).tril(1.5), TypeError, "tril: diagonal must be a whole number"),
    (lambda: ta.ones(1, 2).expand(2.5, 2), TypeError, "expand: each size must be a whole number"),
    (lambda: ta.ones(1, 2).expand(-2, 2), ValueError, "expand: each size must be at least -1"),
    (lambda: ta.ones(4).unflatten(0, (1.5, 2)), TypeError, "unflatten: each size must be a whole number"),
])
def test_values_torch_refuses_are_refused_by_name(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_the_edges_torch_accepts_still_work():
    assert F.pad(ta.ones(2, 3), (-3, 0)).shape == tuple(torch.nn.functional.pad(torch.ones(2, 3), (-3, 0)).shape)
    assert ta.ones(2).repeat(0, 1).shape == tuple(torch.ones(2).repeat(0, 1).shape)
    assert ta.ones(2).add(ta.ones(2), alpha=2).data.tolist() == torch.ones(2).add(torch.ones(2), alpha=2).tolist()
    assert [p.shape for p in ta.ones(3).split(np.int64(2))] == [(2,), (1,)]
