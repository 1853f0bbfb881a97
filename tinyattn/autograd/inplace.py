"""In-place ops with PyTorch's meaning: x += y, x.add_(y), x.zero_(), x[0] = 5, ...

    with ta.no_grad():
        p -= lr * p.grad          # changes p's array in place: the hand-written SGD step

Three cases, as in PyTorch:
1. Under no_grad (or when nothing involved needs a gradient) the new values are written into
   the tensor's own array, so every view of it and every holder of it (an optimiser) sees them.
2. A leaf that requires grad, outside no_grad, is refused: its .grad would no longer belong to
   the values it holds.
3. Any other tensor in grad mode gets the change recorded: the out-of-place op runs on a copy of
   the old values (which keeps the old history; the graph holds it, so it goes with the graph),
   the result is written into the array, and the tensor's history becomes the new node. Nodes
   that used the tensor before still reach its old history (`_earlier`, as_used_by below).
   A change of a view (x[0], x.T, x[1, 2]) is one of the tensor it views, as in PyTorch: that
   tensor's history becomes CopySlices (below) and the view's a view of the new history;
   other views of it, taken before, are renewed when backward reaches them (refresh_views).
Every change adds one to `x._version` (the version counters, below): a node that saved the old
array for its backward then raises instead of giving a wrong gradient (check_saved, at the end).
"""
import numbers
import weakref

import numpy as np

from . import creation, engine
from . import tensor as _tensor
from .dtypes import ShapeError
from .function import Function, enable_grad, is_grad_enabled, tick


