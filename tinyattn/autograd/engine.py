"""The backward walk: reverse-mode differentiation over the graph of Function calls.

1. Seed the roots' gradients, then visit the nodes newest first (by creation number,
   `ctx._created`): a node is made after the nodes whose outputs it uses, so when it is visited
   every user of its outputs has handed it a gradient. A heap holds the nodes reached so far;
   nothing recurses, so a 5,000-step RNN is fine.
2. At each node: call its backward with its outputs' gradients and add each input's gradient
   to the node that made that input (or to `.grad`, for a leaf tensor that asked).
3. Free each node after its visit, unless retain_graph=True, so memory goes back at once.
Each backward's answer is checked for arity, shape and dtype, so a wrong rule names itself.

Also here, where the walk calls them: the same order listed without walking (for drawing),
hooks and retain_grad (each sees a gradient once it is complete), and the switch a trace
(trace.py) records through.
"""
import heapq
import time
import itertools
import weakref

import numpy as np

from . import inplace
from .function import _freed_message, zeros_for_output


def backward(roots, root_grads, retain_graph=False):
    """Add d(sum_i <root_grads[i], roots[i]>)/d(leaf) into `.grad` of every leaf that wants one."""
    pending = {}   # node -> list with one gradient (or None) per output, until the node is visited
    heap = []      # (-creation number, node) of the nodes reached and not yet visited: newest first
    held = {}      # id(leaf) -> (leaf, summed gradient), for leaves with hooks, until the walk ends
    tape = recording()  # None unless inside `with ta.autograd.trace()`
    for root, grad in zip(roots, root_grads):
        grad = np.asarray(getattr(grad, "data", grad), dtype=root.data.dtype)
        if grad.shape != root.data.shape:
            raise ValueError(f"backward: gradient of shape {grad.shape} for an output of shape {root.data.shape}")
        node = root._ctx
        if node is None:
            if root.requires_grad:
                _accumulate_leaf(root, grad, held)
            continue
        slots = _slots(node, pending, heap)
        index = root._out_index
        slots[index] = grad if slots[index] is None else slots[index] + grad

    while heap:
        node = heapq.heappop(heap)[1]
        out_grads = pending.pop(node)
        missing = [index for index, grad in enumerate(out_grads) if grad is None]  # outputs nobody used
        if len(missing) == len(out_grads):  # every path from the roots to here carried no gradient
            if tape is not None:
                tape.record(node, None, None, 0.0)
            for tensor in node.inputs:  # its inputs' nodes are still visited (and freed)
                parent = inplace.as_used_by(tensor, node)._ctx
                if parent is not None:
                    _slots(parent, pending, heap)
            if not retain_graph:
                node.release()
            continue
        for index in missing:  # one of several outputs was used: zeros stand in for the others
            out_grads[index] = zeros_for_output(*node.output_meta[index])
        if node.hooks is not None:
            run_output_hooks(node, out_grads)
        if retain_graph:
            node.last_grads = out_grads  # for ta.viz.draw_graph: freed with the graph
        if tape is not None:
            started = time.perf_counter()
        if inplace.last_change > node._created or 0 < inplace.last_rewrite < node._created:  # changed in place
            inplace.check_saved(node)  # raise if a saved array changed, rather than give a wrong gradient (and renew views)
        fn = node.fn
        in_grads = fn.backward(node, *out_grads)
        in_grads = tuple(in_grads) if isinstance(in_grads, (tuple, list)) else (in_grads,)
        if len(in_grads) != len(node.needs_input_grad):
            raise RuntimeError(
                f"{fn.__name__}.backward returned {len(in_grads)} gradients, but forward took "
                f"{len(node.needs_input_grad)} arguments: return one per argument (None for non-tensors)"
            )
        if tape is not None:
            tape.record(node, out_grads, in_grads, time.perf_counter() - started)
        for position, (tensor, grad, needed) in enumerate(zip(node.args, in_grads, node.needs_input_grad)):
            if not needed:
                continue
            parent = tensor._ctx
            if parent is not None and parent._created >= node._created:
                tensor = inplace.as_used_by(tensor, node)  # changed in place since node used it (x.add_(x): by node)
                parent = tensor._ctx
            if grad is None:
                if parent is not None:
                    _slots(parent, pending, heap)
                continue
            data = tensor.data
            if grad.shape != data.shape or grad.dtype != data.dtype:
                raise RuntimeError(
                    f"{fn.__name__}.backward returned a {grad.dtype} gradient of shape {grad.shape} "
                    f"for argument {position}, a {data.dtype} tensor of shape {data.shape}"
                )
            if parent is None:
                _accumulate_leaf(tensor, grad, held)
                continue
            slots = _slots(parent, pending, heap)
            index = tensor._out_index
            # A new array each time: a backward may hand back an array it was given, or one it
            # saved, so adding into one in place could change it elsewhere. (asarray: numpy adds
            # two 0-d arrays into a scalar, which is not an array a hook may look at.)
            slots[index] = grad if slots[index] is None else np.asarray(slots[index] + grad)
        if not retain_graph:
            node.release()
    for leaf, grad in held.values():
        _add_to_grad(leaf, run_hooks(leaf._hooks, grad, "a leaf"))


