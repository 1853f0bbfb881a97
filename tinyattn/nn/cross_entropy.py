"""F.cross_entropy: PyTorch's layout, classes on axis 1, in front of the one graph node
(autograd/rules_nn.py's CrossEntropy), which takes the classes last."""
import numpy as np

from ..autograd import rules_nn as ops_nn
from ..autograd.dtypes import ShapeError


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """PyTorch's F.cross_entropy, with its layout: logits (N, C), or (N, C, d1, ...) with the classes
    on axis 1 and targets (N, d1, ...) of class indices, or probabilities of the logits' own shape;
    a sequence model's (B, T, C) logits go in as logits.transpose(1, 2), or to ta.cross_entropy,
    tinyattn's own, which takes the classes last. Options as ta.cross_entropy's (weight,
    ignore_index, reduction, label_smoothing)."""
    if input.ndim > 2:  # move the classes last, where the one graph node (ops_nn.CrossEntropy) wants them
        given = tuple(np.shape(getattr(target, "data", target)))
        wanted = (input.shape[0],) + tuple(input.shape[2:])
        if given == tuple(input.shape):  # probabilities: their classes move too
            target = target.permute(0, *range(2, input.ndim), 1) if hasattr(target, "permute") else \
                np.moveaxis(np.asarray(target), 1, -1)
        elif given != wanted:
            raise ShapeError(
                f"cross_entropy: input {tuple(input.shape)} has its classes on axis 1 (PyTorch's layout, "
                f"(N, C, d1, ...)), so the target must be {wanted} (class indices) or {tuple(input.shape)} "
                f"(probabilities), got {given}. "
                "For a sequence's (B, T, C) logits pass logits.transpose(1, 2), or use ta.cross_entropy (classes last)")
        input = input.permute(0, *range(2, input.ndim), 1)
    return ops_nn.cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)
