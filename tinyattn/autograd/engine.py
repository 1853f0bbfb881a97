"""The backward walk: reverse-mode differentiation over the graph of Function calls.

1. Seed the roots' gradients, then visit the nodes newest first (by creation number,
   `ctx._created`): a node is made after the nodes whose outputs it uses, so when it is visited
   every user of its outputs has handed it a gradient. A heap holds the nodes reached so far;
   nothing recurses, so a 5,000-step RNN is fine.
2. At each node: call its backward with its outputs' gradients and add each input's gradient
   to the node that made that input (or to `.grad`, for a leaf tensor that asked).
3. Free each node after its visit, unless retain_graph=True, so memory goes back at once.
Hooks (hooks.py) see each gradient once complete; a trace (tracing.py) records every visit.
Each backward's answer is checked for arity, shape and dtype, so a wrong rule names itself.
"""
import heapq

import numpy as np

from . import tracing as _trace
from .function import _freed_message, zeros_for_output
from .hooks import run_hooks, run_output_hooks
from . import versions as _versions
from .inplace import as_used_by
from .saved_check import check_saved


def backward(roots, root_grads, retain_graph=False):
    """Add d(sum_i <root_grads[i], roots[i]>)/d(leaf) into `.grad` of every leaf that wants one."""
    pending = {}   # node -> list with one gradient (or None) per output, until the node is visited
    heap = []      # (-creation number, node) of the nodes reached and not yet visited: newest first
    held = {}      # id(leaf) -> (leaf, summed gradient), for leaves with hooks, until the walk ends
    tape = _trace.recording()  # None unless inside `with ta.autograd.trace()`
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
        if len(out_grads) == 1:
            reached = out_grads[0] is not None
        else:
            reached = any(grad is not None for grad in out_grads)
            if reached:
                for index, grad in enumerate(out_grads):
                    if grad is None:
                        out_grads[index] = zeros_for_output(*node.output_meta[index])
        if not reached:  # every path from the roots to here carried no gradient
            if tape is not None:
                tape.record(node, None, None, 0.0)
            for tensor in node.inputs:  # its inputs' nodes are still visited (and freed)
                parent = as_used_by(tensor, node)._ctx
                if parent is not None:
                    _slots(parent, pending, heap)
            if not retain_graph:
                node.release()
            continue
        if node.hooks is not None:
            run_output_hooks(node, out_grads)
        if retain_graph:
            node.last_grads = out_grads  # for ta.viz.draw_graph: freed with the graph
        if tape is not None:
            started = _trace.clock()
        if _versions.last_change > node._created or 0 < _versions.last_rewrite < node._created:  # changed in place
            check_saved(node)  # raise if a saved array changed, rather than give a wrong gradient (and renew views)
        fn = node.fn
        in_grads = fn.backward(node, out_grads[0]) if len(out_grads) == 1 else fn.backward(node, *out_grads)
        if in_grads.__class__ is not tuple:
            in_grads = tuple(in_grads) if isinstance(in_grads, list) else (in_grads,)
        if len(in_grads) != len(node.needs_input_grad):
            raise RuntimeError(
                f"{fn.__name__}.backward returned {len(in_grads)} gradients, but forward took "
                f"{len(node.needs_input_grad)} arguments: return one per argument (None for non-tensors)"
            )
        if tape is not None:
            tape.record(node, out_grads, in_grads, _trace.clock() - started)
        for position, (tensor, grad, needed) in enumerate(zip(node.args, in_grads, node.needs_input_grad)):
            if not needed:
                continue
            parent = tensor._ctx
            if parent is not None and parent._created >= node._created:
                tensor = as_used_by(tensor, node)  # changed in place since node used it (x.add_(x): by node)
                parent = tensor._ctx
            if grad is None:
                if parent is not None:
                    _slots(parent, pending, heap)
                continue
            data = tensor.data
            if grad.shape != data.shape or (grad.dtype is not data.dtype and grad.dtype != data.dtype):
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
