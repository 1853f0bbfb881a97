"""ta.fused(False): every layer builds its composed graph, with the fused nodes' outputs and gradients.

Each equality test runs a layer twice, with the switch on and off, and checks three things: the
outputs and the gradient of every input and parameter agree to 1e-10 in float64; the fused node
ran with the switch on; and with it off no fused node at all is in the graph (so the two runs
really took different paths).
"""
import inspect
import os
import subprocess
import sys

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn.autograd.function import Function
from tinyattn.data import TOKEN_IDS, ToyTranslation
from tinyattn.models import Seq2Seq
from tinyattn.nn.fused import (additive_attention_node, attentive_decoder, dot_product_attention_node, gru_sequence,
                               lstm_sequence, recurrent_steps)
from tinyattn.viz.graph import graph_lists

FUSED_NODES = {name for module in (dot_product_attention_node, additive_attention_node, recurrent_steps, gru_sequence, lstm_sequence,
                                   attentive_decoder)
               for name, obj in vars(module).items()
               if inspect.isclass(obj) and issubclass(obj, Function) and obj.__module__ == module.__name__}


def _leaf(rng, *shape):
    return ta.tensor(rng.standard_normal(shape), requires_grad=True)


def _outputs(result):
    """The Tensors in a layer's result, nested tuples flattened (None left out)."""
    if isinstance(result, ta.Tensor):
        return [result]
    return [t for part in result if part is not None for t in _outputs(part)]


def _run_both_ways(build, leaves):
    """build() with the switch on, then off: its outputs and every leaf's gradient must agree.

    Each run's loss weighs every output by the same random upstream gradient. Returns the names
    of the nodes each backward visited: (with the switch on, with it off).
    """
    runs = []
    for flag in (True, False):
        for leaf in leaves:
            leaf.grad = None
        with ta.fused(flag):
            outputs = _outputs(build())
        upstream = np.random.default_rng(7)
        loss = sum((out * ta.tensor(upstream.standard_normal(out.shape))).sum() for out in outputs)
        with ta.autograd.trace() as tape:
            loss.backward()
        runs.append(([out.data for out in outputs], [leaf.grad for leaf in leaves], {r.name for r in tape}))
    (outs_on, grads_on, names_on), (outs_off, grads_off, names_off) = runs
    assert len(outs_on) == len(outs_off)
    for i, (on, off) in enumerate(zip(outs_on, outs_off)):
        np.testing.assert_allclose(on, off, rtol=0, atol=1e-10, err_msg=f"output {i}")
    for i, (on, off) in enumerate(zip(grads_on, grads_off)):
        assert on is not None and off is not None, f"leaf {i} got no gradient"
        np.testing.assert_allclose(on, off, rtol=0, atol=1e-10, err_msg=f"gradient of leaf {i}")
    assert names_off.isdisjoint(FUSED_NODES), names_off & FUSED_NODES
    return names_on, names_off


def test_the_fused_nodes_are_found():
    assert FUSED_NODES == {"ScaledDotProductAttention", "AdditiveAttention", "GRUStep", "LSTMStep",
                           "GRUSequence", "LSTMSequence", "AttentiveGRUDecoder"}


# --- attention -----------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:scaled_dot_product_attention. the mask leaves some query")
@pytest.mark.parametrize("masks", ["padding", "causal and a trained bias"])
def test_sdpa_on_and_off(masks, rng):
    q, k, v = _leaf(rng, 2, 3, 4, 5), _leaf(rng, 2, 3, 6, 5), _leaf(rng, 2, 3, 6, 2)
    leaves = [q, k, v]
    if masks == "padding":  # batch 1 sees no key at all: zero weights either way
        kwargs = dict(mask=nn.padding_mask([4, 0], 6)[:, None])
    else:
        bias = _leaf(rng, 1, 3, 4, 6)
        leaves.append(bias)
        kwargs = dict(attn_mask=np.tril(np.ones((4, 6), bool)), bias=bias)
    names_on, names_off = _run_both_ways(lambda: F.scaled_dot_product_attention(q, k, v, **kwargs), leaves)
    assert "ScaledDotProductAttention" in names_on and "Softmax" not in names_on
    assert {"Softmax", "MatMul"} <= names_off


def test_sdpa_with_dropout_on_and_off_draws_the_same_mask(rng):
    q, k, v = _leaf(rng, 2, 4, 3), _leaf(rng, 2, 5, 3), _leaf(rng, 2, 5, 3)

    def build():
        ta.manual_seed(3)
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)

    names_on, names_off = _run_both_ways(build, [q, k, v])
    assert "ScaledDotProductAttention" in names_on and "Softmax" in names_off


