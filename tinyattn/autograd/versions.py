"""Version counters: how backward finds out that an array it needs was changed in place.

Every in-place change of a tensor (`x += 1`, `x.mul_(2)`, an optimiser step) adds one to
`x._version`. A view of a tensor (x[0], x.reshape(...), x.T, x.detach()) shares its memory, so
it shares its counter too: changing either counts for both, as in PyTorch.

Graph nodes and in-place changes are stamped from one clock (`tick`), so backward can tell, at
each node, whether a tensor whose array the node saved (Mul keeps a and b, Exp keeps its output)
changed after the node was made; the gradient would then be silently wrong, so backward raises
PyTorch's error instead (saved_check.py). The node's arguments it holds already; a change of the node's own output
(or of a view of it) is written onto the node by the change itself (`producer` below). Only a
view pays on every op (share_with_view); the rest falls on the rare in-place change.
"""
import itertools
import weakref

tick = itertools.count(1).__next__  # the clock: node creation numbers and in-place changes
last_change = 0  # the stamp of the latest in-place change anywhere (the walk skips checks before it)
last_rewrite = 0  # the stamp of the latest recorded change of memory that views share (saved_check.py)


class VersionCounter:
    """One count of in-place changes, shared by a tensor and its views."""

    __slots__ = ("count", "changed_at", "shared", "producer", "root", "rewrites")

    def __init__(self, producer, root):
        self.count = 0
        self.changed_at = 0  # the clock's stamp of the last change
        self.shared = False  # True once a view shares it
        self.producer = producer  # the node that made this memory's tensor (None for a leaf)
        self.root = weakref.ref(root)  # the tensor the views were taken from (inplace.py)
        self.rewrites = ()  # ((stamp, array changed),) of the changes recorded in the graph while shared


def counter(tensor):
    """The tensor's counter, made on first need (most tensors never change and never need one)."""
    if tensor._versions is None:
        tensor._versions = VersionCounter(tensor._ctx, tensor)
    return tensor._versions


def version(tensor):
    """How many in-place changes the tensor's memory has seen (PyTorch's x._version)."""
    return 0 if tensor._versions is None else tensor._versions.count


def bump(tensor):
    """Count one in-place change of `tensor`'s memory, stamped with the clock."""
    global last_change
    changed = counter(tensor)
    changed.count += 1
    changed.changed_at = last_change = tick()
    producer = changed.producer
    if producer is not None and not producer.freed:  # it may have saved this output for backward
        producer.changed_outputs += ((tensor.data, changed),)


def share_with_view(view, base):
    """Give `view` the counter of `base` when its array reads base's memory (a view, or the
    very same array, as detach() hands on)."""
    owner = view.data.base  # numpy points a view's base at the array that owns the memory
    if view is not base and (view.data is base.data or
                             owner is not None and (owner is base.data or owner is base.data.base)):
        shared = view._versions = counter(base)
        shared.shared = True
    return view
