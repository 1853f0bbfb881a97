"""The speed seam and the layers' imports: every block runs through the blocks table (ops/blocks.py),
whose table in force is the references under ta.fused(False) and the fused nodes otherwise, per
thread; no layer or model asks which form runs or imports a fused node; nothing in tinyattn/nn sits
in an import circle or needs a late import."""
import ast
import pathlib
import threading

import pytest

import tinyattn as ta
import tinyattn.nn as nn
from tinyattn.ops import blocks

ROOT = pathlib.Path(__file__).parent.parent
PACKAGE = ROOT / "tinyattn"


def _module_name(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path):
    """The tinyattn modules `path` imports at its top level (a `from package import name` names the
    submodule where one exists, else the package)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("tinyattn")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1] + ([base] if base else []))
            if not base.startswith("tinyattn"):
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                is_module = (ROOT / sub.replace(".", "/")).with_suffix(".py").exists() or (ROOT / sub.replace(".", "/")).is_dir()
                found.add(sub if is_module else base)
    return found


def _import_graph():
    return {_module_name(path): _imports(path) for path in PACKAGE.rglob("*.py")}


def _circles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(component)

    for v in graph:
        if v not in index:
            visit(v)
    return circles


def test_no_import_circle_holds_a_module_of_nn():
    for circle in _circles(_import_graph()):
        assert not any(name.startswith("tinyattn.nn") for name in circle), sorted(circle)


def test_nn_and_the_package_need_no_late_import():
    for path in [PACKAGE / "__init__.py", *(PACKAGE / "nn").rglob("*.py")]:
        assert "noqa: E402" not in path.read_text(), path.relative_to(ROOT)


def test_layers_and_models_never_ask_which_form_runs_nor_import_a_fused_node():
    for folder in ("nn", "models"):
        for path in (PACKAGE / folder).rglob("*.py"):
            if "fused" in path.relative_to(PACKAGE).parts or path == PACKAGE / "nn" / "__init__.py":
                continue
            source = path.read_text()
            assert "is_fused" not in source, path.relative_to(ROOT)
            assert not any(name.startswith("tinyattn.nn.fused") for name in _imports(path)), path.relative_to(ROOT)


def test_the_table_in_force_is_the_references_when_fused_is_off_and_the_fused_nodes_otherwise():
    with ta.fused(False):
        for name in blocks.BLOCKS:
            assert getattr(blocks, name) is blocks.reference(name), name
    with ta.fused(True):
        for name in blocks.BLOCKS:
            assert getattr(blocks, name) is not blocks.reference(name), name
    with pytest.raises(AttributeError, match="no block 'attend'.*attention"):
        blocks.attend


def test_a_layer_runs_the_block_in_force_in_its_own_thread(rng):
    """ta.fused(False) in one thread swaps the table for that thread only: another thread's
    attention, built at the same moment, is still the fused node."""
    x = ta.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    inside, release = threading.Barrier(2), threading.Event()
    made = {}

    def run(flag):
        with ta.fused(flag):
            inside.wait(5)
            made[flag] = nn.functional.scaled_dot_product_attention(x, x, x)[1].grad_fn
            release.wait(5)

    threads = [threading.Thread(target=run, args=(flag,)) for flag in (False, True)]
    for thread in threads:
        thread.start()
    while len(made) < 2:
        threading.Event().wait(0.01)
    release.set()
    for thread in threads:
        thread.join()
    assert made == {False: "Softmax", True: "ScaledDotProductAttention"}
