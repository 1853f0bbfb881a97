"""Each classic mistake, written into the worked solution, fails with the one hint that names it."""
import inspect
import re
import types

import pytest

from tinyattn.exercises import EXERCISES, judge
from tinyattn.exercises.checker import _upstream

# (exercise, a piece of the worked solution, the mistake in its place, what the verdict must say)
MISTAKES = [
    ("broadcast", "return grad * w,", "return grad,", "the factor w is missing"),
    ("broadcast", "return grad * w,", "return -grad * w,", "the negative of the right gradient"),
    ("broadcast", "(grad * x).sum(axis=0)", "grad * x", r"dL/dw has shape \(3, 4\).*summed over axis 0, is right"),
    ("broadcast", "(grad * x).sum(axis=0)", "(grad * x).sum(axis=1)", "sums grad \\* x over axis 1"),
    ("broadcast", "grad.sum(axis=1, keepdims=True)", "grad", r"summed over axis 1, is right.*\.sum\(axis=1\)"),
    ("broadcast", "grad.sum(axis=1, keepdims=True)", "grad.sum(axis=1)",
     r"numbers are right but the shape is \(3,\), not \(3, 1\): keep the summed axis"),
    ("broadcast", "grad.sum(axis=1, keepdims=True)", "grad.sum(axis=0)", "sums grad over axis 0"),
    ("matmul", "x.reshape(-1, N).T @ grad.reshape(-1, M)", "grad.reshape(-1, M).T @ x.reshape(-1, N)",
     r"dL/dw has shape \(5, 4\).*the transpose of dL/dw"),
    ("matmul", "x.reshape(-1, N).T @ grad.reshape(-1, M)", "x.swapaxes(-1, -2) @ grad",
     r"dL/dw has shape \(2, 4, 5\).*summed over axis 0, is right"),
    ("matmul", "x.reshape(-1, N).T @ grad.reshape(-1, M)", "x[-1].T @ grad[-1]", "last batch element's"),
    ("matmul", "return grad @ w.T", "return -grad @ w.T", "the negative"),
    ("softmax", "return y * (grad - s)", "return y * grad", "'- sum' term is missing"),
    ("softmax", "return y * (grad - s)", "return grad * y * (1 - y)", "only the diagonal of the Jacobian"),
    ("softmax", "(grad * y).sum(axis=-1, keepdims=True)", "(grad * y).sum()", "one sum over the whole array"),
    ("softmax", "(grad * y).sum(axis=-1, keepdims=True)", "(grad * y).sum(axis=0, keepdims=True)", "sums over axis 0"),
    ("softmax", "return y * (grad - s)", "return y * (s - grad)", "the negative"),
    ("softmax", "return y * (grad - s)", "return 2 * y * (grad - s)", "2 times the right gradient"),
    ("cross_entropy", "return grad * d_logits / len(target)", "return d_logits / len(target)",
     "right up to the factor grad"),
    ("cross_entropy", "return grad * d_logits / len(target)", "return grad * d_logits", "B = 4 times too large"),
    ("cross_entropy", "d_logits = np.exp(log_p)", "d_logits = np.zeros_like(log_p)", "only the one-hot part"),
    ("cross_entropy", "return grad * d_logits / len(target)", "return -grad * d_logits / len(target)", "negative"),
    ("layer_norm", "inv_std * (h - h.mean(axis=-1, keepdims=True) - x_hat * (h * x_hat).mean(axis=-1, keepdims=True))",
     "inv_std * h", "treated the mean and the variance as constants"),
    ("layer_norm", "inv_std * (h - h.mean(axis=-1, keepdims=True) - x_hat * (h * x_hat).mean(axis=-1, keepdims=True))",
     "inv_std * (h - h.mean(axis=-1, keepdims=True))", "but not the one through the variance"),
    ("layer_norm", "inv_std * (h - h.mean(axis=-1, keepdims=True) - x_hat * (h * x_hat).mean(axis=-1, keepdims=True))",
     "inv_std * (h - x_hat * (h * x_hat).mean(axis=-1, keepdims=True))", "but not the one through the mean"),
    ("layer_norm", "(grad * x_hat).reshape(-1, N).sum(axis=0)", "grad * x_hat",
     r"dL/dweight has shape \(2, 3, 5\).*summed over axes \(0, 1\), is right"),
    ("layer_norm", "(grad * x_hat).reshape(-1, N).sum(axis=0)", "(grad * x_hat).sum(axis=-1)",
     "sums over the last axis"),
    ("layer_norm", "grad.reshape(-1, N).sum(axis=0)", "grad", r"dL/dbias .*summed over axes \(0, 1\), is right"),
    ("attention", "return d_scores @ k * scale, d_scores.swapaxes(-1, -2) @ q * scale",
     "return d_scores @ k, d_scores.swapaxes(-1, -2) @ q", r"dL/dq is wrong.*sqrt\(d\) = 1.732 times too large"),
    ("attention", "return d_scores @ k * scale,", "return d_scores @ k * scale * scale,", "applied twice"),
    ("attention", "scores = np.where(allowed, q @ k.swapaxes(-1, -2) * scale, -np.inf)",
     "scores = q @ k.swapaxes(-1, -2) * scale", "without the mask would get"),
    ("attention", "scores = np.where(allowed, q @ k.swapaxes(-1, -2) * scale, -np.inf)",
     "scores = np.where(allowed, q @ k.swapaxes(-1, -2) * scale, 0)",
     r"nonzero at \d+ elements where the right gradient is exactly 0, such as q\[0, 0, 0\].*a mask missing"),
    ("attention", "d_scores = weights * (d_weights - (d_weights * weights).sum(axis=-1, keepdims=True))",
     "d_scores = weights * d_weights", "misses the softmax's '- sum' term"),
    ("attention", "d_scores.swapaxes(-1, -2) @ q * scale", "d_scores @ q * scale", r"dL/dk .*it is dS\^T q"),
    ("multi_head", "join_heads(d_q)", "d_q.reshape(grad.shape)", "right numbers in the wrong places"),
    ("multi_head", "split_heads(grad @ w_o, num_heads)", "(grad @ w_o).reshape(attention_cache[0].shape)",
     "the gradient reaching the heads is scrambled"),
    ("multi_head", "rows.T @ joined.reshape(-1, E)", "joined.reshape(-1, E).T @ rows", "dL/dw_o .*the transpose"),
    ("multi_head", "rows.sum(axis=0)", "grad", r"dL/db_o has shape \(2, 3, 4\).*summed over axes \(0, 1\)"),
    ("additive_score", "* (1 - hidden ** 2)", "", "skips tanh's derivative"),
    ("additive_score", "* (1 - hidden ** 2)", "* (1 - hidden)", "multiplies by 1 - hidden"),
    ("additive_score", "d_query_part @ W,", "d_pre @ W,", r"dL/dq has shape \(2, 3, 5, 4\).*summed over axis 2"),
    ("additive_score", "d_query_part.reshape(-1, H).T @ q.reshape(-1, q.shape[-1])",
     "q.reshape(-1, q.shape[-1]).T @ d_query_part.reshape(-1, H)", "dL/dW has shape .*the transpose"),
    ("additive_score", "(grad[..., None] * hidden).reshape(-1, H).sum(axis=0)", "grad[..., None] * hidden",
     r"summed over axes \(0, 1, 2\), is right"),
    ("embedding", "np.add.at(d_table, tokens, grad * np.sqrt(d))", "d_table[tokens] = grad * np.sqrt(d)",
     "keeps only the last occurrence"),
    ("embedding", "np.add.at(d_table, tokens, grad * np.sqrt(d))", "np.add.at(d_table, tokens, grad)",
     "sqrt\\(d\\) = 2 times too small"),
    ("embedding", "return d_table, d_positions", "return d_table, grad.sum(axis=0)", "yours has T = 3 rows"),
    ("embedding", "return d_table, d_positions", "return d_table, grad", "one row per sentence and position"),
    ("embedding", "return d_table, d_positions", "return -d_table, d_positions", "negative"),
    ("rnn_step", "d_pre = grad * (1 - h_new ** 2)", "d_pre = grad", "skips tanh's derivative"),
    ("rnn_step", "d_pre = grad * (1 - h_new ** 2)", "d_pre = grad * (1 - np.arctanh(h_new) ** 2)",
     "takes 1 - a\\^2 with a the pre-activation"),
    ("rnn_step", "d_bias = d_pre.sum(axis=0)", "d_bias = d_pre", r"dL/db_ih has shape \(3, 5\).*summed over axis 0"),
    ("rnn_step", "d_pre.T @ h", "h.T @ d_pre", "dL/dw_hh is wrong.*the transpose of dL/dw_hh"),
    ("rnn_step", "d_pre.T @ x", "x.T @ d_pre", r"dL/dw_ih has shape \(4, 5\).*the transpose"),
    ("gru_step", "d_r = d_n * h_n * r * (1 - r)", "d_r = d_n * r * (1 - r)", "its gradient carries gh_n"),
    ("gru_step", "d_z = grad * (h - n) * z * (1 - z)", "d_z = grad * (n - h) * z * (1 - z)",
     "update gate's block has the wrong sign"),
    ("gru_step", "d_h = grad * z + d_gh @ w_hh", "d_h = d_gh @ w_hh", "misses the direct path"),
    ("gru_step", "d_gh = np.concatenate([d_r, d_z, d_n * r], axis=1)", "d_gh = np.concatenate([d_r, d_z, d_n], axis=1)",
     "dL/dh is wrong.*misses r"),
    ("gru_step", "d_gh.sum(axis=0)", "d_gh", r"dL/db_hh has shape \(3, 9\).*summed over axis 0"),
    ("lstm_step", "d_c_new = grad_c + grad_h", "d_c_new = grad_h", "misses grad_c"),
    ("lstm_step", "d_c_new = grad_c + grad_h * o * (1 - np.tanh(c_new) ** 2)", "d_c_new = grad_c",
     "misses the path from c' through"),
    ("lstm_step", "(1 - np.tanh(c_new) ** 2)", "(1 - c_new ** 2)", "takes 1 - c'\\^2"),
    ("lstm_step", "d_c_new * c * f * (1 - f)", "d_c_new * c_new * f * (1 - f)", "uses the new cell"),
    ("lstm_step", "d_bias = d_gates.sum(axis=0)", "d_bias = d_gates", r"summed over axis 0, is right"),
    ("encoder_layer", "d_x = d_sum1 + d_qkv @ in_proj_weight", "d_x = d_qkv @ in_proj_weight",
     "skip connection of the attention block"),
    ("encoder_layer", "return d_sum2 + d_hidden @ linear1_weight,", "return d_hidden @ linear1_weight,",
     "skip connection of the feed-forward block"),
    ("encoder_layer", "d_hidden = (d_sum2 @ linear2_weight) * (hidden > 0)", "d_hidden = d_sum2 @ linear2_weight",
     "through ReLU everywhere"),
    ("encoder_layer", "rows.sum(axis=0), d_out_w", "d_qkv, d_out_w",
     r"dL/din_proj_bias has shape \(2, 3, 12\).*summed over axes \(0, 1\)"),
    ("encoder_layer", "rows2.T @ active.reshape(-1, active.shape[-1])",
     "active.reshape(-1, active.shape[-1]).T @ rows2",
     r"dL/dlinear2_weight has shape \(6, 4\).*the transpose"),
]