def _slots(node, pending, heap):
    """The gradient slots of `node`, made (and the node queued for a visit) when first reached."""
    slots = pending.get(node)
    if slots is None:
        if node.freed:
            raise RuntimeError(_freed_message(node))
        slots = pending[node] = [None] * node.n_outputs
        heapq.heappush(heap, (-node._created, node))
    return slots


def _accumulate_leaf(tensor, grad, held):
    if tensor._hooks:  # its hooks see the sum over all its uses, once: hold it till the end
        _, total = held.get(id(tensor), (tensor, None))
        held[id(tensor)] = tensor, grad if total is None else np.asarray(total + grad)
    else:
        _add_to_grad(tensor, grad)


def _add_to_grad(tensor, grad):
    if tensor.grad is None:
        # A copy the tensor owns, in its dtype, so optimisers may update it in place.
        tensor.grad = np.array(grad, dtype=tensor.data.dtype, copy=True)
    else:
        tensor.grad += grad


# --------------------------------------------------------------------------------------------------
# The order the backward walk visits a graph's nodes in, listed before any walk (ta.viz.draw_graph
# numbers the nodes this way).
# --------------------------------------------------------------------------------------------------

def reverse_topological_order(starts, freed_error=None):
    """Nodes reachable from `starts`, each listed after every node that consumes its outputs
    (newest first, the order the walk visits them in). A node freed by an earlier backward
    raises freed_error(node) (a RuntimeError about going through it a second time by default)."""
    found = {}
    todo = list(starts)
    while todo:
        node = todo.pop()
        if node in found:
            continue
        if node.freed:
            raise freed_error(node) if freed_error else RuntimeError(_freed_message(node))
        found[node] = None
        for tensor in node.inputs:
            parent = inplace.as_used_by(tensor, node)._ctx
            if parent is not None:
                todo.append(parent)
    return sorted(found, key=lambda node: node._created, reverse=True)


# --------------------------------------------------------------------------------------------------
# Tensor hooks and retain_grad: functions the backward walk calls with a tensor's gradient.
#
# `t.register_hook(fn)` asks the walk to call fn(grad) once per backward, when t's gradient is
# complete (summed over every op that used t), before that gradient flows on: into the node
# that made t, or into t.grad for a leaf. fn may return a replacement of the same shape and
# dtype. `t.retain_grad()` is a hook that keeps the gradient of an intermediate tensor in t.grad;
# it runs after the other hooks, so t.grad shows what flowed on (as in PyTorch).
#
# Where they live: a leaf keeps its hooks itself (`tensor._hooks`); a tensor made by an op keeps
# them on its graph node, by output index (`ctx.hooks`), since the walk sees nodes, not tensors.
# Either way a hook-less graph costs the walk one `is None` test per node or leaf.
# --------------------------------------------------------------------------------------------------

_RETAIN = "retain_grad"  # the key of the retain_grad hook: always run last
_next_key = itertools.count()


class RemovableHandle:
    """What register_hook returns: `handle.remove()` takes the hook off again."""

    def __init__(self, hooks, key):
        self._hooks, self._key = hooks, key

    def remove(self):
        """Take the hook off (doing so twice is harmless)."""
        self._hooks.pop(self._key, None)


def _hooks_dict(tensor):
    """The {key: fn} dict of `tensor`'s hooks, made empty on first use."""
    ctx = tensor._ctx
    if ctx is None:
        if tensor._hooks is None:
            tensor._hooks = {}
        return tensor._hooks
    if ctx.hooks is None:
        ctx.hooks = {}
    return ctx.hooks.setdefault(tensor._out_index, {})