class InPlaceOps:
    __slots__ = ()  # a base of Tensor, whose instances keep their fixed slots

    @property
    def _version(self):
        """How many in-place changes this tensor's memory has seen (shared with its views)."""
        return version(self)

    def _change_in_place(self, op, out_of_place, *others):
        """Make self equal out_of_place(self), writing into self's array (module docstring);
        `others` are the operands besides self (a gradient may need to reach them)."""
        _refuse_unwritable(op, self.data)
        if not is_grad_enabled() or not (self.requires_grad or any(getattr(o, "requires_grad", False) for o in others)):
            _write(op, self, out_of_place(self))  # nothing to record: computed from self's own values
            return self
        if self.requires_grad and self._ctx is None:
            raise RuntimeError(
                f"{op}: a leaf Variable that requires grad is being used in an in-place operation. "
                "Change a parameter in place inside `with ta.no_grad():` (an optimiser step), "
                "or write the change out of place (x = x + ...)")
        shared = self._versions if self._versions is not None and self._versions.shared else None
        if shared is not None and self._ctx is not None and self._ctx.n_outputs > 1:  # unbind's, split's pieces
            raise RuntimeError(
                f"{op}: output {self._out_index} of {self._ctx.fn.__name__} is a view and is being modified "
                "inplace. This view is the output of a function that returns multiple views. Such functions "
                "do not allow the output views to be modified inplace (PyTorch's rule). Replace the inplace "
                "operation by an out-of-place one, or take the piece by indexing (x[0] for unbind(x)[0])")
        root = shared.root() if shared is not None else None
        positions = _positions_in(self.data, root.data) if root is not None and root is not self else None
        stamp = tick()  # before the new nodes: views whose history is older are stale
        if positions is None:  # self is no view, or its base is gone: self's own history changes
            result = _write(op, self, out_of_place(_with_history_of(self)))
            if result._ctx is not None:
                _take_history(self, result)
        else:
            if root.requires_grad and root._ctx is None:
                raise RuntimeError(
                    f"{op}: a view of a leaf Variable that requires grad is being used in an in-place "
                    "operation. Change the parameter inside `with ta.no_grad():`, or write the change out "
                    "of place (ta.where, masked_fill, ta.cat)")
            earlier_root = _with_history_of(root)
            index = np.unravel_index(positions, root.shape)
            result = _write(op, self, out_of_place(_tensor.rules_shape.GetItem.apply(earlier_root, index)))
            if result._ctx is not None:  # root = its old values with self's elements replaced
                _take_history(root, CopySlices.apply(earlier_root, result, positions))
                _take_history(self, _tensor.rules_shape.GetItem.apply(root, index))
        if shared is not None and result._ctx is not None:  # views older than stamp miss the change
            shared.rewrites += ((stamp, self.data),)
            _note_rewrite(stamp)
        return self

    # --- arithmetic ---------------------------------------------------------------------------
    def add_(self, other, *, alpha=1):
        """self += alpha * other, in place (PyTorch's add_)."""
        return self._change_in_place("add_", lambda x: x + scaled("add_", other, alpha), other)

    def sub_(self, other, *, alpha=1):
        """self -= alpha * other, in place (PyTorch's sub_)."""
        return self._change_in_place("sub_", lambda x: x - scaled("sub_", other, alpha), other)

    def mul_(self, other):
        """self *= other, in place."""
        return self._change_in_place("mul_", lambda x: x * other, other)

    def div_(self, other):
        """self /= other, in place."""
        return self._change_in_place("div_", lambda x: x / other, other)

    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    def clamp_(self, min=None, max=None):  # noqa: A002  (PyTorch's argument names)
        """self = self clamped to [min, max], in place (PyTorch's clamp_)."""
        return self._change_in_place("clamp_", lambda x: x.clamp(min, max), min, max)

    # --- new values: the old ones get no gradient ------------------------------------------------
    def fill_(self, value):
        """Every element set to `value` (a number, or a 0-d tensor whose gradient is the sum of g)."""
        if isinstance(value, _tensor.Tensor):
            if value.ndim != 0:
                raise RuntimeError(f"fill_: the value must be a number or a 0-d tensor, got a tensor of shape "
                                   f"{value.shape}; to copy values of that shape use x.copy_(value)")
            if value.dtype != self.dtype and value.dtype.kind == self.dtype.kind == "f":
                value = value.to(self.dtype)  # PyTorch fills with the value in x's dtype
        return self._change_in_place("fill_", lambda x: _replaced(x, value), value)

    def zero_(self):
        """Every element set to 0."""
        return self.fill_(0)

    def copy_(self, src):
        """src's values (broadcast to self's shape, cast to self's dtype); the gradient flows to src.
        src may also be a numpy array or a number (PyTorch wants a Tensor; the values are the same)."""
        if not isinstance(src, _tensor.Tensor):
            src = _tensor.wrap(np.asarray(src))
        if src.dtype != self.dtype:
            src = src.to(self.dtype)
        return self._change_in_place("copy_", lambda x: _replaced(x, src), src)

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        """Fill with draws from N(mean, std^2), from tinyattn's generator (ta.manual_seed) or `generator`."""
        draws = (generator or creation.generator()).normal(mean, std, self.shape)
        return self.copy_(_tensor.wrap(draws.astype(self.dtype)))

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        """Fill with draws from U(a, b), from tinyattn's generator (ta.manual_seed) or `generator`."""
        draws = (generator or creation.generator()).uniform(a, b, self.shape)
        return self.copy_(_tensor.wrap(draws.astype(self.dtype)))

    # --- assignment to an index ----------------------------------------------------------------
    def __setitem__(self, index, value):
        """x[index] = value, in place. Allowed where no gradient has to pass through it (under
        no_grad, or when neither x nor value requires grad); in the graph, write it out of place."""
        if is_grad_enabled() and (self.requires_grad or getattr(value, "requires_grad", False)):
            raise RuntimeError(
                "x[index] = value on a tensor in the graph: tinyattn records no gradient through an "
                "index assignment. Inside `with ta.no_grad():` it is allowed; in the graph build the "
                "new tensor out of place (ta.where(mask, value, x), x.masked_fill(mask, value), ta.cat), "
                "or change a view of it in place (x[0].copy_(value), recorded as PyTorch's)")
        value = value.data if isinstance(value, _tensor.Tensor) else value
        index = _tensor._raw_index(index)
        two_steps = _tensor.integers_first(index)  # write where self[index] reads: PyTorch's order, not numpy's
        target, index = (self.data, index) if two_steps is None else (self.data[two_steps[0]], two_steps[1])
        picked = target[index]  # a view for slices and integers: it must not repeat an element (expand)
        _refuse_unwritable("x[index] = value", picked if np.may_share_memory(picked, target) else target[...])
        try:
            target[index] = value
        except ValueError:
            raise ShapeError(f"x[index] = value: a value of shape {np.shape(value)} does not broadcast to "
                             f"the {np.shape(picked)} elements x[index] picks in x of shape {self.shape}") from None
        bump(self)


class CopySlices(Function):
    """y = base with the elements at flat (row-major) `positions` replaced by `value`: an in-place
    change through a view, as the view's base sees it (PyTorch's CopySlices, inplace.py);
    dL/dbase = g with those elements 0 (they were overwritten), dL/dvalue = g at those elements."""

    @staticmethod
    def forward(ctx, base, value, positions):
        ctx.positions = positions
        y = base.copy()  # row-major, so reshape(-1) is a view of it
        y.reshape(-1)[positions] = value
        return y

    @staticmethod
    def backward(ctx, g):
        g_base = g.copy()
        g_base.reshape(-1)[ctx.positions] = 0
        return g_base, np.asarray(g.reshape(-1)[ctx.positions]), None


