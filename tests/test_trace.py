"""ta.autograd.trace(): every node once, consumers first, with the gradients' norms, as a table."""
import numpy as np

import tinyattn as ta
import tinyattn.nn as nn
from tinyattn.autograd.function import Context


def _graph(root):
    """{id(node): node} of every node behind root, and {id(node): ids of the nodes using its outputs}."""
    nodes, consumers, todo = {}, {}, [root._ctx]
    nodes[id(root._ctx)] = root._ctx
    consumers[id(root._ctx)] = set()
    while todo:
        node = todo.pop()
        for tensor in node.inputs:
            parent = tensor._ctx
            if parent is None:
                continue
            consumers.setdefault(id(parent), set()).add(id(node))
            if id(parent) not in nodes:
                nodes[id(parent)] = parent
                todo.append(parent)
    return nodes, consumers


def test_the_trace_visits_every_node_once_after_all_its_consumers(rng):
    ta.manual_seed(0)
    attention = nn.Attention(4, 4, score="additive", hidden_size=5).double()
    x = ta.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    with ta.fused(False):                                # the composed ops: a graph with many nodes
        context, weights = attention(x, x, x)            # x used as query, keys and values
    loss = (context * context).sum() + weights.max()     # two paths from the loss
    nodes, consumers = _graph(loss)
    assert len(nodes) > 10
    with ta.autograd.trace() as tape:
        loss.backward()
    order = [r.node_id for r in tape]
    assert sorted(order) == sorted(nodes) and len(set(order)) == len(order)
    position = {node_id: i for i, node_id in enumerate(order)}
    for node_id, users in consumers.items():
        assert all(position[user] < position[node_id] for user in users)
    for record in tape:
        assert isinstance(nodes[record.node_id], Context)
        assert record.name == nodes[record.node_id].fn.__name__  # freed after the walk: only its Function left
        assert record.seconds >= 0


def test_the_records_hold_the_norms_of_the_gradients_that_pass(rng):
    x = ta.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = ta.tensor(rng.standard_normal(4), requires_grad=True)
    with ta.autograd.trace() as tape:
        (x * w).sum().backward()          # Sum: gets 1, hands on ones(3, 4); Mul: hands on w and x
    total, product = tape
    assert (total.name, product.name) == ("Sum", "Mul")
    assert total.output_shapes == ((),) and product.output_shapes == ((3, 4),)
    assert total.grad_output_norms == (1.0,)
    np.testing.assert_allclose(total.grad_input_norms, [np.sqrt(12)])
    np.testing.assert_allclose(product.grad_output_norms, [np.sqrt(12)])
    # dL/dx = w on every row; dL/dw = the column sums of x.
    np.testing.assert_allclose(product.grad_input_norms,
                               [np.linalg.norm(np.broadcast_to(w.data, (3, 4))), np.linalg.norm(x.data.sum(0))])


def test_the_table_has_one_aligned_row_per_node(rng):
    a = ta.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    with ta.autograd.trace() as tape:
        (a @ a.T).tanh().sum().backward()
    lines = str(tape).splitlines()
    assert repr(tape) == str(tape)
    header, rule, rows, summary = lines[0], lines[1], lines[2:-1], lines[-1]
    assert [r.name for r in tape] == ["Sum", "Tanh", "MatMul", "Permute"]
    assert len(rows) == 4 and summary.startswith("4 nodes")
    start = header.index("|grad received|")
    for row, record in zip(rows, tape):
        assert row[header.index("Function"):].startswith(record.name)
        assert row[start:].startswith(f"{record.grad_output_norms[0]:.4g}")
    assert set(rule) == {"-", " "}


def test_nothing_is_recorded_outside_the_block_and_blocks_nest(rng):
    x = ta.tensor(rng.standard_normal(3), requires_grad=True)
    with ta.autograd.trace() as outer:
        with ta.autograd.trace() as inner:
            x.exp().sum().backward()
        x.tanh().backward(np.ones(3))
    x.sum().backward()
    assert [r.name for r in inner] == ["Sum", "Exp"]
    assert [r.name for r in outer] == ["Tanh"]


def test_autograd_trace_is_the_class_and_its_module_is_trace():
    # The module's name is the class's too (as gradcheck's), so the package attribute is the class.
    assert ta.autograd.trace.__module__ == "tinyattn.autograd.trace" and isinstance(ta.autograd.trace, type)
