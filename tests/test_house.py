"""The shape of the house a reader walks into: the engine (tinyattn/autograd) in a few files, one per
question; no module imported late to dodge an import circle; and the only circle the knot a reader
expects, Tensor, Function and the rule files Tensor's methods call."""
import ast
import pathlib

PACKAGE = pathlib.Path(__file__).parent.parent / "tinyattn"


def module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph():
    """{module: set of tinyattn modules it imports at import time}, read from the source (ast)."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[:len(anchor) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in node.names:  # `from . import tensor` names a module, `from .x import y` a name
                    candidate = f"{base}.{alias.name}"
                    found.add(candidate if candidate in modules else base)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def _circles(graph):
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
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
                out.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_engine_is_a_dozen_files():
    modules = sorted(p.name for p in (PACKAGE / "autograd").glob("*.py"))
    assert len(modules) <= 14, f"tinyattn/autograd holds {len(modules)} modules (at most 14): {modules}"


def test_the_only_import_circle_is_tensor_function_and_the_rules():
    circles = _circles(import_graph())
    assert len(circles) <= 1, f"{len(circles)} import circles: {circles}"
    for circle in circles:
        assert "tinyattn.autograd.tensor" in circle and "tinyattn.autograd.function" in circle, circle
        assert all(m.startswith("tinyattn.autograd.") for m in circle), f"a circle leaves the engine: {circle}"
        assert len(circle) <= 9, f"the knot holds {len(circle)} modules (at most 9): {sorted(circle)}"


def test_no_module_is_imported_late_to_dodge_a_circle():
    late = [f"{p.relative_to(PACKAGE.parent)}:{i}" for p in PACKAGE.rglob("*.py")
            for i, line in enumerate(p.read_text().splitlines(), 1) if "noqa: E402" in line]
    assert not late, f"imports after code (# noqa: E402): {late}"


def test_the_circle_finder_finds_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
