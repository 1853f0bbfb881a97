"""ta.viz.draw_graph: the boxes and arrows are the graph's nodes and edges, and the PNG is drawn."""
import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn.viz.graph import graph_lists


def _model_and_loss(rng):
    ta.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 5), nn.LayerNorm(5)).double()
    attention = nn.Attention(5, 5, score="additive", hidden_size=3).double()
    x = ta.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    h = model(x)
    context, _ = attention(h, h, h)
    loss = ta.cross_entropy(context, np.array([[0, 1, 4], [2, 2, 3]]))
    params = {f"model.{k}": p for k, p in model.named_parameters()}
    params.update({f"attention.{k}": p for k, p in attention.named_parameters()})
    return loss, params, x, h


def _walk(root):
    """Nodes and leaves behind root, and every (input, node) edge, found independently of graph.py."""
    nodes, leaves, edges, todo = {id(root._ctx)}, set(), 0, [root._ctx]
    while todo:
        node = todo.pop()
        for tensor in node.inputs:
            edges += 1
            if tensor._ctx is None:
                leaves.add(id(tensor))
            elif id(tensor._ctx) not in nodes:
                nodes.add(id(tensor._ctx))
                todo.append(tensor._ctx)
    return nodes, leaves, edges


def test_the_lists_hold_every_node_leaf_and_edge_of_the_graph(rng):
    loss, params, x, _ = _model_and_loss(rng)
    nodes, edges = graph_lists(loss, params)
    functions, leaves, edge_count = _walk(loss)
    assert {n.key for n in nodes if n.kind == "function"} == functions
    assert {n.key for n in nodes if n.kind != "function"} == leaves
    assert len(nodes) == len(functions) + len(leaves) and len(edges) == edge_count
    by_key = {n.key: n for n in nodes}
    assert all(by_key[e.source].depth > by_key[e.target].depth for e in edges)  # every arrow points down
    assert by_key[id(loss._ctx)].depth == 0 and by_key[id(loss._ctx)].name == "CrossEntropy"
    named = {n.name for n in nodes if n.kind == "parameter"}
    assert named == set(params)
    assert [n.name for n in nodes if n.kind == "input"] == ["input"] and by_key[id(x)].shapes == ((2, 3, 4),)


def test_after_backward_with_retain_graph_each_box_knows_its_gradients_norm(rng):
    loss, params, x, h = _model_and_loss(rng)
    nodes, _ = graph_lists(loss, params)
    assert all(norm is None for n in nodes for norm in n.grad_norms)
    h.retain_grad()
    loss.backward(retain_graph=True)
    by_key = {n.key: n for n in graph_lists(loss, params)[0]}
    assert by_key[id(loss._ctx)].grad_norms == (1.0,)
    np.testing.assert_allclose(by_key[id(h._ctx)].grad_norms, [np.linalg.norm(h.grad)], rtol=1e-12)
    weight = params["attention.v.weight"]
    np.testing.assert_allclose(by_key[id(weight)].grad_norms, [np.linalg.norm(weight.grad)], rtol=1e-12)


def test_drawing_writes_a_png_with_one_box_per_node_and_one_arrow_per_edge(rng, tmp_path):
    loss, params, _, _ = _model_and_loss(rng)
    loss.backward(retain_graph=True)
    path = tmp_path / "graph.png"
    fig = ta.viz.draw_graph(loss, path=path, params=params)
    nodes, edges = graph_lists(loss, params)
    artists = fig.axes[0].texts
    assert sum(a.get_gid() == "node" for a in artists) == len(nodes)
    assert sum(a.get_gid() == "edge" for a in artists) == len(edges)
    assert any("attention.v.weight" in a.get_text() and "|grad|" in a.get_text() for a in artists)
    assert path.read_bytes()[:4] == b"\x89PNG" and path.stat().st_size > 10_000


def test_a_graph_too_large_to_read_is_refused_with_its_size():
    x = ta.tensor(np.ones(3), requires_grad=True)
    y = x
    for _ in range(90):
        y = y * 1.5
    with pytest.raises(ValueError, match=r"the graph has 91 boxes .* readable up to 80.* smaller model"):
        ta.viz.draw_graph(y)


def test_a_freed_graph_or_a_leaf_is_a_clear_error():
    x = ta.tensor(np.ones(3), requires_grad=True)
    y = (x * 2.0).sum()
    y.backward()
    with pytest.raises(ValueError, match=r"freed by backward\(\).*retain_graph=True"):
        ta.viz.draw_graph(y)
    with pytest.raises(ValueError, match="not made by an op"):
        ta.viz.draw_graph(x)


def test_draw_graph_after_part_of_the_graph_was_freed_says_what_happened():
    x = ta.randn(2, 3, requires_grad=True)
    h = (x * 2).tanh()
    h.sum().backward()
    y = (h * 3).exp()
    with pytest.raises(ValueError, match=r"draw_graph: the graph was freed by backward\(\) \(at Tanh\)"):
        ta.viz.draw_graph(y)
