"""Silent wrong answers and raw tracebacks found by trying tinyattn as a sceptical user would:
each test failed on the code before its fix."""
import ast
import importlib.util
import io
import pathlib
import re
import sys
import warnings

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn.nn import masks as masks_module


# --- masks given as Tensors ----------------------------------------------------------------------
def test_a_bool_mask_given_as_a_tensor_masks_as_the_array_does(rng):
    ta.manual_seed(0)
    mha = nn.MultiheadAttention(8, 2, batch_first=True).double()
    x = ta.tensor(rng.standard_normal((2, 3, 8)))
    hidden = np.triu(np.ones((3, 3), bool), 1)  # PyTorch's polarity: True = may not attend
    as_array, w_array = mha(x, x, x, attn_mask=hidden)
    as_tensor, w_tensor = mha(x, x, x, attn_mask=ta.tensor(hidden))
    np.testing.assert_array_equal(as_tensor.data, as_array.data)
    assert (w_tensor.data[:, 0, 1:] == 0).all()
    padding = np.array([[False, False, True], [False, False, False]])
    np.testing.assert_array_equal(mha(x, x, x, key_padding_mask=ta.tensor(padding))[0].data,
                                  mha(x, x, x, key_padding_mask=padding)[0].data)
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True).double()
    np.testing.assert_array_equal(layer(x, src_mask=ta.tensor(hidden)).data, layer(x, src_mask=hidden).data)
    assert not np.allclose(layer(x, src_mask=ta.tensor(hidden)).data, layer(x).data)


def test_a_trainable_float_mask_gets_its_gradient(rng):
    ta.manual_seed(0)
    mha = nn.MultiheadAttention(4, 2, batch_first=True).double()
    x = ta.tensor(rng.standard_normal((2, 3, 4)))
    bias = ta.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    assert ta.gradcheck(lambda b: mha(x, x, x, attn_mask=b)[0], (bias,))
    mha(x, x, x, attn_mask=bias)[0].sum().backward()
    assert bias.grad is not None and np.abs(bias.grad).max() > 0


# --- integers into float ops -----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "tanh", "sigmoid"])
def test_float_ops_on_integers_give_float32_as_pytorch(name):
    ints = ta.tensor([1, 2, 3])
    out = getattr(ints, name)()
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.data, getattr(ta.tensor([1.0, 2.0, 3.0]), name)().data, rtol=1e-6)
    assert getattr(ta.tensor([True, True]), name)().dtype == np.float32  # bool too (was float16)


@pytest.mark.parametrize("call, op", [
    (lambda x: F.gelu(x), "gelu"), (lambda x: F.gelu(x, approximate="tanh"), "gelu"), (lambda x: x.mean(), "mean"),
    (lambda x: nn.LayerNorm(2)(x), "LayerNorm"), (lambda x: F.dropout(x, 0.5), "dropout"),
    (lambda x: F.mse_loss(x, x), "mse_loss"), (lambda x: x.softmax(-1), "softmax"),
])
def test_ops_pytorch_refuses_on_integers_refuse_clearly(call, op):
    with pytest.raises(TypeError, match=rf"{op}: .* is int64, but {op} needs a floating tensor; convert it with .float\(\)"):
        call(ta.tensor([[1, 2], [3, -1]]))


def test_relu_keeps_nan_and_integers_as_pytorch():
    out = ta.tensor([np.nan, -1.0, 2.0]).relu()
    assert np.isnan(out.data[0]) and out.data[1] == 0 and out.data[2] == 2
    assert ta.tensor([1, -2]).relu().dtype == np.int64


def test_a_number_to_a_tensor_power():
    x = ta.tensor(np.array([0.0, 1.0, -1.0]), requires_grad=True)
    y = 0 ** x
    np.testing.assert_array_equal(y.data, [1.0, 0.0, np.inf])
    y.backward(np.ones(3))
    np.testing.assert_array_equal(x.grad, [0.0, 0.0, -np.inf])  # PyTorch's values
    assert (2 ** ta.tensor([1, 3])).dtype == np.int64 and (2 ** ta.tensor([1, 3])).data.tolist() == [2, 8]


def test_autograd_trace_is_the_class_and_its_module_is_trace():
    # The module's name is the class's too (as gradcheck's), so the package attribute is the class.
    assert ta.autograd.trace.__module__ == "tinyattn.autograd.trace" and isinstance(ta.autograd.trace, type)


# --- float16 never reaches a compiled kernel -----------------------------------------------------------
def test_float16_runs_on_the_references_everywhere():
    rng = np.random.default_rng(0)
    half = lambda *shape: ta.tensor(rng.standard_normal(shape).astype(np.float16), requires_grad=True)  # noqa: E731
    x = half(2, 5)
    for out in (x.softmax(-1), x.log_softmax(-1), ta.cross_entropy(x, np.array([1, 2])),
                F.scaled_dot_product_attention(half(2, 3, 4), half(2, 3, 4), half(2, 3, 4))[0],
                half(2, 3, 1) @ half(2, 1, 4), x.sigmoid(), x.sum(-1)):
        assert out.dtype == np.float16
        out.sum().backward()
    p = nn.Parameter(np.ones(3, np.float16))
    p.grad = np.ones(3, np.float16)
    ta.optim.Adam([p], lr=0.1).step()
    assert p.dtype == np.float16 and np.all(p.data < 1)


