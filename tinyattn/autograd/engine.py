"""The backward walk: reverse-mode differentiation over the graph of Function calls.

1. Sort the nodes that lead to the roots so that every node comes after all the nodes that
   use its outputs (an iterative depth-first search: a 5,000-step RNN needs no recursion).
2. Seed the roots' gradients, then visit the nodes in that order: call the node's backward
   with the gradients of its outputs, and add each input's gradient to the node that made
   that input (or to `.grad`, for a leaf tensor that asked for one).
3. Free each node after its visit, unless retain_graph=True, so memory goes back at once.
"""
import numpy as np

from .function import _freed_message, zeros_for_output


def backward(roots, root_grads, retain_graph=False):
    """Add d(sum_i <root_grads[i], roots[i]>)/d(leaf) into `.grad` of every leaf that wants one."""
    pending = {}  # node -> list with one accumulated gradient (or None) per output
    starts = []
    for root, grad in zip(roots, root_grads):
        grad = np.asarray(getattr(grad, "data", grad), dtype=root.data.dtype)
        if grad.shape != root.data.shape:
            raise ValueError(f"backward: gradient of shape {grad.shape} for an output of shape {root.data.shape}")
        if root._ctx is None:
            if root.requires_grad:
                _accumulate_leaf(root, grad, "backward")
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
            if not retain_graph:
                node.release()
            continue
        for index, grad in enumerate(out_grads):
            if grad is None:
                out_grads[index] = zeros_for_output(*node.output_meta[index])
        in_grads = _checked(node, node.fn.backward(node, *out_grads))
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
                _accumulate_leaf(tensor, grad, node.fn.__name__)
            else:
                slots = pending.get(parent)
                if slots is None:
                    slots = pending[parent] = [None] * len(parent.output_meta)
                index = tensor._out_index
                # Out of place: a backward may hand back the very array it was given.
                slots[index] = grad if slots[index] is None else slots[index] + grad
        if not retain_graph:
            node.release()


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


def _accumulate_leaf(tensor, grad, op_name):
    data = tensor.data
    if grad.shape != data.shape:
        raise RuntimeError(
            f"{op_name}: gradient of shape {grad.shape} for a tensor of shape {data.shape}"
        )
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
