"""Pages in the browser: the backward walk of one step, node by node, and a head view of attention.

    loss.backward(retain_graph=True)          # the walk keeps each node's gradient on the graph
    ta.viz.walk_page(loss, "walk.html")       # open it in a browser: click a node, press Next
    ta.viz.attention_page(gpt, ids, "heads.html", targets=next_ids)

Each page is one HTML file: page.html (the one template: SVG, vanilla JS, no network) with the
data written into it as JSON. What the walk page shows is the engine's own record of the step:
the nodes in the order backward visits them (ta.autograd.reverse_topological_order, the order
the walk's heap pops them in: newest first), the gradient each Function node received as the
walk kept it (ctx.last_grads, kept by backward(retain_graph=True)), each leaf's .grad, and each
Function's backward as its source. Large arrays are sampled to a grid (their shape, min and max
said), so a page stays a few MB for a few thousand nodes; a loop's repeated steps are found in the
walk's order and drawn as one box, closed when large, so the page opens quickly too.

The head view reads each attention's weights off the graph too: the model runs once under
`ta.fused(False)`, where every attention's softmax is a Softmax node, and with targets the loss
walks back through it; a Softmax node's input gradient is dL/dscores = w * (g - sum(g * w))
(Softmax's own rule), shown negated: where gradient descent pushes each score.
"""
import inspect
import json
import os
import textwrap

import numpy as np

from ..autograd import Tensor, cross_entropy, reverse_topological_order
from ..nn import MultiheadAttention
from ..ops.blocks import fused

TEMPLATE = os.path.join(os.path.dirname(__file__), "page.html")
CELL_BUDGET = 250_000  # numbers in all the sampled heatmaps of a page together (~7 characters each)
MAX_CELLS, MIN_CELLS = 1024, 16  # one heatmap at most 32 x 32 cells, at least 4 x 4
GROUP_NODES = 16   # a run of repeated steps becomes a group (a box the page can collapse) from this many nodes
COLLAPSED = 48     # a group of more nodes than this starts collapsed, so a long unrolled graph opens quickly
LONGEST_STEP = 400  # the longest step (in nodes) looked for when finding repeated steps


def walk_page(loss, path, params=None):
    """Write the backward walk of `loss` as one HTML page at `path`; returns the path.

    Call it after loss.backward(retain_graph=True) to see every gradient (before it, the page
    shows the graph and the values only). params names the leaves, e.g.
    dict(model.named_parameters()). Next / Prev in the page step through the nodes in the
    order backward visited them; clicking a node shows its value, its gradient and its
    backward rule.
    """
    if not isinstance(loss, Tensor) or loss._ctx is None:
        raise ValueError(f"walk_page: expected the Tensor a computation made (a loss), got "
                         f"{type(loss).__name__ if not isinstance(loss, Tensor) else 'a leaf tensor'}: "
                         "a leaf has no graph behind it")
    order, outputs, leaves, inputs = _graph(loss)
    place = {node: i for i, node in enumerate(order)}
    place.update({id(leaf): len(order) + i for i, leaf in enumerate(leaves)})
    names = {id(tensor): name for name, tensor in (params or {}).items()}
    budget = _cells_per_array(len(place))
    rules, rule_index = [], {}
    nodes = []
    for node in order:
        if node.fn not in rule_index:
            rule_index[node.fn] = len(rules)
            rules.append(_rule_source(node.fn))
        shapes, dtype = _shapes_and_dtype(node, outputs)
        grads = node.last_grads
        nodes.append(dict(
            name=node.fn.__name__, kind="fused" if node.fn.__module__.startswith("tinyattn.nn.fused") else "function",
            shapes=shapes, dtype=dtype, rule=rule_index[node.fn],
            inputs=[place[_source(t)] for t in inputs[node]],
            value=_sample(outputs.get(node), budget),
            grad=None if grads is None else _sample(next((g for g in grads if g is not None), None), budget),
            grad_norms=None if grads is None else [_norm(g) for g in grads]))
    for leaf in leaves:
        nodes.append(dict(name=names.get(id(leaf), "input"), kind="parameter" if id(leaf) in names else "input",
                          shapes=[list(leaf.shape)], dtype=str(leaf.dtype), rule=None, inputs=[],
                          value=_sample(leaf.data, budget), grad=_sample(leaf.grad, budget),
                          grad_norms=[_norm(leaf.grad)]))
    _lay_out(nodes)
    groups = _repeated_steps([(node["name"], node["shapes"]) for node in nodes[:len(order)]])
    walked = any(node.last_grads is not None for node in order)
    return _write(path, dict(page="walk", nodes=nodes, rules=rules, walked=walked, groups=groups,
                             title=f"The backward walk of a {loss.dtype} loss: {len(order)} Function calls"))


