"""The public API walked with bad inputs: a clear Python exception naming the op, never a raw
numpy/Numba traceback and never a silently wrong answer. Each case below once went wrong."""
import json
import zipfile

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F

# --- silent wrong answers -------------------------------------------------------------------


def test_np_array_of_a_tensor_is_a_copy_and_asarray_shares():
    """numpy 2 passes copy=True from np.array: a "best weights" snapshot must not move."""
    weight = nn.Parameter(np.ones((2, 2), np.float32)).detach()
    snapshot = np.array(weight)
    weight.data -= 1.0
    assert snapshot[0, 0] == 1.0
    assert np.asarray(weight) is weight.data
    assert np.array(weight, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="cannot be viewed as another dtype without a copy"):
        np.asarray(weight, dtype=np.float64, copy=False)


@pytest.mark.parametrize("leave", [np.exp, np.asarray, np.array, lambda t: np.add(t, 1.0), lambda t: np.tanh(t) * 2])
def test_numpy_functions_refuse_a_tensor_that_requires_grad_as_pytorch_does(leave):
    """np.exp(t) went through __array__ and returned an array: the gradient was gone without a word."""
    x = ta.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"requires grad.*detach\(\)\.numpy\(\)"):
        leave(x)
    assert np.allclose(leave(x.detach()), leave(np.ones(3)))  # the way out the message names works


def test_no_grad_decorates_methods_bare_and_called():
    class Model:
        scale = 3.0

        @ta.no_grad
        def bare(self, x):
            return x * self.scale

        @ta.no_grad()
        def called(self, x):
            return x * self.scale

    x = ta.tensor([1.0, 2.0], requires_grad=True)
    for method in (Model().bare, Model().called):
        y = method(x)
        assert not y.requires_grad and y.data.tolist() == [3.0, 6.0]
    assert ta.is_grad_enabled()


class TiedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(6, 4)
        self.out = nn.Linear(4, 6, bias=False)
        self.out.weight = self.embed.weight  # the output layer reuses the embedding


def test_a_tied_weight_is_saved_under_each_name_and_loads_from_either():
    model = TiedLM()
    state = model.state_dict()
    assert list(state) == ["embed.weight", "out.weight"]
    np.testing.assert_array_equal(state["embed.weight"], state["out.weight"])
    other = TiedLM()
    other.load_state_dict(state)
    np.testing.assert_array_equal(other.out.weight.data, state["out.weight"])
    other.load_state_dict({"out.weight": state["out.weight"] * 2})  # one name is enough
    assert other.embed.weight is other.out.weight
    np.testing.assert_array_equal(other.embed.weight.data, state["out.weight"] * 2)
    with pytest.raises(RuntimeError, match="one tied parameter, but differ"):
        other.load_state_dict({"embed.weight": state["out.weight"], "out.weight": state["out.weight"] + 1})
    with pytest.raises(RuntimeError, match="missing keys: embed.weight, out.weight"):
        other.load_state_dict({})


def test_a_tied_state_dict_loads_into_the_same_model_in_pytorch():
    torch = pytest.importorskip("torch")
    model = torch.nn.Module()
    model.embed = torch.nn.Embedding(6, 4)
    model.out = torch.nn.Linear(4, 6, bias=False)
    model.out.weight = model.embed.weight
    state = {k: torch.tensor(v) for k, v in TiedLM().state_dict().items()}
    model.load_state_dict(state)  # strict: both names present
    assert list(model.state_dict()) == ["embed.weight", "out.weight"]


def test_lstm_cell_checks_its_whole_state():
    cell = nn.LSTMCell(3, 4)
    x, h = ta.zeros(2, 3), ta.zeros(2, 4)
    with pytest.raises(ta.ShapeError, match=r"LSTMCell: c \(1, 4\), expected \(batch, hidden\) = \(2, 4\)"):
        cell(x, (h, ta.zeros(1, 4)))
    with pytest.raises(ta.ShapeError, match=r"LSTMCell: c \(2, 1\)"):
        cell(x, (h, ta.zeros(2, 1)))
    with pytest.raises(TypeError, match=r"LSTMCell: the state is a pair \(h, c\)"):
        cell(x, ta.zeros(2, 4))  # was unpacked row by row into h = row 0, c = row 1
    with pytest.raises(TypeError, match="GRUCell: the state is one tensor"):
        nn.GRUCell(3, 4)(x, (h, h))


