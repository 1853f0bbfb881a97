"""Backward's check that an array a node saved was not changed in place after the node was made:
the gradient would be silently wrong, so it raises PyTorch's error instead. The walk (engine.py)
asks only when some in-place change happened since the node was made (versions.last_change).
Also that each view a node used still had the history its values came from (check_views)."""
import numpy as np

from .inplace import as_used_by


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
    check_views(node)


def _raise_changed(node, what, array, shared):
    raise RuntimeError(
        f"one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: the {array.dtype} tensor of shape {tuple(array.shape)} that is {what} of "
        f"{node.fn.__name__} is at version {shared.count}, changed after {node.fn.__name__} saved it "
        "for backward. Hint: change a copy (y = x.clone(); y += ...), write the change out of place "
        "(x = x + ...), or make it after backward")


def check_views(node):
    """Raise if `node` used a view whose memory a change recorded in the graph rewrote (through
    another view or the base) after the view was taken: its history misses that change."""
    for arg in node.args:
        shared = getattr(arg, "_versions", None)
        if shared is None or not shared.rewrites:
            continue
        history = as_used_by(arg, node)._ctx
        if history is None:  # no history to miss a change (a view outside the graph, x.detach())
            continue
        for stamp, changed in shared.rewrites:
            if history._created < stamp < node._created and np.may_share_memory(changed, arg.data):
                raise RuntimeError(
                    f"backward: {node.fn.__name__} used a view of shape {tuple(arg.shape)} taken before its "
                    "memory was changed in place through another view of it (or its base), so its history "
                    "misses that change (PyTorch regenerates a view's history; tinyattn does not). Take the "
                    "view again after the change (v = x[0] after x[0:2].mul_(...))")
