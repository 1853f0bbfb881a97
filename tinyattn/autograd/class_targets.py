"""cross_entropy's arguments checked (PyTorch's options, the class targets), so ops_nn.py keeps to the calculus."""
import numpy as np

from .errors import ShapeError


def check_options(weight, reduction, label_smoothing, logits):
    """The options checked; returns the class weights as an array of the logits' dtype (or None)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"cross_entropy: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must lie in [0, 1], got {label_smoothing}")
    if weight is None:
        return None
    if getattr(weight, "requires_grad", False):
        raise ValueError("cross_entropy: weight= requires grad, but the loss gives class weights no gradient "
                         "(PyTorch neither); call .detach() on it first")
    array = np.asarray(getattr(weight, "data", weight))
    classes = logits.shape[-1] if logits.ndim else 0
    if array.shape != (classes,) or array.dtype.kind not in "fiu":
        raise ShapeError(f"cross_entropy: weight= must hold one number per class, shape ({classes},) for logits "
                         f"{logits.shape}, got {array.dtype} of shape {array.shape}")
    if array.dtype.kind == "f" and array.dtype != logits.dtype and hasattr(weight, "data"):
        raise TypeError(f"cross_entropy: weight is {array.dtype} but the logits are {logits.dtype}; convert one "
                        "with .double() or .float() first")
    return array.astype(logits.dtype, copy=False)


def check_targets(logits, target, ignore_index):
    target = np.asarray(target)
    if logits.ndim < 2:
        raise ShapeError(f"cross_entropy: logits {logits.shape} need a class axis last, as (N, C) or (B, T, C)")
    if target.dtype.kind not in "iu":
        raise TypeError(f"cross_entropy: targets must be integer class indices, got {target.dtype}")
    if target.shape != logits.shape[:-1]:
        raise ShapeError(
            f"cross_entropy: logits {logits.shape} need targets of shape {logits.shape[:-1]}, got {target.shape}"
        )
    classes = logits.shape[-1]
    real = target[target != ignore_index] if ignore_index is not None else target
    if real.size and (real.min() < 0 or real.max() >= classes):
        bad = real[(real < 0) | (real >= classes)][0]
        raise IndexError(f"cross_entropy: target {bad} is not a class index in [0, {classes})")
    return target
