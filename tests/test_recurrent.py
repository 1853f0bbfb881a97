"""RNN/GRU/LSTM cells and layers: gradchecks, fused == reference, lengths, long sequences."""
import sys

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn

CELLS = [nn.RNNCell, nn.GRUCell, nn.LSTMCell]
LAYERS = [nn.RNN, nn.GRU, nn.LSTM]


def _t(rng, *shape):
    return ta.tensor(rng.standard_normal(shape), requires_grad=True)


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "reference"])
@pytest.mark.parametrize("cls", CELLS, ids=lambda c: c.__name__)
def test_cells_gradcheck_inputs_state_and_parameters(cls, fused, rng):
    cell = cls(3, 4).double()
    x, h, c = _t(rng, 2, 3), _t(rng, 2, 4), _t(rng, 2, 4)
    params = tuple(cell.parameters())
    with ta.fused(fused):
        if cls is nn.LSTMCell:
            fn = lambda x, h, c, *p: cell(x, (h, c))  # noqa: E731
            assert ta.gradcheck(fn, (x, h, c, *params))
        else:
            assert ta.gradcheck(lambda x, h, *p: cell(x, h), (x, h, *params))


@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
@pytest.mark.parametrize("cls", LAYERS, ids=lambda c: c.__name__)
def test_layers_gradcheck_with_lengths_and_initial_state(cls, bidirectional, rng):
    layer = cls(3, 4, bidirectional=bidirectional, batch_first=True).double()
    D = 2 if bidirectional else 1
    x, h0, c0 = _t(rng, 3, 5, 3), _t(rng, D, 3, 4), _t(rng, D, 3, 4)
    lengths = np.array([5, 2, 4])
    params = tuple(layer.parameters())
    if cls is nn.LSTM:
        fn = lambda x, h0, c0, *p: (lambda o, s: (o, *s))(*layer(x, (h0, c0), lengths=lengths))  # noqa: E731
        assert ta.gradcheck(fn, (x, h0, c0, *params))
    else:
        assert ta.gradcheck(lambda x, h0, *p: layer(x, h0, lengths=lengths), (x, h0, *params))


@pytest.mark.parametrize("cls", LAYERS, ids=lambda c: c.__name__)
def test_fused_and_reference_agree_to_1e_10(cls, rng):
    layer = cls(3, 4, bidirectional=True, batch_first=True).double()
    x = rng.standard_normal((3, 6, 3))
    lengths = np.array([6, 1, 3])
    results = []
    for fused in (True, False):
        layer.zero_grad()
        xt = ta.tensor(x, requires_grad=True)
        with ta.fused(fused):
            out, state = layer(xt, lengths=lengths)
        h_n = state[0] if isinstance(state, tuple) else state
        (out * ta.tensor(np.sin(np.arange(out.numel()).reshape(out.shape)))).sum().backward(retain_graph=False)
        results.append([out.data, h_n.data, xt.grad] + [p.grad for p in layer.parameters()])
    for fused_value, reference_value in zip(*results):
        np.testing.assert_allclose(fused_value, reference_value, rtol=0, atol=1e-10)


@pytest.mark.parametrize("cls", LAYERS, ids=lambda c: c.__name__)
def test_padding_never_reaches_a_state(cls, rng):
    """A padded batch gives each sequence exactly what it gets alone."""
    layer = cls(3, 4, bidirectional=True, batch_first=True).double()
    short = rng.standard_normal((1, 2, 3))
    padded = np.concatenate([short, rng.standard_normal((1, 3, 3)) * 100], axis=1)  # loud padding
    out_alone, h_alone = layer(ta.tensor(short))
    out_padded, h_padded = layer(ta.tensor(padded), lengths=np.array([2]))
    if cls is nn.LSTM:
        (h_alone, _), (h_padded, _) = h_alone, h_padded
    np.testing.assert_allclose(out_padded.data[:, :2], out_alone.data, atol=1e-12)
    assert not out_padded.data[:, 2:].any()
    np.testing.assert_allclose(h_padded.data, h_alone.data, atol=1e-12)