# --- errors that name the op ----------------------------------------------------------------

INT = ta.tensor([[1, 2, 3]])
BOOL = ta.tensor([[True, False, True]])


@pytest.mark.parametrize("backend", ["numba", "numpy"])
@pytest.mark.parametrize("call, op", [
    (lambda x: x.softmax(-1), "softmax"),
    (lambda x: x.log_softmax(-1), "log_softmax"),
    (lambda x: F.cross_entropy(x, np.array([0])), "cross_entropy"),
    (lambda x: F.scaled_dot_product_attention(x[None], x[None], x[None]), "attention"),
    (lambda x: nn.Attention(3, 3, score="additive")(x[None], x[None], x[None]), "Attention"),
])
def test_integer_and_bool_tensors_are_refused_by_name(call, op, backend):
    """Once a Numba TypingError, and under the numpy backend a softmax that did not sum to 1."""
    from tinyattn.ops import use_backend

    with use_backend(backend):
        for x in (INT, BOOL):
            with pytest.raises(TypeError, match=rf"^{op}: .* is (int64|bool), but {op} needs a floating tensor"):
                call(x)


def test_zero_d_tensors_and_out_of_range_axes():
    scalar = ta.tensor(2.0)
    with pytest.raises(ta.ShapeError, match="softmax: a 0-d tensor has no axis"):
        scalar.softmax()
    with pytest.raises(ta.ShapeError, match="argmax: a 0-d tensor has no axis"):
        scalar.argmax(0)
    assert scalar.sum().item() == 2.0 and scalar.sum(0).item() == 2.0  # as PyTorch: dim 0 of a scalar
    x = ta.zeros(2, 3)
    for call, op in [(lambda: x.unsqueeze(3), "unsqueeze"), (lambda: x.unsqueeze(-4), "unsqueeze"),
                     (lambda: x.transpose(0, 2), "transpose"), (lambda: x.sum(2), "sum"),
                     (lambda: x.mean(dim=-3), "mean"), (lambda: x.max(5), "max"),
                     (lambda: x.softmax(2), "softmax"), (lambda: x.log_softmax(dim=-3), "log_softmax"),
                     (lambda: ta.cat([x, x], axis=2), "cat"), (lambda: ta.stack([x, x], dim=3), "stack")]:
        with pytest.raises(ValueError, match=rf"^{op}: axis -?\d is out of range"):
            call()
    assert x.unsqueeze(2).shape == (2, 3, 1) and x.unsqueeze(-3).shape == (1, 2, 3)


@given(ndim=st.integers(0, 4), axis=st.integers(-7, 7))
def test_any_axis_either_works_as_in_numpy_or_is_a_clear_error(ndim, axis):
    x = ta.tensor(np.ones((2,) * ndim))
    for op in ("sum", "mean", "max"):
        try:
            expected = getattr(np, {"max": "amax"}.get(op, op))(x.data, axis=axis)
        except Exception:
            expected = None
        if expected is None and not (ndim == 0 and axis in (0, -1)):
            with pytest.raises(ValueError, match=f"{op}: axis"):
                getattr(x, op)(axis)
        else:
            out = getattr(x, op)(dim=axis)
            out = out.values if op == "max" else out  # PyTorch's max(dim) is (values, indices)
            np.testing.assert_array_equal(out.data, x.data if ndim == 0 else expected)


@pytest.mark.parametrize("layer", [nn.RNN(3, 4, batch_first=True), nn.GRU(3, 4, batch_first=True),
                                   nn.LSTM(3, 4, bidirectional=True, batch_first=True)],
                         ids=["RNN", "GRU", "LSTM"])
def test_recurrent_layers_refuse_empty_sequences_and_bad_lengths(layer):
    name = type(layer).__name__
    with pytest.raises(ta.ShapeError, match=rf"{name}: input \(2, 0, 3\) has no time steps"):
        layer(ta.zeros(2, 0, 3))
    for lengths in ([0, 3], [4, 3]):
        with pytest.raises(ValueError, match=rf"{name}: lengths must lie in \[1, 3\]"):
            layer(ta.zeros(2, 3, 3), lengths=np.array(lengths))
    with pytest.raises(ta.ShapeError, match=rf"{name}: lengths must be 2 integers"):
        layer(ta.zeros(2, 3, 3), lengths=np.array([1.0, 2.0]))


