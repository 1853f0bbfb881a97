"""One written form per computation: the GRU step, the LSTM step and additive attention are each
written once as autograd ops (nn/recurrent.py GRURule.equations and LSTMRule.equations,
nn/additive_attention.py), their array math once in numpy (ops/reference_blocks.py,
ops/additive_attention_arrays.py); every other form calls those or is a kernel naming them.

What tests/test_fused_switch.py, test_sequence_nodes.py and test_kernel_table.py already check
(layers with lengths, the decoder with a source mask, the attention node with a mask, each
kernel against its reference) is not repeated here. This file adds the step nodes with frozen
rows (`keep`, what a layer's step past a sequence's end does) against the rule's equations and
where(), and the exercise's additive score against the layer's.
"""
import numpy as np
import pytest

import tinyattn as ta
from tinyattn.exercises.catalog import PATH
from tinyattn.nn.additive_attention import additive_attention_composed
from tinyattn.nn.recurrent import GRURule, LSTMRule


def _leaf(rng, *shape):
    return ta.tensor(rng.standard_normal(shape), requires_grad=True)


@pytest.mark.parametrize("Rule", [GRURule, LSTMRule], ids=["GRU", "LSTM"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no bias"])
def test_the_step_node_with_frozen_rows_equals_the_equations_and_where(Rule, bias, rng):
    B, H = 4, 3
    rule = Rule(H)
    gi, w_hh = _leaf(rng, B, rule.gates * H), _leaf(rng, rule.gates * H, H)
    b_hh = _leaf(rng, rule.gates * H) if bias else None
    state = (_leaf(rng, B, H), _leaf(rng, B, H)) if rule.state_is_pair else _leaf(rng, B, H)
    leaves = [gi, w_hh, *([b_hh] if bias else []), *(state if rule.state_is_pair else [state])]
    keep = np.array([[True], [False], [True], [False]])  # rows 1 and 3 have ended
    upstream = [rng.standard_normal((B, H)) for _ in range(2)]
    results = []
    for flag in (True, False):
        for leaf in leaves:
            leaf.grad = None
        with ta.fused(flag):
            new = rule.step(gi, state, w_hh, b_hh, keep)
        outputs = new if isinstance(new, tuple) else (new,)
        sum((out * ta.tensor(u)).sum() for out, u in zip(outputs, upstream)).backward()
        results.append(([out.data for out in outputs], [leaf.grad for leaf in leaves]))
    (outs_on, grads_on), (outs_off, grads_off) = results
    for on, off in zip(outs_on + grads_on, outs_off + grads_off):
        np.testing.assert_allclose(on, off, rtol=0, atol=1e-12)
    old = state[0] if rule.state_is_pair else state
    np.testing.assert_array_equal(outs_on[0][1], old.data[1])  # a frozen row keeps its state


def test_the_exercises_additive_score_is_the_layers_and_the_templates():
    """The exercise's answer comes from nn/additive_attention.py's additive_scores (no copy of its
    own), and is the score its template's numpy forward computes and the layer's softmax takes."""
    exercise = next(e for e in PATH if e.name == "additive_score")
    arrays = exercise.sample_inputs()
    q, k, W, U, v = (ta.tensor(a) for a in arrays.values())
    scores = exercise.reference(q, k, W, U, v).data
    np.testing.assert_allclose(scores, exercise.template.forward(*arrays.values())[0], rtol=0, atol=1e-13)
    values = ta.tensor(np.random.default_rng(0).standard_normal((q.shape[0], k.shape[1], 2)))
    _, weights = additive_attention_composed(q, W, k @ U.T, v.reshape(1, -1), values, None)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    np.testing.assert_allclose(weights.data, e / e.sum(-1, keepdims=True), rtol=0, atol=1e-13)

