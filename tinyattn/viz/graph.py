"""The graph behind a tensor as a picture: one box per Function call and per leaf.

Arrows go from inputs to outputs, so the picture reads top (parameters and inputs) to bottom
(the tensor drawn). Each box sits on the layer of its longest path to that tensor, so every
arrow points down. After `backward(retain_graph=True)` each box also shows the norm of its
gradient: a Function's box reads the gradients the walk kept on the graph (`ctx.last_grads`,
what the last such backward handed that node), a leaf's box reads its `.grad`. Keeping them is
a reference per node (no copy, no time on the walk) that goes with the graph when it is freed;
getting them from a trace instead would need a second backward, which adds into every `.grad`.

`graph_lists` builds the boxes and arrows as plain data (no matplotlib); `draw_graph` lays them
out and draws them. matplotlib is imported only when a picture is drawn.
"""
from dataclasses import dataclass

import numpy as np

from ..autograd.engine import reverse_topological_order
from ..autograd.tensor import Tensor
from ..autograd.trace import grad_norm
from .heatmaps import _finish, _pyplot

MAX_NODES = 80  # beyond this the boxes get too small to read


@dataclass(frozen=True)
class GraphNode:
    key: int            # id() of the graph node (a Function call) or of the leaf tensor
    kind: str           # "function", "parameter" (a leaf named in params) or "input" (another leaf)
    name: str           # the Function's name, the parameter's name, or "input"
    shapes: tuple       # the shape of each output (one for a leaf)
    dtype: str
    grad_norms: tuple   # the norm of each output's gradient, None where none is known
    depth: int          # longest path to the drawn tensor: 0 for its own node


@dataclass(frozen=True)
class GraphEdge:
    source: int         # key of the node that made the input (or of the leaf)
    target: int         # key of the Function call that used it
    position: int       # which argument of that call


def graph_lists(root, params=None):
    """(nodes, edges) of the graph that made `root`: every Function call and every leaf that
    needs a gradient, and one edge per (input, call) argument. Leaves are named from `params`
    ({name: tensor}, e.g. dict(model.named_parameters())); the others are called "input"."""
    if not isinstance(root, Tensor):
        raise TypeError(f"draw_graph: expected the Tensor whose graph to draw, got {type(root).__name__}")
    if root._ctx is None:
        raise ValueError(f"draw_graph: this tensor of shape {root.shape} was not made by an op (it is a leaf), "
                         "so there is no graph behind it; draw the output of a computation")
    # every node after all its consumers; a node an earlier backward freed is named in a ValueError
    order = reverse_topological_order([root._ctx], freed_error=_freed_error)
    names = {id(tensor): name for name, tensor in (params or {}).items()}
    depth = {id(root._ctx): 0}
    leaves = {}  # id -> tensor, in the order first met
    edges = []
    # A node with one output does not keep its shape (function.py's Context): the tensors that
    # carry an output to its users (and the root itself) do.
    outputs = {id(root._ctx): root.data}
    for node in order:
        positions = [position for position, need in enumerate(node.needs_input_grad) if need]
        for position, tensor in zip(positions, node.inputs):
            source = tensor._ctx if tensor._ctx is not None else tensor
            if tensor._ctx is None:
                leaves.setdefault(id(tensor), tensor)
            else:
                outputs.setdefault(id(source), tensor.data)
            depth[id(source)] = max(depth.get(id(source), 0), depth[id(node)] + 1)
            edges.append(GraphEdge(id(source), id(node), position))
    nodes = [GraphNode(id(node), "function", node.fn.__name__, *_output_shapes_and_dtype(node, outputs),
                       _norms(node.last_grads, node.n_outputs), depth[id(node)])
             for node in order]
    for key, tensor in leaves.items():
        kind = "parameter" if key in names else "input"
        nodes.append(GraphNode(key, kind, names.get(key, "input"), (tensor.shape,), str(tensor.dtype),
                               (grad_norm(tensor.grad),), depth[key]))
    return nodes, edges


def _output_shapes_and_dtype(node, outputs):
    """(shape of each output, dtype as text) of a Function call; outputs: {id(node): an output array}."""
    if node.output_meta is not None:
        return tuple(shape for shape, _ in node.output_meta), str(node.output_meta[0][1])
    array = outputs[id(node)]
    return (array.shape,), str(array.dtype)


