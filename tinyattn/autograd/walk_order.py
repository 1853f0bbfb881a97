"""The order the backward walk visits a graph's nodes in, listed before any walk (ta.viz.draw_graph
numbers the nodes this way)."""
from .inplace import as_used_by
from .function import _freed_message


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
            parent = as_used_by(tensor, node)._ctx
            if parent is not None:
                todo.append(parent)
    return sorted(found, key=lambda node: node._created, reverse=True)