@pytest.mark.parametrize("make, call", [
    (lambda: nn.Linear(3, 4), lambda m, x: m(x)),
    (lambda: nn.LayerNorm(3), lambda m, x: m(x)),
    (lambda: nn.GRU(3, 4, batch_first=True), lambda m, x: m(x[:, None])),
    (lambda: nn.LSTMCell(3, 4), lambda m, x: m(x)),
    (lambda: nn.Attention(3, 3, score="additive"), lambda m, x: m(x[:, None], x[:, None], x[:, None])),
    (lambda: nn.SelfAttention(3), lambda m, x: m(x[:, None])),
], ids=["Linear", "LayerNorm", "GRU", "LSTMCell", "Attention", "SelfAttention"])
def test_a_float64_input_into_a_float32_layer_names_the_layer_and_both_sides(make, call):
    layer = make()
    name = type(layer).__name__
    with pytest.raises(TypeError, match=rf"^{name}: the input is float64, the layer's parameters float32; "
                                        r"convert the input with \.float\(\) or the model with \.double\(\)"):
        call(layer, ta.tensor(np.ones((2, 3))))
    assert call(layer.double(), ta.tensor(np.ones((2, 3)))) is not None  # converted: it runs


def _write_npz(path, meta):
    with zipfile.ZipFile(path, "w") as archive:
        with archive.open("__tinyattn__.npy", "w") as member:
            np.lib.format.write_array(member, np.frombuffer(meta, np.uint8))


@pytest.mark.parametrize("meta", [
    b"not json", json.dumps([1, 2]).encode(), json.dumps({"format": "tinyattn-checkpoint/1"}).encode(),
    json.dumps({"format": "tinyattn-checkpoint/1", "content": {"__array__": "a9"}}).encode(),
    json.dumps({"format": "tinyattn-checkpoint/1", "content": {"__dict__": [1]}}).encode(),
    json.dumps({"format": "tinyattn-checkpoint/1", "content": {"__float__": "x"}}).encode(),
    b"\xff\xfe",
], ids=["not json", "a list", "no content", "missing array", "dict of a list", "bad float", "not utf-8"])
def test_every_failure_inside_load_is_a_checkpoint_error_naming_the_file(tmp_path, meta):
    path = tmp_path / "broken.npz"
    _write_npz(path, meta)
    with pytest.raises(ta.CheckpointError, match=rf"^{path}: "):
        ta.load(path)


# --- dtype rules ----------------------------------------------------------------------------


def test_integer_powers_follow_pytorch():
    ints = ta.tensor([1, 2, 3])
    assert (ints ** 2).dtype == np.int64 and (ints ** 2).data.tolist() == [1, 4, 9]
    assert (ints ** 2.5).dtype == np.float32 and (ints ** 2.0).dtype == np.float32
    with pytest.raises(ValueError, match="pow: an integer tensor to the negative power -1"):
        ints ** -1
    assert (ta.tensor([1.0]) ** 2).dtype == np.float32


# --- PyTorch habits -------------------------------------------------------------------------