def draw_graph(root, path=None, params=None):
    """Draw the graph that made `root` (at most 80 boxes); save a PNG to `path` if given.

    params names the leaves (e.g. dict(model.named_parameters())). Returns the Figure.
    """
    nodes, edges = graph_lists(root, params)
    if len(nodes) > MAX_NODES:
        raise ValueError(
            f"draw_graph: the graph has {len(nodes)} boxes ({sum(n.kind == 'function' for n in nodes)} Function "
            f"calls and their leaves); a drawing stays readable up to {MAX_NODES}. Draw a smaller model, one "
            "layer on a short input (batch 1, a few steps), or list the walk with ta.autograd.trace()"
        )
    place, bends = _layout(nodes, edges)
    plt = _pyplot()
    from matplotlib.patches import PathPatch

    layers = max(n.depth for n in nodes) + 1
    xs = [x for x, _ in place.values()] + [x for points in bends for x, _ in points]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.0 * (max(xs) - min(xs)) + 2.4), max(3.0, 1.05 * layers + 0.8)))
    boxes = {}
    for node in nodes:
        x, y = place[node.key]
        boxes[node.key] = ax.text(x, y, _label(node), ha="center", va="center", fontsize=7.5, zorder=3, gid="node",
                                  fontweight="bold" if node.depth == 0 else "normal",
                                  bbox=dict(boxstyle="round,pad=0.35", fc=_COLOURS[node.kind], ec="0.35"))
    arrow = dict(arrowstyle="-|>", color="0.45", lw=0.8, shrinkA=4, shrinkB=4)
    for edge, points in zip(edges, bends):
        if points:  # a long arrow: a line through its bend points (from behind the box), then the head
            ax.add_patch(PathPatch(_smooth_path([place[edge.source], *points]), fc="none", ec="0.45", lw=0.8,
                                   zorder=1))
            ax.annotate("", xy=(0.5, 1.0), xycoords=boxes[edge.target], xytext=points[-1], textcoords="data",
                        zorder=2, gid="edge", arrowprops=dict(arrow, shrinkA=0))
        else:
            ax.annotate("", xy=(0.5, 1.0), xycoords=boxes[edge.target], xytext=(0.5, 0.0),
                        textcoords=boxes[edge.source], zorder=2, gid="edge",
                        arrowprops=dict(arrow, connectionstyle=f"arc3,rad={0.12 * _repeat(edge, edges)}"))
    for artist in ax.texts + ax.patches:  # arrows and boxes placed by hand: nothing for tight_layout to do
        artist.set_in_layout(False)
    ax.set_xlim(min(xs) - 1.2, max(xs) + 1.2)
    ax.set_ylim(-0.7, layers - 0.3)
    ax.axis("off")
    others = ", other inputs (green)" if any(n.kind == "input" for n in nodes) else ""
    ax.set_title(f"{sum(n.kind == 'function' for n in nodes)} Function calls (blue), parameters (orange){others};\n"
                 "arrows go from input to output (inputs that need no gradient are not drawn)", fontsize=9)
    fig.tight_layout()
    return _finish(plt, fig, path)


_COLOURS = {"function": "#dbe9f6", "parameter": "#fde2c4", "input": "#dcefd9"}


def _freed_error(node):
    return ValueError(
        f"draw_graph: the graph was freed by backward() (at {node.fn.__name__}); draw it before backward(), "
        "or call backward(retain_graph=True) to keep it (and to see the gradients' norms)"
    )


def _norms(grads, count):
    return (None,) * count if grads is None else tuple(grad_norm(g) for g in grads)


def _label(node):
    shapes = ", ".join(str(s) for s in node.shapes)
    if node.kind == "input":
        lines = [f"input {shapes}", node.dtype]
    else:
        lines = [node.name, f"{shapes} {node.dtype}"]
    known = [n for n in node.grad_norms if n is not None]
    if known:
        lines.append("|grad| " + ", ".join(f"{n:.3g}" for n in known))
    return "\n".join(lines)


def _repeat(edge, edges):
    """0 for the first arrow between two boxes, 1, -1, 2, ... for the others (x * x: two arrows)."""
    same = [e for e in edges if (e.source, e.target) == (edge.source, edge.target)]
    i = same.index(edge)
    return (i + 1) // 2 * (1 if i % 2 else -1)


