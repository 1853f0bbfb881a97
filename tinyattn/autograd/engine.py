"""The backward walk: reverse-mode differentiation over the graph of Function calls.

1. Sort the nodes that lead to the roots so that every node comes after all the nodes that
   use its outputs (an iterative depth-first search: a 5,000-step RNN needs no recursion).
2. Seed the roots' gradients, then visit the nodes in that order: call the node's backward
   with the gradients of its outputs, and add each input's gradient to the node that made
   that input (or to `.grad`, for a leaf tensor that asked for one).
3. Free each node after its visit, unless retain_graph=True, so memory goes back at once.

Hooks (hooks.py) see each gradient once it is complete: a node's output gradients just before
its backward runs, a leaf's after the whole walk; a trace (trace.py) records every visit.
"""
import numpy as np

from . import trace as _trace
from .function import _freed_message, zeros_for_output
from .hooks import run_hooks, run_output_hooks


def backward(roots, root_grads, retain_graph=False):
    """Add d(sum_i <root_grads[i], roots[i]>)/d(leaf) into `.grad` of every leaf that wants one."""
    pending = {}  # node -> list with one accumulated gradient (or None) per output
    held = {}     # id(leaf) -> (leaf, summed gradient), for leaves with hooks, until the walk ends
    tape = _trace.recording()  # None unless inside `with ta.autograd.trace()`
    starts = []
    for root, grad in zip(roots, root_grads):
        grad = np.asarray(getattr(grad, "data", grad), dtype=root.data.dtype)
        if grad.shape != root.data.shape:
            raise ValueError(f"backward: gradient of shape {grad.shape} for an output of shape {root.data.shape}")
        if root._ctx is None:
            if root.requires_grad:
                _accumulate_leaf(root, grad, "backward", held)
            continue
        if root._ctx.freed:
            raise RuntimeError(_freed_message(root._ctx))
        slots = pending.setdefault(root._ctx, [None] * len(root._ctx.output_meta))
        index = root._out_index
        slots[index] = grad if slots[index] is None else slots[index] + grad
        starts.append(root._ctx)

    for node in _reverse_topological_order(starts):
        out_grads = pending.pop(node, None)
        if out_grads is None:  # every path from the roots to here carried no gradient
            if tape is not None:
                tape.record(node, None, None, 0.0)
            if not retain_graph:
                node.release()
            continue
        for index, grad in enumerate(out_grads):
            if grad is None:
                out_grads[index] = zeros_for_output(*node.output_meta[index])
        if node.hooks is not None:
            run_output_hooks(node, out_grads)
        if retain_graph:
            node.last_grads = out_grads  # for ta.viz.draw_graph: freed with the graph
        if tape is not None:
            started = _trace.clock()
        in_grads = _checked(node, node.fn.backward(node, *out_grads))
        if tape is not None:
            tape.record(node, out_grads, in_grads, _trace.clock() - started)
        for position, tensor in node.inputs:
            grad = in_grads[position]
            if grad is None:
                continue
            if grad.shape != tensor.data.shape or grad.dtype != tensor.data.dtype:
                raise RuntimeError(
                    f"{node.fn.__name__}.backward returned a {grad.dtype} gradient of shape {grad.shape} "
                    f"for argument {position}, a {tensor.data.dtype} tensor of shape {tensor.data.shape}"
                )
            parent = tensor._ctx
            if parent is None:
                _accumulate_leaf(tensor, grad, node.fn.__name__, held)
            else:
                slots = pending.get(parent)
                if slots is None:
                    slots = pending[parent] = [None] * len(parent.output_meta)
                index = tensor._out_index
                # Out of place: a backward may hand back the very array it was given.
                slots[index] = grad if slots[index] is None else slots[index] + grad
        if not retain_graph:
            node.release()
    for leaf, grad in held.values():
        _add_to_grad(leaf, run_hooks(leaf._hooks, grad, "a leaf"))


def _checked(node, in_grads):
    """backward's answer as a tuple with one entry per argument of forward, or a clear error."""
    if isinstance(in_grads, list):
        in_grads = tuple(in_grads)
    elif not isinstance(in_grads, tuple):
        in_grads = (in_grads,)
    if len(in_grads) != len(node.needs_input_grad):
        raise RuntimeError(
            f"{node.fn.__name__}.backward returned {len(in_grads)} gradients, but forward took "
            f"{len(node.needs_input_grad)} arguments: return one per argument (None for non-tensors)"
        )
    return in_grads


def _accumulate_leaf(tensor, grad, op_name, held):
    data = tensor.data
    if grad.shape != data.shape:
        raise RuntimeError(
            f"{op_name}: gradient of shape {grad.shape} for a tensor of shape {data.shape}"
        )
    if tensor._hooks:  # its hooks see the sum over all its uses, once: hold it till the end
        _, total = held.get(id(tensor), (tensor, None))
        held[id(tensor)] = tensor, grad if total is None else total + grad
    else:
        _add_to_grad(tensor, grad)


def _add_to_grad(tensor, grad):
    data = tensor.data
    if tensor.grad is None:
        # A copy the tensor owns, in its dtype, so optimisers may update it in place.
        tensor.grad = np.array(grad, dtype=data.dtype, copy=True)
    else:
        tensor.grad += grad


def _reverse_topological_order(starts):
    """Nodes reachable from `starts`, each listed after every node that consumes its outputs."""
    order = []
    visited = set()
    stack = [(node, False) for node in starts]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            order.append(node)
            continue
        if node in visited:
            continue
        if node.freed:
            raise RuntimeError(_freed_message(node))
        visited.add(node)
        stack.append((node, True))
        for _, tensor in node.inputs:
            parent = tensor._ctx
            if parent is not None and parent not in visited:
                stack.append((parent, False))
    order.reverse()
    return order