def scaled(op, other, alpha):
    """alpha * other for add/sub(other, alpha=): alpha a number, as PyTorch's (a Tensor is refused there too)."""
    if not isinstance(alpha, numbers.Number):
        raise TypeError(f"{op}: alpha must be a number, got {type(alpha).__name__} (for a tensor factor write "
                        f"x {'-' if op.startswith('sub') else '+'} factor * other)")
    return other if alpha == 1 else other * alpha


def _replaced(x, value):
    """A tensor of x's shape holding `value` everywhere, on the graph: g flows to value, not to x."""
    everywhere = np.ones(x.shape, dtype=bool)
    if isinstance(value, _tensor.Tensor):
        return _tensor.rules_elementwise.Where.apply(everywhere, value, x)
    return x.masked_fill(everywhere, value)


def _refuse_unwritable(op, array):
    """PyTorch's error for writing into an expanded tensor, where one element is several places;
    a clear one for an array numpy marks read-only."""
    if not array.flags.writeable:
        raise RuntimeError(f"{op}: this tensor's memory is read-only (numpy's flag on its array); clone() it first")
    if any(stride == 0 and size > 1 for size, stride in zip(array.shape, array.strides)):
        raise RuntimeError(
            f"{op}: unsupported operation: more than one element of the written-to tensor refers to a single "
            f"memory location (shape {array.shape}, made by expand or broadcasting). Please clone() the "
            "tensor before performing the operation.")


def _write(op, tensor, result):
    """Write result's values into tensor's array and count the change; returns result."""
    if result.shape != tensor.shape:
        raise RuntimeError(f"{op}: output with shape {list(tensor.shape)} doesn't match the broadcast "
                           f"shape {list(result.shape)} (an in-place op cannot grow the tensor)")
    if not np.can_cast(result.dtype, tensor.dtype, casting="same_kind"):
        raise RuntimeError(f"{op}: result type {result.dtype} can't be cast to the desired output type "
                           f"{tensor.dtype}; convert first (x = x.float())")
    np.copyto(tensor.data, result.data, casting="same_kind")
    bump(tensor)
    return result


def _take_history(tensor, made):
    """`tensor` now stands for `made`'s values: its history becomes made's node, and its old history
    stays reachable in `_earlier` for the nodes that used it before."""
    tensor._earlier = _with_history_of(tensor, values=False)
    old_node, old_index = tensor._ctx, tensor._out_index
    tensor._ctx, tensor._out_index, tensor.requires_grad = made._ctx, made._out_index, True
    engine.follow_in_place_change(tensor, old_node, old_index)


def _with_history_of(tensor, values=True):
    """A new tensor with `tensor`'s place in the graph, holding a copy of its values (the input of a
    recorded change: the graph holds it and frees it) or, with values=False, none (an `_earlier`
    link: a broadcast zero of its shape, so a long chain of changes costs no copies)."""
    data = tensor.data.copy() if values else np.broadcast_to(np.zeros((), tensor.dtype), tensor.shape)
    earlier = _tensor.wrap(data)
    earlier.requires_grad, earlier._ctx, earlier._out_index = tensor.requires_grad, tensor._ctx, tensor._out_index
    if not values:  # the chain of earlier histories is kept only while a graph that may reach them is alive
        earlier._earlier = tensor._earlier if tensor._ctx is not None and not tensor._ctx.freed else None
    return earlier


def _positions_in(view, base):
    """Where each element of `view` lies in `base` (arrays sharing memory): base's flat row-major
    indices, in view's shape; None if some element lies outside base."""
    view_at = _addresses(view)
    if base.flags.c_contiguous:  # the usual base, an op's fresh output: an address is a row-major index
        positions, apart = np.divmod(view_at - base.__array_interface__["data"][0], base.itemsize)
        inside = positions.size == 0 or positions.min() >= 0 and positions.max() < base.size
        return positions if inside and not apart.any() else None
    base_at = _addresses(base).reshape(-1)  # any other layout: find each address among base's
    order = np.argsort(base_at, kind="stable")
    found = np.minimum(np.searchsorted(base_at[order], view_at), max(base_at.size - 1, 0))
    if not base_at.size or not np.array_equal(base_at[order][found], view_at):
        return None
    return order[found]