def test_dim_keepdim_argmax_arange_and_mse_loss():
    x = ta.tensor(np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]]), requires_grad=True)
    assert x.sum(dim=1, keepdim=True).shape == (2, 1)
    np.testing.assert_array_equal(x.max(dim=0).values.data, [7, 5, 3])
    np.testing.assert_array_equal(x.softmax(dim=0).data, x.softmax(axis=0).data)
    assert x.argmax(dim=1).data.tolist() == [1, 0] and x.argmin(1).data.tolist() == [0, 1]
    assert x.argmax().item() == 3 and not x.argmax(1).requires_grad
    with pytest.raises(TypeError, match="sum: got both axis=0 and dim=1"):
        x.sum(axis=0, dim=1)
    assert ta.cat([x, x], dim=1).shape == (2, 6) and ta.stack([x, x], dim=0).shape == (2, 2, 3)
    assert ta.arange(4).data.tolist() == [0, 1, 2, 3] and ta.arange(4).dtype == np.int64
    assert ta.arange(0, 1, 0.5).dtype == np.float32 and ta.arange(1.0, 3).data.tolist() == [1.0, 2.0]
    target = ta.tensor(np.zeros((2, 3)))
    loss = F.mse_loss(x, target)
    assert loss.item() == pytest.approx(np.mean(x.data ** 2))
    loss.backward()
    np.testing.assert_allclose(x.grad, 2 * x.data / 6)
    assert F.mse_loss(x, target, reduction="sum").item() == pytest.approx(np.sum(x.data ** 2))
    with pytest.raises(ta.ShapeError, match=r"mse_loss: input \(2, 3\) and target \(3,\)"):
        F.mse_loss(x, ta.tensor(np.zeros(3)))


@pytest.mark.parametrize("module, args", [
    (nn.Attention(3, 3), (ta.zeros(1, 2, 3),) * 3),
    (nn.SelfAttention(3), (ta.zeros(1, 2, 3),)),
])
@pytest.mark.parametrize("keyword, hint", [("attn_mask", "use mask=, True = may attend"),
                                           ("key_padding_mask", r"use mask=nn.padding_mask\(lengths, T\)")])
def test_pytorch_keywords_get_a_hint_to_tinyattns_spelling(module, args, keyword, hint):
    with pytest.raises(TypeError, match=rf"{type(module).__name__}: no argument {keyword}=; {hint}"):
        module(*args, **{keyword: None})


def test_pytorch_semantics_where_installed():
    """The same calls in PyTorch give the same dtypes and values."""
    torch = pytest.importorskip("torch")
    assert str((torch.tensor([1, 2]) ** 2).dtype) == "torch.int64" and (ta.tensor([1, 2]) ** 2).dtype == np.int64
    assert str((torch.tensor([1, 2]) ** 2.5).dtype) == "torch.float32" and (ta.tensor([1, 2]) ** 2.5).dtype == np.float32
    assert str(torch.arange(0, 1, 0.5).dtype) == "torch.float32" and str(torch.arange(3).dtype) == "torch.int64"
    mask = torch.tril(torch.ones(4, 4, dtype=torch.bool))
    q = np.random.default_rng(0).standard_normal((4, 4, 3))  # batch 4 == T 4: the old trap
    expected = torch.nn.functional.scaled_dot_product_attention(*(torch.tensor(q),) * 3, attn_mask=mask)
    out, _ = F.scaled_dot_product_attention(*(ta.tensor(q),) * 3, mask=nn.causal_mask(4))
    np.testing.assert_allclose(out.data, expected.numpy(), atol=1e-12)


def test_requires_grad_false_on_a_made_tensor_is_refused_as_in_pytorch():
    x = ta.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match=r"made by Mul; only a leaf's flag can change. .*\.detach\(\)"):
        y.requires_grad_(False)
    assert not y.detach().requires_grad and x.requires_grad_(False) is x and not x.requires_grad


# --- creation entry points name the call and the fix ---
@pytest.mark.parametrize("call, message", [
    (lambda: ta.tensor([[1, 2], [3]]), r"tensor: the nested lists have rows of different lengths \(2, 1\)"),
    (lambda: ta.randn(-1, 2), r"randn: the shape \(-1, 2\) must be whole numbers >= 0"),
    (lambda: ta.zeros(-1, 2), r"zeros: the shape \(-1, 2\)"),
    (lambda: ta.ones(2.5), r"ones: the shape \(2.5,\)"),
    (lambda: ta.full((2, -3), 1.0), r"full: the shape \(2, -3\)"),
    (lambda: ta.randint(5, 5, (2,)), r"randint: high \(5\) must be greater than low \(5\)"),
    (lambda: nn.causal_mask(-1), "causal_mask: T is the number of positions"),
    (lambda: nn.Embedding(5, 3, padding_idx=7), r"padding_idx 7 is not a row of the table; it must lie in \[-5, 4\]"),
])
def test_bad_creation_arguments_name_the_call(call, message):
    with pytest.raises(ValueError, match=message):
        call()
