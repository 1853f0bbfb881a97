"""The exercises: for each, its file, its sample inputs and tinyattn's own answer to compare with.

The reference computes the same forward with tinyattn's Functions, so its backward (itself
gradchecked in the test suite) gives the true gradient the checker compares against.
"""
import os
from dataclasses import dataclass

import numpy as np

from ..nn import functional as F
from ..nn.linear import LayerNormFunction
from ..nn.fused.recurrent_steps import GRUStep

HERE = os.path.dirname(os.path.abspath(__file__))


@dataclass(frozen=True)
class Exercise:
    name: str
    summary: str
    inputs: dict          # argument name -> shape, in forward's order (float64 samples from a fixed seed)
    reference: callable   # tensors -> tinyattn's output Tensor for the same forward
    solution: str         # where tinyattn's own backward is, to compare with once solved
    scale: float = None   # the 1/sqrt(d) the forward multiplies by, if any (for the hint when it is forgotten)

    @property
    def path(self):
        return os.path.join(HERE, f"{self.name}.py")

    def sample_inputs(self):
        rng = np.random.default_rng(2017)
        return {name: rng.standard_normal(shape) for name, shape in self.inputs.items()}


def _additive_score(q, k, W, U, v):
    # Attention.scores with score="additive", the weights given as tensors instead of Linear layers.
    hidden = ((q @ W.T).unsqueeze(2) + (k @ U.T).unsqueeze(1)).tanh()
    return hidden @ v


EXERCISES = {e.name: e for e in [
    Exercise("softmax", "softmax along the last axis", {"x": (3, 5)}, lambda x: x.softmax(-1),
             "class Softmax in tinyattn/autograd/ops_nn.py"),
    Exercise("sdpa", "scaled dot-product attention: softmax(Q K^T / sqrt(d)) V",
             {"q": (2, 3, 6), "k": (2, 4, 6), "v": (2, 4, 5)},
             lambda q, k, v: F.scaled_dot_product_attention(q, k, v)[0],
             "class ScaledDotProductAttention in tinyattn/nn/fused/sdpa.py", scale=1 / np.sqrt(6)),
    Exercise("additive_score", "Bahdanau's additive score v . tanh(W q + U k)",
             {"q": (2, 3, 4), "k": (2, 5, 3), "W": (6, 4), "U": (6, 3), "v": (6,)}, _additive_score,
             "Attention.scores in tinyattn/nn/attention.py, differentiated by its ops (Linear, Add, Tanh)"),
    Exercise("gru_step", "one GRU step, PyTorch's equations",
             {"gi": (3, 12), "h": (3, 4), "w_hh": (12, 4), "b_hh": (12,)},
             lambda gi, h, w_hh, b_hh: GRUStep.apply(gi, h, w_hh, b_hh, None),
             "class GRUStep in tinyattn/nn/fused/recurrent_steps.py"),
    Exercise("layer_norm", "layer normalisation over the last axis, with weight and bias",
             {"x": (2, 3, 5), "weight": (5,), "bias": (5,)},
             lambda x, weight, bias: LayerNormFunction.apply(x, weight, bias, (2,), 1e-5),
             "class LayerNormFunction in tinyattn/nn/linear.py"),
]}
