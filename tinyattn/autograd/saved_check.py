"""Backward's check that an array a node saved was not changed in place after the node was made:
the gradient would be silently wrong, so it raises PyTorch's error instead. The walk (engine.py)
asks only when some in-place change happened since the node was made (versions.last_change).
It also points a node at a fresh history for a view whose base changed since (inplace.py)."""
import numpy as np

from .inplace import refresh_views


def check_saved(node):
    """Raise PyTorch's error if an array `node` saved for backward was changed in place after the
    node was made (engine.py asks only when some change happened since then)."""
    saved = [array for array in node._saved if isinstance(array, np.ndarray)]
    for position, arg in enumerate(node.args):
        shared = getattr(arg, "_versions", None)
        if shared is not None and shared.changed_at > node._created and any(
                np.may_share_memory(a, arg.data) for a in saved):  # the array itself or a view of it
            _raise_changed(node, f"argument {position}", arg.data, shared)
    for array, shared in node.changed_outputs:
        if any(np.may_share_memory(a, array) for a in saved):
            _raise_changed(node, "its output", array, shared)
    refresh_views(node)


def _raise_changed(node, what, array, shared):
    raise RuntimeError(
        f"one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: the {array.dtype} tensor of shape {tuple(array.shape)} that is {what} of "
        f"{node.fn.__name__} is at version {shared.count}, changed after {node.fn.__name__} saved it "
        "for backward. Hint: change a copy (y = x.clone(); y += ...), write the change out of place "
        "(x = x + ...), or make it after backward")

