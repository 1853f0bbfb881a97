"""register_hook and retain_grad: against gradients worked out by hand, and PyTorch's on attention."""
from pathlib import Path

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn.functional as F

FIXTURES = Path(__file__).parent / "fixtures"


def leaf(array):
    return ta.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


def test_retain_grad_keeps_the_hand_computed_gradients_of_intermediates(rng):
    # y = x * w (w broadcast over rows), s = tanh(y), L = sum(c * s):
    # dL/ds = c, dL/dy = c * (1 - s^2), dL/dx = dL/dy * w, dL/dw = sum over rows of dL/dy * x.
    x, w = leaf(rng.standard_normal((3, 4))), leaf(rng.standard_normal(4))
    c = rng.standard_normal((3, 4))
    y = x * w
    s = y.tanh()
    y.retain_grad()
    s.retain_grad()
    (s * c).sum().backward()
    s_value = np.tanh(x.data * w.data)
    np.testing.assert_allclose(s.grad, c, rtol=1e-12)
    np.testing.assert_allclose(y.grad, c * (1 - s_value ** 2), rtol=1e-12)
    np.testing.assert_allclose(x.grad, y.grad * w.data, rtol=1e-12)
    np.testing.assert_allclose(w.grad, (y.grad * x.data).sum(axis=0), rtol=1e-12)


def test_a_retained_gradient_accumulates_across_backwards_as_on_a_leaf():
    x = leaf([1.0, 2.0])
    y = x * 3.0
    y.retain_grad()
    loss = (y * y).sum()              # dL/dy = 2y = [6, 12]
    loss.backward(retain_graph=True)
    loss.backward()
    np.testing.assert_array_equal(y.grad, [12.0, 24.0])
    np.testing.assert_array_equal(x.grad, [36.0, 72.0])


def test_retain_grad_on_a_leaf_changes_nothing_and_needs_requires_grad():
    x = leaf([1.0, -1.0])
    x.retain_grad()
    (x * 2.0).sum().backward()
    np.testing.assert_array_equal(x.grad, [2.0, 2.0])
    with pytest.raises(RuntimeError, match=r"retain_grad: this tensor of shape \(2,\) does not require grad"):
        ta.tensor([1.0, 2.0]).retain_grad()
    with pytest.raises(RuntimeError, match="register_hook: .* does not require grad"):
        ta.tensor([1.0]).register_hook(print)


def test_a_hook_replacement_flows_on_and_retain_grad_shows_it():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 2.0
    y.retain_grad()                    # registered first, still runs after the other hooks
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    np.testing.assert_array_equal(y.grad, [10.0, 10.0, 10.0])
    np.testing.assert_array_equal(x.grad, [20.0, 20.0, 20.0])


def test_a_hook_fires_once_with_the_sum_over_every_use():
    x = leaf([1.0, 2.0])
    y = x * 3.0
    seen_y, seen_x = [], []
    y.register_hook(lambda g: seen_y.append(g.copy()))
    x.register_hook(lambda g: seen_x.append(g.copy()))
    # L = sum(y*y) + sum(y) + sum(x): dL/dy = 2y + 1; dL/dx = 3 dL/dy + 1, reaching x by two paths.
    ((y * y).sum() + y.sum() + x.sum()).backward()
    assert len(seen_y) == 1 and len(seen_x) == 1
    np.testing.assert_array_equal(seen_y[0], 2 * y.data + 1)
    np.testing.assert_array_equal(seen_x[0], 3 * (2 * y.data + 1) + 1)
    np.testing.assert_array_equal(x.grad, seen_x[0])


def test_a_leaf_hook_sees_this_backwards_gradient_before_it_is_added_to_grad():
    x = leaf([1.0, 1.0])
    (x * 5.0).sum().backward()         # x.grad = [5, 5] from before
    seen = []

    def halve(g):
        seen.append(g.copy())
        return g / 2

    x.register_hook(halve)
    (x * 4.0).sum().backward()
    np.testing.assert_array_equal(seen[0], [4.0, 4.0])
    np.testing.assert_array_equal(x.grad, [7.0, 7.0])  # 5 + 4 / 2
    x.grad = None
    x.backward(np.array([2.0, 6.0]))   # a leaf as the root: its hooks run too
    np.testing.assert_array_equal(x.grad, [1.0, 3.0])


def test_a_removed_hook_is_not_called():
    x = leaf([1.0])
    calls = []
    handle = x.register_hook(lambda g: calls.append(1))
    y = x * 2.0
    y.register_hook(lambda g: calls.append(2)).remove()
    handle.remove()
    handle.remove()  # twice is harmless
    y.sum().backward()
    assert calls == [] and x.grad[0] == 2.0