def _layout(nodes, edges, sweeps=4):
    """(x, y) of each box, and the bend points of each arrow longer than one layer.

    y is the depth. An arrow that spans several layers gets a waypoint on each layer it crosses,
    which takes a slot there like a box, so arrows go around boxes instead of through them.
    Each layer is ordered by the mean x of its neighbours, sweeping down and up a few times:
    the barycentre heuristic of Sugiyama, Tagawa and Toda (1981), "Methods for visual
    understanding of hierarchical system structures", which keeps crossings few.
    """
    depth = {node.key: node.depth for node in nodes}
    layers = {}
    for node in nodes:
        layers.setdefault(node.depth, []).append(node.key)
    below, above = {}, {}  # neighbours: towards the root, towards the inputs
    chains = []            # per edge: the keys of its points, from source to target
    for i, e in enumerate(edges):
        chain = [e.source] + [("waypoint", i, d) for d in range(depth[e.source] - 1, depth[e.target], -1)] + [e.target]
        for d, key in zip(range(depth[e.source] - 1, depth[e.target], -1), chain[1:-1]):
            layers[d].append(key)
        for upper, lower in zip(chain, chain[1:]):
            below.setdefault(upper, []).append(lower)
            above.setdefault(lower, []).append(upper)
        chains.append(chain)
    x = {}
    for layer in layers.values():
        _fit(layer, [0.0] * len(layer), x)
    depths = sorted(layers)
    for sweep in range(sweeps):  # first the order within each layer ...
        pass_order, neighbours = (depths[1:], below) if sweep % 2 == 0 else (depths[-2::-1], above)
        for d in pass_order:
            layer = layers[d]
            layer.sort(key=lambda k: _mean_x(neighbours.get(k), x, x[k]))
            _fit(layer, [0.0] * len(layer), x)
    for sweep in range(2 * sweeps):  # ... then each item as near its neighbours as the gaps allow
        for d in depths if sweep % 2 == 0 else depths[::-1]:
            layer = layers[d]
            _fit(layer, [_mean_x(below.get(k, []) + above.get(k, []), x, x[k]) for k in layer], x)
    y = {key: float(d) for d, layer in layers.items() for key in layer}
    place = {node.key: (x[node.key], y[node.key]) for node in nodes}
    boxes_at = {d: [x[k] for k in layer if not isinstance(k, tuple)] for d, layer in layers.items()}
    bends = [_straightened([(x[k], y[k]) for k in chain], boxes_at) for chain in chains]
    return place, bends


def _straightened(points, boxes_at):
    """The bend points of one arrow: all on the straight line from its start to its end if that
    line misses every box it passes, else where the layout put them."""
    (x0, y0), (x1, y1) = points[0], points[-1]
    straight = [(x0 + (x1 - x0) * (y - y0) / (y1 - y0), y) for _, y in points[1:-1]]
    if all(abs(x - box) > BOX_GAP / 2 for x, y in straight for box in boxes_at[y]):
        return straight
    return points[1:-1]


def _smooth_path(points):
    """A curve from the first point to the last that bends smoothly at the ones between: straight
    to the first midpoint, then quadratic Bezier pieces with each bend point as control point."""
    from matplotlib.path import Path

    middles = [((xa + xb) / 2, (ya + yb) / 2) for (xa, ya), (xb, yb) in zip(points, points[1:])]
    vertices, codes = [points[0], middles[0]], [Path.MOVETO, Path.LINETO]
    for control, end in zip(points[1:-1], middles[1:]):
        vertices += [control, end]
        codes += [Path.CURVE3, Path.CURVE3]
    vertices.append(points[-1])
    codes.append(Path.LINETO)
    return Path(vertices, codes)


def _mean_x(keys, x, default):
    return float(np.mean([x[k] for k in keys])) if keys else default


BOX_GAP, WAYPOINT_GAP = 2.3, 0.5  # room one box (or one arrow passing through) takes in a layer


def _fit(layer, wanted, x):
    """Put the layer's items, in order, as near the wanted x as the gaps allow (centred)."""
    gaps = [(_room(a) + _room(b)) / 2 for a, b in zip(layer, layer[1:])]
    left, right = list(wanted), list(wanted)
    for i in range(1, len(layer)):  # push right what is too close to its left neighbour
        left[i] = max(left[i], left[i - 1] + gaps[i - 1])
    for i in range(len(layer) - 2, -1, -1):  # and left what is too close to its right one
        right[i] = min(right[i], right[i + 1] - gaps[i])
    for key, a, b in zip(layer, left, right):  # both keep the gaps, so does their mean
        x[key] = (a + b) / 2


def _room(key):
    return WAYPOINT_GAP if isinstance(key, tuple) else BOX_GAP