@pytest.mark.parametrize("average", [True, False], ids=["averaged weights", "weights per head"])
def test_multihead_attention_with_padding_and_attn_mask_on_and_off(average, rng):
    ta.manual_seed(0)
    mha = nn.MultiheadAttention(6, 2, batch_first=True).double().eval()
    query, memory = _leaf(rng, 2, 3, 6), _leaf(rng, 2, 4, 6)
    padding = np.array([[False, False, False, True], [False, True, True, True]])  # True = padding (PyTorch)
    attn_mask = np.array([[False, True, False, False], [False, False, True, False], [True, False, False, False]])
    names_on, names_off = _run_both_ways(
        lambda: mha(query, memory, memory, key_padding_mask=padding, attn_mask=attn_mask,
                    average_attn_weights=average),
        [query, memory, *mha.parameters()])
    assert "ScaledDotProductAttention" in names_on and "Softmax" in names_off


@pytest.mark.parametrize("score", ["dot", "scaled_dot", "additive"])
def test_attention_layer_with_a_mask_on_and_off(score, rng):
    ta.manual_seed(0)
    attention = nn.Attention(4, 4, score=score, hidden_size=5).double()
    query, keys, values = _leaf(rng, 3, 2, 4), _leaf(rng, 3, 5, 4), _leaf(rng, 3, 5, 2)
    mask = nn.padding_mask([5, 2, 3], 5)
    names_on, names_off = _run_both_ways(lambda: attention(query, keys, values, mask=mask),
                                         [query, keys, values, *attention.parameters()])
    fused_node = "AdditiveAttention" if score == "additive" else "ScaledDotProductAttention"
    assert fused_node in names_on and "Softmax" in names_off


# --- recurrent -----------------------------------------------------------------------------------
@pytest.mark.parametrize("cls, node", [(nn.GRU, "GRUSequence"), (nn.LSTM, "LSTMSequence")], ids=["GRU", "LSTM"])
def test_two_layer_bidirectional_layers_with_lengths_and_h0_on_and_off(cls, node, rng):
    ta.manual_seed(0)
    layer = cls(3, 4, num_layers=2, bidirectional=True, batch_first=True).double()
    x, h0, c0 = _leaf(rng, 3, 5, 3), _leaf(rng, 4, 3, 4), _leaf(rng, 4, 3, 4)
    lengths = np.array([5, 1, 3])
    state, leaves = ((h0, c0), [x, h0, c0]) if cls is nn.LSTM else (h0, [x, h0])
    names_on, _ = _run_both_ways(lambda: layer(x, state, lengths=lengths), leaves + list(layer.parameters()))
    assert node in names_on


@pytest.mark.parametrize("cls, node", [(nn.GRUCell, "GRUStep"), (nn.LSTMCell, "LSTMStep")], ids=["GRUCell", "LSTMCell"])
def test_cells_on_and_off(cls, node, rng):
    ta.manual_seed(0)
    cell = cls(3, 4).double()
    x, h, c = _leaf(rng, 2, 3), _leaf(rng, 2, 4), _leaf(rng, 2, 4)
    state, leaves = ((h, c), [x, h, c]) if cls is nn.LSTMCell else (h, [x, h])
    names_on, names_off = _run_both_ways(lambda: cell(x, state), leaves + list(cell.parameters()))
    assert node in names_on and "Tanh" in names_off


def test_the_attentive_decoder_via_seq2seq_loss_with_lengths_on_and_off():
    ta.manual_seed(0)
    data = ToyTranslation(max_phrases=2, seed=1)
    model = Seq2Seq(len(data.source_vocab), len(data.target_vocab), **TOKEN_IDS, embed_dim=4, hidden_size=3).double()
    source, lengths, target = data.batch(4)
    assert len(set(lengths)) > 1 and (target[:, -1] == TOKEN_IDS["pad_id"]).any()  # both sides padded
    names_on, _ = _run_both_ways(lambda: model.loss(source, lengths, target), list(model.parameters()))
    assert {"AttentiveGRUDecoder", "GRUSequence"} <= names_on


# --- what a learner sees with the switch off --------------------------------------------------------
def _multihead_loss(rng):
    """A small MultiheadAttention (2 heads) over 2 sentences of 3 words, the second padded after 2."""
    ta.manual_seed(0)
    mha = nn.MultiheadAttention(4, 2, batch_first=True).double()
    mha.keep_weights = True
    x = ta.tensor(rng.standard_normal((2, 3, 4)))
    out, weights = mha(x, x, x, key_padding_mask=np.array([[False] * 3, [False, False, True]]),
                       average_attn_weights=False)
    return mha, (out * out).sum(), weights