def _with_mistake(name, right, wrong):
    """The solution module with the first `right` (in backward or a helper, before mistakes()) made `wrong`."""
    module = EXERCISES[name].solution
    source = inspect.getsource(module)
    assert -1 < source.find(right) < source.index("def mistakes"), f"{right!r} is not in {name}'s backward"
    patched = types.ModuleType(f"{module.__name__}_with_mistake")
    patched.__package__ = module.__package__
    exec(compile(source.replace(right, wrong, 1), module.__file__, "exec"), patched.__dict__)
    return patched.backward


@pytest.mark.parametrize("name, right, wrong, expected", MISTAKES, ids=[f"{m[0]}: {m[2]}" for m in MISTAKES])
def test_a_classic_mistake_fails_with_the_hint_that_names_it(name, right, wrong, expected):
    verdict = judge(name, EXERCISES[name].template.forward, _with_mistake(name, right, wrong))
    assert not verdict.passed
    assert len(verdict.message.split("Hint:")) == 2, verdict.message  # one hint, no more
    assert re.search(expected, verdict.message, flags=re.S), verdict.message


@pytest.mark.parametrize("name", list(EXERCISES))
def test_every_mistake_an_exercise_recognises_has_a_case_above(name):
    exercise = EXERCISES[name]
    arrays = exercise.sample_inputs()
    _, cache = exercise.template.forward(*arrays.values(), *exercise.constants.values())
    expected = [m[3] for m in MISTAKES if m[0] == name]
    for mistake in exercise.solution.mistakes(_upstream(exercise), cache, arrays):
        assert any(re.search(pattern.split(".*")[-1], mistake.hint) for pattern in expected), mistake.hint
