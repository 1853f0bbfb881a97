"""The path of exercises, easy to whole block: for each, its sample inputs and tinyattn's answer.

Each exercise has a template (templates/NAME.py: forward given, backward blank) and a solution
module (solutions/NAME.py: hints, the worked backward, the classic mistakes). The reference here
computes the same forward with tinyattn's own Functions and layers, whose backward (gradchecked
in the test suite) gives the true gradient the checker compares a learner's with.
"""
import importlib
from dataclasses import dataclass, field

import numpy as np

from ..nn import functional as F
from ..nn.additive_attention import additive_scores
from ..nn.layers import EmbeddingFunction, LayerNormFunction
from ..nn.fused.recurrent_steps import GRUStep, LSTMStep
from ..nn.recurrent import RNNRule
from ..nn.transformer import TransformerEncoderLayer


@dataclass(frozen=True)
class Exercise:
    name: str
    title: str
    inputs: dict          # input name -> shape, in forward's order: the arrays that get a gradient
    reference: callable   # (*input tensors, *constants) -> tinyattn's output for the same forward
    engine: str           # where tinyattn computes the same backward, to compare with once solved
    constants: dict = field(default_factory=dict)  # data after the inputs (targets, masks): no gradient
    scale: float = None   # a 1/sqrt(d) the forward multiplies by, for the hint when it is missed or doubled

    @property
    def template(self):
        return importlib.import_module(f"{__package__}.templates.{self.name}")

    @property
    def solution(self):
        return importlib.import_module(f"{__package__}.solutions.{self.name}")

    def sample_inputs(self):
        """Fixed float64 inputs, the same on every run so that a verdict can be repeated."""
        rng = np.random.default_rng(2017)
        return {name: rng.standard_normal(shape) for name, shape in self.inputs.items()}


