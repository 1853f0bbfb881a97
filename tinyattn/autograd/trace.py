"""Watch the backward walk: every node it visits, in order, with the gradients that pass.

    with ta.autograd.trace() as tape:
        loss.backward()
    print(tape)                      # a table, one row per node, in the order visited
    for record in tape:              # NodeRecord(name, output_shapes, grad_output_norms, ...)
        ...

A node's backward receives the gradient of each of its outputs (dL/d output) and hands on one
gradient per input (dL/d input); the tape keeps the norm of each, and the seconds the node's
backward took. Outside a `with trace()` block the walk checks one local variable per node and
records nothing (engine.py's switch).
"""
import time
from dataclasses import dataclass

import numpy as np

from . import engine


clock = time.perf_counter


@dataclass(frozen=True)
class NodeRecord:
    """One visited node. A norm is None where no gradient passed (an output nothing used, or an
    input the backward returned None for)."""

    name: str                 # the Function, e.g. "MatMul"
    output_shapes: tuple      # the shape of each output (None: one output, and no gradient reached it)
    grad_output_norms: tuple  # |dL/d output| for each output: what the node received
    grad_input_norms: tuple   # |dL/d input| for each input that needs one: what it handed on
    seconds: float            # time spent in the Function's backward
    node_id: int              # id() of the graph node: tells two calls of one Function apart


class trace:
    """`with ta.autograd.trace() as tape:` records every backward run inside the block."""

    def __init__(self):
        self.records = []
        self._outer = None

    def __enter__(self):
        self._outer = engine.start_recording(self)
        return self

    def __exit__(self, *exc):
        engine.stop_recording(self._outer)
        return False

    def record(self, node, out_grads, in_grads, seconds):
        """Called by the walk after a node's backward (in_grads None: no gradient reached it)."""
        self.records.append(NodeRecord(
            name=node.fn.__name__,
            output_shapes=_output_shapes(node, out_grads),
            grad_output_norms=tuple(grad_norm(g) for g in out_grads) if out_grads else (None,) * node.n_outputs,
            grad_input_norms=tuple(grad_norm(grad) if in_grads else None
                                   for grad, need in zip(in_grads or node.needs_input_grad, node.needs_input_grad)
                                   if need),
            seconds=seconds,
            node_id=id(node),
        ))

    def __iter__(self):
        return iter(self.records)

    def __len__(self):
        return len(self.records)

    def __getitem__(self, index):
        return self.records[index]

    def __str__(self):
        header = ("step", "Function", "output shape", "|grad received|", "|grads handed on|", "µs")
        rows = [header]
        for step, r in enumerate(self.records, 1):
            rows.append((str(step), r.name, ", ".join(str(s) for s in r.output_shapes),
                         ", ".join(_number(n) for n in r.grad_output_norms),
                         ", ".join(_number(n) for n in r.grad_input_norms),
                         f"{r.seconds * 1e6:.1f}"))
        widths = [max(len(row[c]) for row in rows) for c in range(len(header))]
        numeric = {0, 5}  # right-aligned columns
        lines = ["  ".join(cell.rjust(w) if c in numeric else cell.ljust(w)
                           for c, (cell, w) in enumerate(zip(row, widths))).rstrip() for row in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        total = sum(r.seconds for r in self.records)
        lines.append(f"{len(self.records)} nodes, {total * 1e3:.3f} ms in backward functions")
        return "\n".join(lines)

    __repr__ = __str__


def _output_shapes(node, out_grads):
    """Each output's shape: a node keeps them only if it has several outputs (function.py's
    Context), but a gradient that reached an output has its shape. None where neither is known."""
    if node.output_meta is not None:
        return tuple(shape for shape, _ in node.output_meta)
    return (out_grads[0].shape,) if out_grads else (None,)


def grad_norm(grad):
    """The 2-norm of a gradient array (None stays None), summed in float64."""
    return None if grad is None else float(np.sqrt(np.sum(np.square(grad, dtype=np.float64))))


def _number(value):
    return "-" if value is None else f"{value:.4g}"