def _addresses(array):
    """The memory address of each element of `array`, in its shape."""
    at = np.full(array.shape, array.__array_interface__["data"][0], dtype=np.intp)
    for axis, (size, stride) in enumerate(zip(array.shape, array.strides)):
        at += (np.arange(size, dtype=np.intp) * stride).reshape((size,) + (1,) * (array.ndim - axis - 1))
    return at


def refresh_views(node):
    """Before `node`'s backward: an argument that is a view whose memory a recorded change rewrote
    (through another view, or its base) after the view was taken has a history that misses the
    change. PyTorch regenerates such a view's history from its base; here node is pointed at a
    fresh view of the base as it was when node was made (the walk asks only after such changes)."""
    args = list(node.args)
    for position, arg in enumerate(args):
        shared = getattr(arg, "_versions", None)
        if shared is None or not shared.rewrites or not node.needs_input_grad[position]:
            continue  # (a view taken outside the graph, x.detach(), stays outside it)
        history = as_used_by(arg, node)._ctx
        taken = 0 if history is None else history._created
        if not any(taken < stamp < node._created and np.may_share_memory(changed, arg.data)
                   for stamp, changed in shared.rewrites):
            continue
        root = shared.root()
        positions = None if root is None else _positions_in(arg.data, root.data)
        if positions is None:
            raise RuntimeError(
                f"backward: {node.fn.__name__} used a view of shape {tuple(arg.shape)} taken before its memory "
                "was changed in place through another view, and the tensor it views is gone (or holds other "
                "memory now). Take the view again after the change (v = x[0] after x[0:2].mul_(...))")
        with enable_grad():
            fresh = _tensor.rules_shape.GetItem.apply(as_used_by(root, node), np.unravel_index(positions, root.shape))
        if fresh._ctx is not None:  # numbered just before node (and apart from its other arguments): visited next
            fresh._ctx._created = node._created - 1 / (position + 2)
            args[position] = fresh
    node.args = tuple(args)


def as_used_by(tensor, node):
    """`tensor` as it was when `node` used it: an in-place change made later in grad mode
    gave it a newer history, and keeps the one before in `_earlier` (the walk asks here)."""
    # >=: a node's own output is never its input, so a tensor it made stood for an earlier value
    while tensor._ctx is not None and tensor._ctx._created >= node._created:
        tensor = tensor._earlier
    return tensor


# --------------------------------------------------------------------------------------------------
# Version counters: how backward finds out that an array it needs was changed in place.
#
# Every in-place change of a tensor (`x += 1`, `x.mul_(2)`, an optimiser step) adds one to
# `x._version`. A view of a tensor (x[0], x.reshape(...), x.T, x.detach()) shares its memory, so
# it shares its counter too: changing either counts for both, as in PyTorch.
#
# Graph nodes and in-place changes are stamped from one clock (`tick`), so backward can tell, at
# each node, whether a tensor whose array the node saved (Mul keeps a and b, Exp keeps its output)
# changed after the node was made; the gradient would then be silently wrong, so backward raises
# PyTorch's error instead (check_saved, below). The node's arguments it holds already; a change of the node's own output
# (or of a view of it) is written onto the node by the change itself (`producer` below). Only a
# view pays on every op (share_with_view); the rest falls on the rare in-place change.
# --------------------------------------------------------------------------------------------------

last_change = 0  # the stamp of the latest in-place change anywhere (the walk skips checks before it)
last_rewrite = 0  # the stamp of the latest recorded change of memory that views share (check_saved)


def _note_rewrite(stamp):
    global last_rewrite
    last_rewrite = stamp


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


def _owner(array):
    """The array that owns `array`'s memory (numpy's chain of bases; a view of a view of a
    subclass, as ta.compile's capture makes, is two links from it)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def share_with_view(view, base):
    """Give `view` the counter of `base` when its array reads base's memory (a view, or the
    very same array, as detach() hands on)."""
    if view is not base and _owner(view.data) is _owner(base.data):
        shared = view._versions = counter(base)
        shared.shared = True
    return view


# --------------------------------------------------------------------------------------------------
# Backward's check that an array a node saved was not changed in place after the node was made:
# the gradient would be silently wrong, so it raises PyTorch's error instead. The walk (engine.py)
# asks only when some in-place change happened since the node was made (last_change).
# It also points a node at a fresh history for a view whose base changed since (inplace.py).
# --------------------------------------------------------------------------------------------------

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