def _split_heads(x, heads):
    B, T, E = x.shape
    return x.reshape(B, T, heads, E // heads).transpose(1, 2)


def _multi_head(q, k, v, w_o, b_o, num_heads):
    B, T, E = q.shape
    heads, _ = F.scaled_dot_product_attention(*(_split_heads(t, num_heads) for t in (q, k, v)))
    return heads.transpose(1, 2).reshape(B, T, E) @ w_o.T + b_o


def _additive_score(q, k, W, U, v):
    # nn.Attention's additive score, its weights given as tensors instead of Linear layers.
    return additive_scores(q, W, k @ U.T, v.reshape(1, -1))


ENCODER_PARAMETERS = ["self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                      "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
                      "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"]


def _encoder_layer(x, *parameters_and_heads):
    """tinyattn's nn.TransformerEncoderLayer (post-norm, ReLU, no dropout) with the given weights."""
    *parameters, num_heads = parameters_and_heads
    layer = TransformerEncoderLayer(x.shape[-1], num_heads, dim_feedforward=parameters[4].shape[0], dropout=0.0,
                                    batch_first=True)
    for dotted, parameter in zip(ENCODER_PARAMETERS, parameters):
        owner, _, attribute = dotted.rpartition(".")
        module = layer
        for part in owner.split("."):
            module = getattr(module, part)
        setattr(module, attribute, parameter)  # a plain Tensor in the Parameter's place: its .grad is the answer
    return layer(x)


B, T, E, H = 2, 3, 4, 2   # small, so that finite differences of every element stay quick
PATH = [
    Exercise("broadcast", "elementwise ops with broadcasting: y = x * w + b",
             {"x": (3, 4), "w": (4,), "b": (3, 1)}, lambda x, w, b: x * w + b,
             "tinyattn/autograd/dtypes.py (unbroadcast) and Mul, Add in tinyattn/autograd/rules_elementwise.py"),
    Exercise("matmul", "a batch of matrix products with a shared weight",
             {"x": (B, T, 4), "w": (4, 5)}, lambda x, w: x @ w, "class MatMul in tinyattn/autograd/rules_nn.py"),
    Exercise("softmax", "softmax along the last axis", {"x": (3, 5)}, lambda x: x.softmax(-1),
             "class Softmax in tinyattn/autograd/rules_nn.py"),
    Exercise("cross_entropy", "log-softmax with cross-entropy, the mean over the batch", {"logits": (4, 5)},
             lambda logits, target: F.cross_entropy(logits, target),
             "class CrossEntropy in tinyattn/autograd/rules_nn.py", constants={"target": np.array([1, 0, 4, 1])}),
    Exercise("layer_norm", "layer normalisation with weight and bias",
             {"x": (B, T, 5), "weight": (5,), "bias": (5,)},
             lambda x, weight, bias: LayerNormFunction.apply(x, weight, bias, (2,), 1e-5),
             "class LayerNormFunction in tinyattn/nn/layers.py"),
    Exercise("attention", "scaled dot-product attention with a causal mask",
             {"q": (B, 4, 3), "k": (B, 4, 3), "v": (B, 4, 2)},
             lambda q, k, v, allowed: F.scaled_dot_product_attention(q, k, v, mask=allowed)[0],
             "class ScaledDotProductAttention in tinyattn/nn/fused/dot_product_attention_node.py",
             constants={"allowed": np.tril(np.ones((4, 4), bool))}, scale=1 / np.sqrt(3)),
    Exercise("multi_head", "multi-head split and join, with the output projection",
             {"q": (B, T, E), "k": (B, T, E), "v": (B, T, E), "w_o": (E, E), "b_o": (E,)}, _multi_head,
             "MultiheadAttention.forward in tinyattn/nn/multihead.py, differentiated by its ops",
             constants={"num_heads": H}, scale=1 / np.sqrt(E // H)),
    Exercise("additive_score", "Bahdanau's additive score v . tanh(W q + U k)",
             {"q": (B, T, 4), "k": (B, 5, 3), "W": (6, 4), "U": (6, 3), "v": (6,)}, _additive_score,
             "additive_scores in tinyattn/nn/additive_attention.py, differentiated by its ops"),
    Exercise("embedding", "token embeddings times sqrt(d), plus learned positions",
             {"table": (6, E), "positions": (5, E)},
             lambda table, positions, tokens: (EmbeddingFunction.apply(table, tokens, None) * np.sqrt(E)
                                               + positions[:tokens.shape[1]]),
             "class EmbeddingFunction in tinyattn/nn/layers.py",
             constants={"tokens": np.array([[1, 3, 1], [0, 1, 5]])}),  # word 1 three times: its gradients add up
    Exercise("rnn_step", "one step of a tanh RNN",
             {"x": (3, 4), "h": (3, 5), "w_ih": (5, 4), "w_hh": (5, 5), "b_ih": (5,), "b_hh": (5,)},
             lambda x, h, w_ih, w_hh, b_ih, b_hh: RNNRule(h.shape[1]).equations(x @ w_ih.T + b_ih, h, w_hh, b_hh),
             "RNNRule.equations in tinyattn/nn/recurrent.py, differentiated by its ops"),
    Exercise("gru_step", "one GRU step, PyTorch's equations",
             {"x": (3, 4), "h": (3, 3), "w_ih": (9, 4), "w_hh": (9, 3), "b_ih": (9,), "b_hh": (9,)},
             lambda x, h, w_ih, w_hh, b_ih, b_hh: GRUStep.apply(x @ w_ih.T + b_ih, h, w_hh, b_hh, None),
             "class GRUStep in tinyattn/nn/fused/recurrent_steps.py"),
    Exercise("lstm_step", "one LSTM step, PyTorch's equations (two outputs: h' and c')",
             {"x": (3, 4), "h": (3, 3), "c": (3, 3), "w_ih": (12, 4), "w_hh": (12, 3), "b_ih": (12,), "b_hh": (12,)},
             lambda x, h, c, w_ih, w_hh, b_ih, b_hh: LSTMStep.apply(x @ w_ih.T + b_ih, h, c, w_hh, b_hh, None),
             "class LSTMStep in tinyattn/nn/fused/recurrent_steps.py"),
    Exercise("encoder_layer", "the whole block: one Transformer encoder layer, from the pieces above",
             {"x": (B, T, E), "in_proj_weight": (3 * E, E), "in_proj_bias": (3 * E,), "out_proj_weight": (E, E),
              "out_proj_bias": (E,), "linear1_weight": (6, E), "linear1_bias": (6,), "linear2_weight": (E, 6),
              "linear2_bias": (E,), "norm1_weight": (E,), "norm1_bias": (E,), "norm2_weight": (E,), "norm2_bias": (E,)},
             _encoder_layer, "nn.TransformerEncoderLayer in tinyattn/nn/transformer.py, differentiated by its ops",
             constants={"num_heads": H}),
]
EXERCISES = {exercise.name: exercise for exercise in PATH}