def gru_bptt(x, w_ih, w_hh, b_ih, b_hh, upstream):
    """PyTorch's GRU (gates stacked r, z, n) over x (T, B, I) from h_0 = 0, and backprop through time
    by hand for L = sum(upstream * outputs). Per step, with hn = W_hn h + b_hn:
    r, z = sig(.), n = tanh(gi_n + r * hn), h' = (1 - z) n + z h, so with dh' (upstream plus the next
    step's): dn = dh' (1 - z), dz = dh' (h - n), da_n = dn (1 - n^2), dr = da_n hn, dhn = da_n r;
    d(gi) = [dr r(1-r), dz z(1-z), da_n], d(gh) = [same r, z parts, dhn], dh = dh' z + d(gh) W_hh;
    the weights collect every step's d(gi)^T x_t and d(gh)^T h_{t-1}."""
    H = w_hh.shape[1]
    hs, saved = [np.zeros((x.shape[1], H))], []
    for x_t in x:
        gi, gh = x_t @ w_ih.T + b_ih, hs[-1] @ w_hh.T + b_hh
        r = 1 / (1 + np.exp(-(gi[:, :H] + gh[:, :H])))
        z = 1 / (1 + np.exp(-(gi[:, H:2 * H] + gh[:, H:2 * H])))
        n = np.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
        hs.append((1 - z) * n + z * hs[-1])
        saved.append((r, z, n, gh[:, 2 * H:]))
    grads = [np.zeros_like(a) for a in (x, w_ih, w_hh, b_ih, b_hh)]
    dx, dw_ih, dw_hh, db_ih, db_hh = grads
    dh = np.zeros_like(hs[0])
    for t in range(len(x) - 1, -1, -1):
        r, z, n, hn = saved[t]
        dh = dh + upstream[t]
        da_n = dh * (1 - z) * (1 - n ** 2)
        da_r, da_z = da_n * hn * r * (1 - r), dh * (hs[t] - n) * z * (1 - z)
        dgi, dgh = np.concatenate([da_r, da_z, da_n], 1), np.concatenate([da_r, da_z, da_n * r], 1)
        dx[t] = dgi @ w_ih
        dw_ih += dgi.T @ x[t]
        dw_hh += dgh.T @ hs[t]
        db_ih += dgi.sum(0)
        db_hh += dgh.sum(0)
        dh = dh * z + dgh @ w_hh
    return np.stack(hs[1:]), grads