def test_kernel_takes_is_the_one_rule():
    from tinyattn.ops import arrays, reference, use_backend
    from tinyattn.ops.fast_path import kernel_takes
    f32, f64, f16 = np.zeros(3, np.float32), np.zeros(3), np.zeros(3, np.float16)
    assert kernel_takes(f32) and kernel_takes(f64, np.zeros(3, bool), np.zeros(3, np.int64))
    assert not kernel_takes(f16) and not kernel_takes(f32, f64) and not kernel_takes(np.zeros(3, np.int64))
    assert not kernel_takes(np.zeros((3, 4)).T, contiguous=True) and kernel_takes(np.zeros((3, 4)).T)
    with use_backend("numpy"):  # no door at all: the op rules call the references
        assert arrays.softmax is reference.softmax


# --- checkpoints, drawing, fit ----------------------------------------------------------------------
def test_load_state_dict_takes_nan_as_data():
    layer = nn.Linear(2, 2)
    state = layer.state_dict()
    state["weight"] = state["weight"].copy()
    state["weight"][0, 0] = np.nan
    layer.load_state_dict(state)
    assert np.isnan(layer.weight.data[0, 0])


def test_draw_graph_after_part_of_the_graph_was_freed_says_what_happened():
    x = ta.randn(2, 3, requires_grad=True)
    h = (x * 2).tanh()
    h.sum().backward()
    y = (h * 3).exp()
    with pytest.raises(ValueError, match=r"draw_graph: the graph was freed by backward\(\) \(at Tanh\)"):
        ta.viz.draw_graph(y)


@pytest.mark.parametrize("loss_fn, error, message", [
    (lambda step: 1.5, TypeError, r"loss_fn\(1\) returned a float, not a Tensor"),
    (lambda step: ta.ones(2, requires_grad=True) * 2, ValueError, r"has shape \(2,\); reduce it"),
    (lambda step: ta.tensor(1.0), ValueError, "does not require grad"),
])
def test_fit_names_a_loss_it_cannot_use(loss_fn, error, message):
    model = nn.Linear(2, 1)
    with pytest.raises(error, match=message):
        ta.train.fit(model, ta.optim.SGD(model.parameters(), lr=0.1), loss_fn, steps=1, stream=io.StringIO())


# --- creation entry points name the call and the fix ------------------------------------------------
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


# --- the inverted mask ------------------------------------------------------------------------------
def test_a_mask_that_leaves_a_query_nothing_warns_naming_the_convention(monkeypatch, rng):
    monkeypatch.setattr(masks_module, "_warned_sites", set())
    ta.manual_seed(0)
    mha = nn.MultiheadAttention(4, 2, batch_first=True)
    x = ta.randn(1, 3, 4)
    inverted = np.tril(np.ones((3, 3), bool))  # tinyattn's "may attend" given to PyTorch's "may NOT attend"
    with pytest.warns(UserWarning, match=r"MultiheadAttention: the mask leaves some query .*True where attention may NOT go"):
        mha(x, x, x, attn_mask=inverted)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a mask that leaves every query some key is quiet
        mha(x, x, x, attn_mask=~inverted)
    with pytest.warns(UserWarning, match=r"scaled_dot_product_attention: .*True where a query may attend"):
        F.scaled_dot_product_attention(x, x, x, mask=np.triu(np.ones((3, 3), bool), 1))


# --- every suggestion in an error message works as written -----------------------------------------
RECEIVERS = {"x": "tensor", "t": "tensor", "y": "tensor", "loss": "tensor", "logits": "tensor", "model": "module",
             "module": "module"}
NOT_NAMES = {("e", "g"), ("", "npz")}  # "e.g." and a file extension


def _suggestions():
    """(receiver or "", name) of every `.name` written in a raise or a warning of the package."""
    found = set()
    for path in pathlib.Path(ta.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) or (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "warn"):
                for part in ast.walk(node):
                    if isinstance(part, ast.Constant) and isinstance(part.value, str):
                        found.update(re.findall(r"(?:\b([a-z_]\w*)|(?<=[\s(`'\"]))\.([a-z_]\w*)", part.value))
    return sorted(found - NOT_NAMES)


def test_every_method_an_error_message_suggests_exists():
    suggestions = _suggestions()
    assert ("", "float") in suggestions and ("nn", "padding_mask") in suggestions  # the scan finds them
    things = {"tensor": ta.ones(2), "module": nn.Linear(2, 2), "ta": ta, "nn": nn, "np": np, "sys": sys}
    for receiver, name in suggestions:
        if receiver == "tinyattn":  # a module to run: python -m tinyattn.NAME
            assert importlib.util.find_spec(f"tinyattn.{name}"), f"an error message names tinyattn.{name}"
            continue
        target = things[RECEIVERS.get(receiver, receiver or "tensor")]
        assert hasattr(target, name), f"an error message suggests {receiver}.{name}, which does not exist"


def test_a_step_that_fails_moves_no_parameter():
    first, second = nn.Parameter(np.ones(2)), nn.Parameter(np.ones(3))
    optimizer = ta.optim.Adam([first, second], lr=0.1)
    first.grad, second.grad = np.ones(2), np.ones(2)  # the second has the wrong shape
    with pytest.raises(ValueError, match=r"Adam.step: parameter 1 is float64 \(3,\) but its .grad is float64 \(2,\)"):
        optimizer.step()
    assert (first.data == 1).all() and not optimizer.state[0]
