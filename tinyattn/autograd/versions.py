"""Version counters: how backward finds out that an array it needs was changed in place.

Every in-place change of a tensor (`x += 1`, `x.mul_(2)`, an optimiser step) adds one to
`x._version`. A view of a tensor (x[0], x.reshape(...), x.T, x.detach()) shares its memory, so
it shares its counter too: changing either counts for both, as in PyTorch.

When a node saves one of its inputs' or outputs' arrays for backward (Mul keeps a and b, Exp
keeps its output), it writes down that tensor's version. Before the node's backward runs, the
walk compares: a different number means the array now holds other values than forward used, and
the gradient would be silently wrong, so backward raises PyTorch's error instead.
"""
import numpy as np


class VersionCounter:
    """One count of in-place changes, shared by a tensor and its views."""

    __slots__ = ("count", "shared")

    def __init__(self):
        self.count = 0
        self.shared = False  # True once a view shares it (see refuse_view_in_graph in inplace.py)


def counter(tensor):
    """The tensor's counter, made on first need (most tensors never change and never need one)."""
    if tensor._versions is None:
        tensor._versions = VersionCounter()
    return tensor._versions


def version(tensor):
    """How many in-place changes the tensor's memory has seen (PyTorch's x._version)."""
    return 0 if tensor._versions is None else tensor._versions.count


def bump(tensor):
    counter(tensor).count += 1


def share_with_view(view, base):
    """Give `view` the counter of `base` when its array reads base's memory."""
    if view.data.base is not None and view is not base:
        shared = view._versions = counter(base)
        shared.shared = True
    return view


def watch_saved(ctx, args, outputs):
    """Note the version of every Tensor argument or output whose array `ctx` saved for backward."""
    watched = []
    for array in ctx._saved:
        if array.__class__ is not np.ndarray:  # a saved number or None belongs to no tensor
            continue
        for position, arg in enumerate(args):
            if getattr(arg, "data", None) is array:
                watched.append((arg, version(arg), array, f"argument {position}"))
        for index, output in enumerate(outputs):
            if output.data is array:
                # The output's counter, not the output: the node must not keep its own output alive.
                watched.append((counter(output), 0, array, f"output {index}"))
    if watched:
        ctx.saved_versions = watched


def check_saved(node):
    """Raise PyTorch's error if an array `node` saved was changed in place since forward."""
    for source, expected, array, what in node.saved_versions:
        now = source.count if isinstance(source, VersionCounter) else version(source)
        if now != expected:
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: the {array.dtype} tensor of shape {tuple(array.shape)} that is "
                f"{what} of {node.fn.__name__} is at version {now}; expected version {expected} "
                f"instead. Hint: {node.fn.__name__} saved it for backward; change a copy "
                "(y = x.clone(); y += ...) or write the change out of place (x = x + ...)"
            )