def _graph(root):
    """(nodes in walk order, {node: an output array}, leaves needing a gradient, {node: its graph inputs}).

    A node with one output does not keep its array (function.py's Context): the tensors that carry
    it to its users do, so each output is read off the first user met (the root's off the root)."""
    order = reverse_topological_order([root._ctx], freed_error=_freed_error)
    outputs, leaves, inputs = {root._ctx: root.data}, {}, {}
    for node in order:
        inputs[node] = node.inputs
        for tensor in node.inputs:
            if tensor._ctx is None:
                leaves.setdefault(id(tensor), tensor)
            else:
                outputs.setdefault(tensor._ctx, tensor.data)
    return order, outputs, list(leaves.values()), inputs


def _source(tensor):
    """The key of what made `tensor`: its node, or the leaf's id."""
    return tensor._ctx if tensor._ctx is not None else id(tensor)


def _freed_error(node):
    return ValueError(f"walk_page: the graph was freed by backward() (at {node.fn.__name__}); call "
                      "loss.backward(retain_graph=True) before walk_page, so that the graph and its gradients stay")


def _shapes_and_dtype(node, outputs):
    if node.output_meta is not None:
        return [list(shape) for shape, _ in node.output_meta], str(node.output_meta[0][1])
    array = outputs[node]
    return [list(array.shape)], str(array.dtype)


def _rule_source(fn):
    """The source of a Function's backward (its docstring says the rule in math)."""
    try:
        return textwrap.dedent(inspect.getsource(fn.backward))
    except (OSError, TypeError):  # a Function defined in a notebook cell or a string has no file
        return f"(the source of {fn.__name__}.backward is not available)"


def _lay_out(nodes):
    """Give each node a row (its longest path to the loss: 0 for the loss, inputs lowest) and a
    column, ordered in its row by the mean column of its consumers (placed first, being nearer the
    loss): one downward sweep of Sugiyama's barycentre heuristic, so edges cross little."""
    depth = [0] * len(nodes)
    consumers = [[] for _ in nodes]
    for i, node in enumerate(nodes):  # walk order: every consumer before what it consumes
        for j in node["inputs"]:
            depth[j] = max(depth[j], depth[i] + 1)
            consumers[j].append(i)
    rows = {}
    for i in sorted(range(len(nodes)), key=depth.__getitem__):
        rows.setdefault(depth[i], []).append(i)
    for d in sorted(rows):
        row = sorted(rows[d], key=lambda i: np.mean([nodes[c]["x"] for c in consumers[i]]) if consumers[i] else 0.0)
        for column, i in enumerate(row):
            nodes[i].update(x=column - (len(row) - 1) / 2, depth=depth[i], consumers=consumers[i])