def test_with_the_switch_off_the_scores_and_the_softmax_are_in_the_trace_and_the_graph(rng):
    scores_shape = (2, 2, 3, 3)  # (batch, heads, queries, keys)
    with ta.fused(False):
        _, loss, _ = _multihead_loss(rng)
    nodes, _ = graph_lists(loss)
    shapes = {(node.name, node.shapes[0]) for node in nodes}
    assert ("Softmax", scores_shape) in shapes and ("Mul", scores_shape) in shapes  # scores = Q K^T * scale
    with ta.autograd.trace() as tape:
        loss.backward()
    recorded = {(record.name, record.output_shapes[0]) for record in tape}
    assert ("Softmax", scores_shape) in recorded and ("Mul", scores_shape) in recorded

    with ta.fused(True):  # one node: neither softmax nor scores in sight
        _, loss, _ = _multihead_loss(rng)
    names = {node.name for node in graph_lists(loss)[0]}
    assert "ScaledDotProductAttention" in names and "Softmax" not in names


def test_retain_grad_on_multihead_attentions_own_scores_and_weights(rng):
    with ta.fused(False):
        mha, loss, returned = _multihead_loss(rng)
    scores, weights = mha.last_tensors
    assert returned is weights  # average_attn_weights=False returns the graph's own softmax output
    np.testing.assert_array_equal(weights.data, mha.last_weights)
    scores.retain_grad()
    weights.retain_grad()
    loss.backward()
    # the forward: weights = softmax(scores) over the real keys; the padded key gets exactly 0
    assert np.all(weights.data[1, :, :, 2] == 0)
    real = scores.data[..., :2]
    expected = np.exp(real - real.max(-1, keepdims=True))
    np.testing.assert_allclose(weights.data[1, ..., :2], (expected / expected.sum(-1, keepdims=True))[1], atol=1e-12)
    # the backward: dL/dscores = w * (dL/dw - sum(w dL/dw)), the softmax's rule, read off the two grads
    w, g = weights.data, weights.grad
    np.testing.assert_allclose(scores.grad, w * (g - (w * g).sum(-1, keepdims=True)), atol=1e-12)
    assert np.abs(scores.grad).max() > 1e-3 and np.all(scores.grad[1, :, :, 2] == 0)

    with ta.fused(True):  # no scores Tensor exists inside the fused node, and none is pretended
        mha, _, _ = _multihead_loss(rng)
    assert mha.last_tensors is None and mha.last_weights is not None


def test_keep_attention_weights_gives_every_transformer_layer_its_scores_and_weights(rng):
    ta.manual_seed(0)
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True), 2).double()
    attn = nn.keep_attention_weights(encoder)  # the layers call it with need_weights=False
    x = ta.tensor(rng.standard_normal((2, 3, 4)))
    with ta.fused(False):
        out = encoder(x)
    for module in attn.values():
        module.last_tensors.scores.retain_grad()
    (out * ta.tensor(rng.standard_normal(out.shape))).sum().backward()
    assert len(attn) == 2
    for module in attn.values():
        scores, weights = module.last_tensors
        assert scores.shape == weights.shape == (2, 2, 3, 3)
        np.testing.assert_array_equal(weights.data, module.last_weights)
        assert np.abs(scores.grad).max() > 1e-6
    nn.keep_attention_weights(encoder, on=False)
    assert all(module.last_tensors is None for module in attn.values())


# --- the switch itself ------------------------------------------------------------------------------
def test_the_switch_restores_nests_and_survives_an_error():
    start = ta.is_fused()  # True unless the suite runs with TINYATTN_FUSED=0
    with ta.fused(False):
        assert not ta.is_fused()
        with ta.fused(True):
            assert ta.is_fused()
        assert not ta.is_fused()
    assert ta.is_fused() == start
    with pytest.raises(KeyError):
        with ta.fused(not start):
            raise KeyError("inside")
    assert ta.is_fused() == start
    ta.fused(not start)  # a plain call switches until switched back
    try:
        assert ta.is_fused() != start
    finally:
        ta.fused(start)
    with pytest.raises(TypeError, match="True or False"):
        ta.fused(0)


def _in_a_fresh_process(value, code):
    env = dict(os.environ, TINYATTN_FUSED=value)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def test_tinyattn_fused_0_in_the_environment_turns_fusing_off():
    code = ("import numpy as np, tinyattn as ta, tinyattn.nn.functional as F\n"
            "q = ta.tensor(np.ones((1, 2, 3)), requires_grad=True)\n"
            "out, weights = F.scaled_dot_product_attention(q, q, q)\n"
            "print(ta.is_fused(), weights.grad_fn)")
    assert _in_a_fresh_process("0", code).stdout.split() == ["False", "Softmax"]
    assert _in_a_fresh_process("1", code).stdout.split() == ["True", "ScaledDotProductAttention"]
    refused = _in_a_fresh_process("maybe", "import tinyattn")
    assert refused.returncode != 0 and "TINYATTN_FUSED='maybe'" in refused.stderr