def test_a_hook_returning_the_wrong_shape_or_dtype_is_a_clear_error():
    x = leaf(np.ones((2, 3)))
    y = x.tanh()

    def first_row(g):
        return g[0]

    y.register_hook(first_row)
    with pytest.raises(RuntimeError, match=r"hook .*first_row on the output of Tanh, a float64 tensor of shape "
                                           r"\(2, 3\), returned a float64 array of shape \(3,\)"):
        y.sum().backward()
    z = x * 2.0
    z.register_hook(lambda g: g.astype(np.float32))
    with pytest.raises(RuntimeError, match=r"returned a float32 array of shape \(2, 3\): a hook returns None"):
        z.sum().backward()
    x.register_hook(lambda g: 1.0)
    with pytest.raises(RuntimeError, match="on a leaf, .* returned a float"):
        (x * 2.0).sum().backward()


def test_a_hook_cannot_change_the_gradient_in_place():
    # Add hands the same array to both its inputs: an in-place change would leak into the other.
    x = leaf([1.0, 2.0])
    y = x * 1.0
    y.register_hook(lambda g: g.__imul__(0))
    with pytest.raises(ValueError, match="read-only"):
        (y + x).sum().backward()


def test_hooks_on_the_outputs_of_a_two_output_node(rng):
    q, k, v = (leaf(rng.standard_normal((1, 2, 3))) for _ in range(3))
    with ta.fused(True):  # the fused node: out and weights are two outputs of one node
        out, weights = F.scaled_dot_product_attention(q, k, v)
    seen = {}
    out.register_hook(lambda g: seen.setdefault("out", g.copy()))
    weights.register_hook(lambda g: seen.setdefault("weights", g.copy()))
    upstream = rng.standard_normal(out.shape)
    (out * upstream).sum().backward()
    np.testing.assert_array_equal(seen["out"], upstream)
    # Nothing used the weights directly: that output's gradient is zero (PyTorch passes None).
    np.testing.assert_array_equal(seen["weights"], np.zeros(weights.shape))


def _attention_fixture():
    with np.load(FIXTURES / "torch_attention_intermediates.npz", allow_pickle=False) as f:
        return {name: f[name] for name in f.files}


def test_intermediate_gradients_of_attention_equal_pytorchs():
    fix = _attention_fixture()
    q, k, v = (ta.tensor(fix[f"input.{n}"], requires_grad=True) for n in "qkv")
    scores = q @ k.transpose(-2, -1) * (1 / np.sqrt(q.shape[-1]))
    weights = scores.softmax(-1, mask=fix["mask"])
    out = weights @ v
    for t in (scores, weights, out):
        t.retain_grad()
    (out * fix["upstream"]).sum().backward()
    np.testing.assert_allclose(out.data, fix["output.0"], rtol=1e-10, atol=1e-12)
    for name, t in (("scores", scores), ("weights", weights), ("out", out)):
        np.testing.assert_allclose(t.grad, fix[f"grad.{name}"], rtol=1e-10, atol=1e-12, err_msg=name)
    for name, t in zip("qkv", (q, k, v)):
        np.testing.assert_allclose(t.grad, fix[f"grad.input.{name}"], rtol=1e-10, atol=1e-12, err_msg=name)


def test_a_hook_on_the_fused_attention_output_sees_pytorchs_gradient():
    fix = _attention_fixture()
    q, k, v = (ta.tensor(fix[f"input.{n}"], requires_grad=True) for n in "qkv")
    out, _ = F.scaled_dot_product_attention(q, k, v, mask=fix["mask"])
    out.retain_grad()
    (out * fix["upstream"] * 2.0).sum().backward()
    np.testing.assert_allclose(out.grad, 2 * fix["grad.out"], rtol=1e-12)
    np.testing.assert_allclose(q.grad, 2 * fix["grad.input.q"], rtol=1e-9, atol=1e-12)


def test_retain_grad_on_an_output_a_fused_node_uses_inside_says_so(rng):
    ta.manual_seed(0)
    mha = ta.nn.MultiheadAttention(4, 2, batch_first=True).double()
    x = ta.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    with ta.fused(True):
        _, weights = mha(x, x, x, average_attn_weights=False)  # (B, H, Tq, Tk): the node's own output
        with pytest.raises(RuntimeError, match=r"output 1 of ScaledDotProductAttention.*ta\.fused\(False\)"):
            weights.retain_grad()
        out, _ = ta.nn.GRU(4, 3, batch_first=True).double()(x)
        with pytest.raises(RuntimeError, match="GRUSequence"):
            out.retain_grad()
    with ta.fused(False):  # the composed graph's weights keep the whole gradient
        out, weights = mha(x, x, x, average_attn_weights=False)
        weights.retain_grad()
        (out * out).sum().backward()
        assert np.abs(weights.grad).max() > 0
    # by hand: out = concat_h(weights_h @ V_h) W_o^T + b_o, so d concat = 2 out W_o and
    # d weights_h = d head_h @ V_h^T, V_h head h of x W_v^T + b_v (in_proj's last third)
    E, H = 4, 2
    values = (x.data @ mha.in_proj_weight.data[2 * E:].T + mha.in_proj_bias.data[2 * E:]).reshape(2, 3, H, E // H)
    d_heads = (2 * out.data @ mha.out_proj.weight.data).reshape(2, 3, H, E // H)
    np.testing.assert_allclose(weights.grad, np.einsum("bqhd,bkhd->bhqk", d_heads, values), rtol=1e-12, atol=1e-14)