def test_backprop_through_a_5000_step_gru_with_the_default_recursion_limit(rng):
    """Against a hand-written backprop through time, to 1e-10 in float64. (The composed graph of
    5000 steps is as right but takes 5-15 s here; test_engine.py walks a 5000-step RNN's graph.)"""
    assert sys.getrecursionlimit() <= 10_000
    layer = nn.GRU(2, 3, batch_first=True).double()
    x = ta.tensor(rng.standard_normal((1, 5000, 2)) * 0.5, requires_grad=True)
    out, h_n = layer(x)
    upstream = rng.standard_normal((1, 5000, 3))
    out.backward(upstream)
    assert np.isfinite(layer.weight_hh_l0.grad).all() and np.abs(layer.weight_hh_l0.grad).sum() > 0
    assert np.abs(x.grad[0, -1]).sum() > 0
    params = [layer.weight_ih_l0, layer.weight_hh_l0, layer.bias_ih_l0, layer.bias_hh_l0]
    outputs, grads = gru_bptt(x.data.transpose(1, 0, 2), *(p.data for p in params), upstream.transpose(1, 0, 2))
    np.testing.assert_allclose(out.data, outputs.transpose(1, 0, 2), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(h_n.data, outputs[-1:], rtol=1e-12, atol=1e-14)
    for got, want in zip([x, *params], [grads[0].transpose(1, 0, 2), *grads[1:]]):
        np.testing.assert_allclose(got.grad, want, rtol=1e-10, atol=1e-13)


def test_a_1000_step_gru_and_the_hand_written_backprop_match_pytorch(rng):
    """torch.nn.GRU with the same weights (float64, random upstream): tinyattn's GRU, and gru_bptt,
    the reference the 5000-step test above trusts."""
    torch = pytest.importorskip("torch")
    layer = nn.GRU(2, 3, batch_first=True).double()
    theirs = torch.nn.GRU(2, 3, batch_first=True).double()
    theirs.load_state_dict({name: torch.tensor(p.data) for name, p in layer.named_parameters()})
    data, upstream = rng.standard_normal((2, 1000, 2)) * 0.5, rng.standard_normal((2, 1000, 3))
    x, x_t = ta.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    out, h_n = layer(x)
    out_t, h_n_t = theirs(x_t)
    out.backward(upstream)
    out_t.backward(torch.tensor(upstream))
    np.testing.assert_allclose(out.data, out_t.detach().numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(h_n.data, h_n_t.detach().numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(x.grad, x_t.grad.numpy(), rtol=1e-10, atol=1e-13)
    for name, p in layer.named_parameters():
        np.testing.assert_allclose(p.grad, getattr(theirs, name).grad.numpy(), rtol=1e-10, atol=1e-13, err_msg=name)
    names = ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
    outputs, grads = gru_bptt(data.transpose(1, 0, 2), *(getattr(layer, n).data for n in names),
                              upstream.transpose(1, 0, 2))
    np.testing.assert_allclose(outputs.transpose(1, 0, 2), out_t.detach().numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(grads[0].transpose(1, 0, 2), x_t.grad.numpy(), rtol=1e-10, atol=1e-13)
    for name, grad in zip(names, grads[1:]):
        np.testing.assert_allclose(grad, getattr(theirs, name).grad.numpy(), rtol=1e-10, atol=1e-13, err_msg=name)


def test_parameter_names_and_shapes_follow_pytorch():
    layer = nn.LSTM(3, 4, bidirectional=True, batch_first=True)
    shapes = {name: p.shape for name, p in layer.named_parameters()}
    assert shapes == {"weight_ih_l0": (16, 3), "weight_hh_l0": (16, 4), "bias_ih_l0": (16,), "bias_hh_l0": (16,),
                      "weight_ih_l0_reverse": (16, 3), "weight_hh_l0_reverse": (16, 4),
                      "bias_ih_l0_reverse": (16,), "bias_hh_l0_reverse": (16,)}
    bound = 1 / np.sqrt(4)
    assert all(np.abs(p.data).max() <= bound for p in layer.parameters())


def test_recurrent_errors_name_the_layer_and_shapes():
    with pytest.raises(ta.ShapeError, match=r"GRU: input \(2, 3\), expected \(batch, time, 3\)"):
        nn.GRU(3, 4, batch_first=True)(ta.ones(2, 3))
    with pytest.raises(ValueError, match=r"lengths must lie in \[1, 5\]"):
        nn.GRU(3, 4, batch_first=True)(ta.ones(2, 5, 3), lengths=np.array([0, 5]))
    with pytest.raises(ta.ShapeError, match=r"h0 \(1, 2, 4\), expected .* = \(2, 2, 4\)"):
        nn.RNN(3, 4, bidirectional=True, batch_first=True)(ta.ones(2, 5, 3), ta.zeros(1, 2, 4))


def test_lstmn_gradchecks_with_lengths(rng):
    lstmn = nn.LSTMN(3, 4).double()
    x = _t(rng, 2, 5, 3)
    assert ta.gradcheck(lambda x, *p: lstmn(x, lengths=np.array([5, 3])), (x, *lstmn.parameters()))


def test_lstmn_attends_only_to_the_past_and_ignores_padding(rng):
    lstmn = nn.LSTMN(3, 4).double()
    x = rng.standard_normal((2, 6, 3))
    out, attention = lstmn(ta.tensor(x), lengths=np.array([6, 4]))
    assert out.shape == (2, 6, 4) and attention.shape == (2, 6, 6)
    assert not np.triu(attention.data[0]).any()                       # nothing on or after the diagonal
    np.testing.assert_allclose(attention.data[0, 1:].sum(-1), 1.0)    # each later step reads its past
    assert not attention.data[0, 0].any()                             # step 0 has no past
    assert not out.data[1, 4:].any() and not attention.data[1, 4:].any()
    alone, _ = lstmn(ta.tensor(x[1:, :4]))
    np.testing.assert_allclose(out.data[1, :4], alone.data[0], atol=1e-12)


def test_lstmn_follows_the_papers_equations(rng):
    """A plain numpy LSTMN written from Cheng et al. (2016), one sequence at a time."""
    B, T, I, H = 2, 5, 3, 4
    lstmn = nn.LSTMN(I, H).double()
    P = {name: p.data for name, p in lstmn.named_parameters()}
    x = rng.standard_normal((B, T, I))
    sigmoid = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    outputs, attention = np.zeros((B, T, H)), np.zeros((B, T, T))
    for b in range(B):
        hs, cs, summary = [], [], np.zeros(H)
        for t in range(T):
            if t == 0:
                h_read, c_read = np.zeros(H), np.zeros(H)
            else:
                a = np.array([P["v.weight"][0] @ np.tanh(P["W_h.weight"] @ hs[i] + P["W_x.weight"] @ x[b, t]
                                                         + P["W_x.bias"] + P["W_s.weight"] @ summary) for i in range(t)])
                s = np.exp(a - a.max()) / np.exp(a - a.max()).sum()
                attention[b, t, :t] = s
                h_read, c_read = s @ np.array(hs), s @ np.array(cs)
            summary = h_read
            gates = P["gates.weight"] @ np.concatenate([h_read, x[b, t]]) + P["gates.bias"]
            i, f, o, g = sigmoid(gates[:H]), sigmoid(gates[H:2 * H]), sigmoid(gates[2 * H:3 * H]), np.tanh(gates[3 * H:])
            c = f * c_read + i * g
            h = o * np.tanh(c)
            hs.append(h)
            cs.append(c)
            outputs[b, t] = h
    out, att = lstmn(ta.tensor(x))
    np.testing.assert_allclose(out.data, outputs, atol=1e-12)
    np.testing.assert_allclose(att.data, attention, atol=1e-12)


def test_lstmn_and_cells_refuse_misplaced_arguments():
    with pytest.raises(ValueError, match=r"lengths must lie in \[1, 4\]"):
        nn.LSTMN(3, 4)(ta.ones(2, 4, 3), lengths=np.array([0, 4]))
    with pytest.raises(ta.ShapeError, match="lengths must be 2 integers"):
        nn.LSTMN(3, 4)(ta.ones(2, 4, 3), lengths=np.array([2.5, 3.0]))
    with pytest.raises(TypeError, match="bias must be True or False"):
        nn.RNNCell(3, 4, "relu")