def _repeated_steps(signatures):
    """Groups of the walk: runs of nodes whose (op, shapes) sequence repeats step after step, as an
    unrolled recurrence, a decoder loop or a stack of identical layers makes them:
    [{first, count, steps, period, collapsed}], nodes first .. first + count - 1 of the walk's order.

    The graph keeps no record of which Module made a node, but the walk visits nodes newest first,
    so each step of a loop is one stretch of the walk: a run with period p is where signature i
    equals signature i + p. The longest runs are taken first (of equal ones the shortest period:
    the step, not two steps), then shorter ones in what is left, but not a run whose nodes are
    mostly runs of shorter, more often repeated steps (those are the groups); runs under
    GROUP_NODES are no group."""
    codes = np.unique(np.array([json.dumps(s) for s in signatures]), return_inverse=True)[1].ravel()
    runs = []  # (nodes covered, period, first)
    for period in range(1, min(LONGEST_STEP, len(codes) // 2) + 1):
        same = np.concatenate([[False], codes[period:] == codes[:-period], [False]])
        bounds = np.flatnonzero(np.diff(same.astype(np.int8)))  # where each stretch of equal pairs starts and ends
        for first, end in zip(bounds[::2], bounds[1::2]):
            steps = (end - first + period) // period  # end - first equal pairs: that many nodes past the first step
            if steps >= 2 and steps * period >= GROUP_NODES:
                runs.append((int(steps * period), period, int(first)))
    taken = np.zeros(len(codes), bool)
    groups = []
    for count, period, first in sorted(runs, key=lambda run: (-run[0], run[1], run[2])):
        if not taken[first:first + count].any() and not _made_of_shorter_runs(runs, count, period, first):
            taken[first:first + count] = True
            groups.append(dict(first=first, count=count, steps=count // period, period=period,
                               collapsed=bool(count > COLLAPSED)))
    return sorted(groups, key=lambda group: group["first"])


def _made_of_shorter_runs(runs, count, period, first):
    """Whether runs of shorter, more often repeated steps cover 9/10 of this run: a bidirectional
    encoder's walk repeats (one direction's steps) twice, and its groups are each direction's steps,
    not the two directions; two Transformer layers stay two layers, not their sublayers."""
    covered = np.zeros(count, bool)
    for other_count, other_period, other_first in runs:
        if other_period < period and other_count // other_period > count // period:
            covered[max(other_first - first, 0):max(other_first + other_count - first, 0)] = True
    return covered.sum() >= 0.9 * count


def _cells_per_array(count):
    return int(np.clip(CELL_BUDGET // max(1, 2 * count), MIN_CELLS, MAX_CELLS))


def _sample(array, cells):
    """A heatmap's data: the array as rows x columns (last axis across), evenly sampled down to
    about `cells` numbers, with the whole array's shape, min and max. None for no array."""
    if array is None:
        return None
    array = np.asarray(array)
    if array.dtype.kind not in "fiub":
        return None
    full = array.reshape(-1, array.shape[-1]) if array.ndim >= 2 else array.reshape(1, -1)
    side = max(1, int(np.sqrt(cells)))
    rows = np.unique(np.linspace(0, full.shape[0] - 1, min(full.shape[0], side)).round().astype(int))
    cols = np.unique(np.linspace(0, full.shape[1] - 1, min(full.shape[1], cells // len(rows) if len(rows) else 1))
                     .round().astype(int))
    grid = full[np.ix_(rows, cols)].astype(np.float64) if full.size else np.zeros((0, 0))
    return dict(shape=list(array.shape), min=_number(array.min()) if array.size else None,
                max=_number(array.max()) if array.size else None, rows=int(grid.shape[0]), cols=int(grid.shape[1]),
                sampled=bool(grid.size < full.size), data=[_number(v) for v in grid.ravel()])


def _number(value):
    value = float(value)
    return float(f"{value:.3g}") if np.isfinite(value) else str(value)


def _norm(grad):
    return None if grad is None else _number(np.sqrt(np.sum(np.square(grad, dtype=np.float64))))


def attention_page(model, tokens, path, targets=None, *, labels=None, checkpoints=None):
    """Write a head view of every attention in `model` as one HTML page at `path`; returns the path.

    tokens: the token ids of one sequence (T,), or for a translator (Seq2Seq, LuongSeq2Seq,
    TransformerSeq2Seq) the pair (source ids, target ids), whose teacher-forced loss is walked.
    targets (T,): the ids the model should predict (the next tokens); with them (or a translator)
    the page can switch to -dL/dscores. labels: the text of each token (a list, or a pair of lists
    for a translator); the ids otherwise. checkpoints: [(label, state_dict)], e.g. states saved
    during training: the page then holds each one's heads (a picker steps through them) and the
    model gets its own state back.

    Each MultiheadAttention layer is one layer of the page with its heads; ta.models.GPT's layers
    are its blocks; a Bahdanau or Luong decoder's attention is one layer with a "head" per step.
    """
    translator = hasattr(model, "begin") and hasattr(model, "loss")
    if translator:
        source, target = (np.asarray(t).reshape(-1) for t in tokens)
        words = labels or ([str(t) for t in source], [str(t) for t in target])
        sequences = {"source": (len(source), list(words[0])), "target": (len(target) - 1, list(words[1])[:-1])}
    else:
        source = np.asarray(tokens).reshape(-1)
        sequences = {"tokens": (len(source), list(labels) if labels is not None else [str(t) for t in source])}
    states = checkpoints or [(None, None)]
    kept = model.state_dict() if checkpoints else None
    views = []
    try:
        for label, state in states:
            if state is not None:
                model.load_state_dict(state)
            views.append(dict(label=None if label is None else str(label),
                              layers=_attention_layers(model, tokens, targets, translator, sequences)))
    finally:
        if kept is not None:
            model.load_state_dict(kept)
    pushed = translator or targets is not None
    title = f"Attention of {type(model).__name__}" + (": weights, and -dL/dscores where the gradient pushes them"
                                                      if pushed else "")
    return _write(path, dict(page="attention", checkpoints=views, pushed=pushed, title=title))


def _attention_layers(model, tokens, targets, translator, sequences):
    """One checkpoint's layers: [{name, queries, keys, heads: [{name, weights, push}]}]."""
    modules = {name: m for name, m in model.named_modules() if isinstance(m, MultiheadAttention)}
    flags = {name: m.keep_weights for name, m in modules.items()}
    params = list(model.parameters())
    grads = [p.grad for p in params]
    was_training = model.training
    model.eval()  # no dropout: the weights a learner sees are the ones the model uses to predict
    try:
        for m in modules.values():
            m.keep_weights = True  # its last_tensors name the Softmax node of each layer
        with fused(False):  # every attention's softmax a node of the graph, not inside a fused node
            root = _forward(model, tokens, targets, translator)
        if root.ndim == 0:  # a loss: walk back, so each Softmax node keeps dL/dweights (last_grads)
            for p in params:
                p.grad = None
            root.backward(retain_graph=True)
        names = {m.last_tensors.weights._ctx: name for name, m in modules.items() if m.last_tensors is not None}
    finally:
        for (name, m) in modules.items():
            m.keep_weights = flags[name]
        for p, g in zip(params, grads):  # looking must not change what the next optimiser step sees
            p.grad = g
        model.train(was_training)
    order, outputs, _, _ = _graph(root)
    softmaxes = [node for node in reversed(order) if node.fn.__name__ == "Softmax"]  # in forward order
    layers, steps = [], None
    for number, node in enumerate(softmaxes, 1):
        weights = outputs[node][0]  # the one sequence of the batch
        grad = None if node.last_grads is None else node.last_grads[0][0]
        push = None if grad is None else -weights * (grad - (grad * weights).sum(-1, keepdims=True))
        if weights.ndim == 2 and weights.shape[0] == 1 and translator:  # one decoder step of an RNN decoder
            if steps is None:
                every = dict(name="every step", weights=[], push=None if push is None else [])
                steps = dict(name="decoder attention (a head per step)", heads=[every], queries=sequences["target"][1],
                             keys=sequences["source"][1][:weights.shape[1]])
                layers.append(steps)
            t = len(steps["heads"]) - 1
            steps["heads"].append(dict(name=f"step {t}: after {steps['queries'][t]}", row=t,
                                       weights=_rounded(weights), push=None if push is None else _rounded(push)))
            every["weights"] += steps["heads"][-1]["weights"]
            if push is not None:
                every["push"] += steps["heads"][-1]["push"]
            continue
        heads = weights if weights.ndim == 3 else weights[None]
        pushes = None if push is None else (push if push.ndim == 3 else push[None])
        name = names.get(node, f"attention {number}")
        layers.append(dict(name=name, **_token_sides(sequences, name, heads.shape[-1], heads.shape[-2]),
                           heads=[dict(name=f"head {h}", weights=_rounded(heads[h]),
                                       push=None if pushes is None else _rounded(pushes[h]))
                                  for h in range(len(heads))]))
    if not layers:
        raise ValueError(f"attention_page: {type(model).__name__} computed no softmax over its tokens: it has no "
                         "attention to show (the page reads each attention's Softmax node off the graph)")
    return layers


def _forward(model, tokens, targets, translator):
    """The loss to walk back from (a translator's, or cross-entropy against targets), else the output."""
    if translator:
        source, target = (np.asarray(t).reshape(1, -1) for t in tokens)
        return model.loss(source, [source.shape[1]], target)
    ids = np.asarray(tokens).reshape(1, -1)
    out = model(ids)
    logits = out[0] if isinstance(out, tuple) else out  # GPT returns (logits, loss)
    if targets is None:
        return logits
    targets = np.asarray(targets).reshape(-1)
    if logits.ndim != 3 or targets.shape != (ids.shape[1],):
        raise ValueError(f"attention_page: targets {targets.shape} should give one id per token ({ids.shape[1]},) "
                         f"of logits (1, T, vocab); the model gave {logits.shape}")
    return cross_entropy(logits.reshape(ids.shape[1], logits.shape[-1]), targets)


def _token_sides(sequences, name, keys, queries=1):
    """Labels of the queries and keys of a layer: the one sequence, or for a translator by what
    the layer reads (an encoder's self-attention the source, a decoder's cross-attention target
    words attending to source words, its self-attention target words)."""
    if "tokens" in sequences:
        labels = sequences["tokens"][1]
        return dict(queries=labels[:queries], keys=labels[:keys])
    (s, source), (t, target) = sequences["source"], sequences["target"]
    query_side = source if ("encoder" in name or (queries == s and queries != t)) else target
    key_side = source if ("encoder" in name or "multihead_attn" in name or (keys == s and keys != t)) else target
    return dict(queries=query_side[:queries], keys=key_side[:keys])


def _rounded(array):
    return [[float(f"{v:.3g}") for v in row] for row in np.asarray(array, dtype=np.float64)]


def _write(path, data):
    """The template with the data in it (as JSON, with "</" written "<\\/" so no string ends the script)."""
    with open(TEMPLATE, encoding="utf-8") as f:
        template = f.read()
    text = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    with open(path, "w", encoding="utf-8") as f:
        f.write(template.replace("/*DATA*/null", text, 1))
    return path