class HookMethods:
    """x.register_hook(fn), x.retain_grad() and x.grad_fn: Tensor inherits them (tensor.py)."""
    __slots__ = ()  # a base of Tensor, whose instances keep their fixed slots

    @property
    def grad_fn(self):
        """Name of the Function that made this tensor, or None for a leaf."""
        ctx = self._ctx
        return None if ctx is None else ctx.fn.__name__

    def register_hook(self, fn):
        """Call fn(grad array) in every backward once this tensor's gradient is complete.

        fn may return a replacement (same shape and dtype) that flows on instead; returns a
        handle whose .remove() takes the hook off. On a leaf it runs before .grad is updated.
        """
        if not callable(fn):
            raise TypeError(f"register_hook: expected a function of the gradient array, got {type(fn).__name__}")
        _check_requires_grad(self, "register_hook", "a hook")
        hooks = _hooks_dict(self)
        key = next(_next_key)
        hooks[key] = fn
        return RemovableHandle(hooks, key)

    def retain_grad(self):
        """Keep this intermediate tensor's gradient in .grad (summed across backwards)."""
        _check_requires_grad(self, "retain_grad", "a gradient")
        if self._ctx is None:
            return  # a leaf keeps its gradient in .grad anyway
        if self._out_index in self._ctx.fn.used_inside:
            raise RuntimeError(f"retain_grad: output {self._out_index} of {self._ctx.fn.__name__}, a fused node that uses it "
                               "inside, would show only the gradient from outside (zeros if nothing else uses it); build "
                               "the graph under `with ta.fused(False):`, where retain_grad shows the whole gradient.")
        # A weak reference: the graph node must not keep the tensor alive (nor make a cycle).
        _hooks_dict(self)[_RETAIN] = _Retain(weakref.ref(self))


def follow_in_place_change(tensor, old_node, old_index):
    """After an in-place change gives `tensor` a new node, its retain_grad follows it there, as
    PyTorch's does (.grad then shows the newest value's gradient); other hooks stay with the old."""
    old = old_node.hooks.get(old_index) if old_node is not None and old_node.hooks else None
    if old and _RETAIN in old:
        _hooks_dict(tensor)[_RETAIN] = old.pop(_RETAIN)


class _Retain:
    """Adds the gradient into tensor.grad, as the walk does for a leaf (across backwards too)."""

    def __init__(self, tensor_ref):
        self.tensor_ref = tensor_ref

    def __call__(self, grad):

        tensor = self.tensor_ref()
        if tensor is not None:
            _add_to_grad(tensor, grad)


def run_hooks(hooks, grad, what):
    """Call each hook on `grad` in the order registered, retain_grad last; the final gradient.

    Hooks see a read-only view: the array may be shared with other branches of the graph, so
    a hook returns a new array instead of changing this one in place. `what` names the tensor
    ("output 0 of MatMul", "a leaf") in the error for a replacement of the wrong shape or dtype.
    """
    for key, fn in list(hooks.items()):
        if key == _RETAIN:
            continue
        new = fn(_read_only(grad))
        if new is None:
            continue
        if isinstance(new, np.generic):  # a 0-d array times a number gives a numpy scalar
            new = np.asarray(new)
        if not isinstance(new, np.ndarray) or new.shape != grad.shape or new.dtype != grad.dtype:
            got = f"a {new.dtype} array of shape {new.shape}" if isinstance(new, np.ndarray) else f"a {type(new).__name__}"
            raise RuntimeError(
                f"hook {getattr(fn, '__qualname__', fn)} on {what}, a {grad.dtype} tensor of shape {grad.shape}, "
                f"returned {got}: a hook returns None or an array of that shape and dtype"
            )
        grad = new
    retain = hooks.get(_RETAIN)
    if retain is not None:
        retain(grad)
    return grad


def _read_only(array):
    view = array.view()
    view.flags.writeable = False
    return view


def _check_requires_grad(tensor, op, thing):
    if not tensor.requires_grad:
        raise RuntimeError(
            f"{op}: this tensor of shape {tensor.data.shape} does not require grad, so no gradient "
            f"reaches it and {thing} would never be seen (make it with requires_grad=True)"
        )


def run_output_hooks(node, out_grads):
    """Run the hooks of each output of `node` on its gradient, replacing it in out_grads."""
    for index, hooks in node.hooks.items():
        if hooks:
            what = f"the output of {node.fn.__name__}" if len(out_grads) == 1 else f"output {index} of {node.fn.__name__}"
            out_grads[index] = run_hooks(hooks, out_grads[index], what)


# --------------------------------------------------------------------------------------------------
# The trace's on/off switch: which trace (trace.py) the backward walk records into, if any.
#
# The walk asks `recording()` once per call; outside a `with ta.autograd.trace()` block it is None
# and the walk records nothing. Kept apart from trace.py so that only those who watch the walk
# read how the watching is done.
# --------------------------------------------------------------------------------------------------

_recording = None  # the trace being filled; set and restored by tracing.trace's `with` block


def recording():
    """The trace being recorded into, or None (the usual case)."""
    return _recording


def start_recording(tape):
    """Record into `tape` from now on; returns the trace that was recording before (or None)."""
    global _recording
    outer, _recording = _recording, tape
    return outer


def stop_recording(outer):
    """Go back to recording into `outer`, the trace start() returned."""
    global _recording
    _recording = outer
