"""Code generation: the plan written out as one Python function, straight-line, and compiled.

torch.compile's FX graphs and inductor end the same way: a list of calls becomes source code.
Here each register is a local variable (`r12`), each instruction one line, and the memory plan is
visible as `del` statements after each value's last reader:

    def replay(leaves):
        r0 = leaves[0].data
        r3 = W_1.data                          # a parameter's array, read when the step reaches it
        r4 = matmul_reference_2(r0, r3)        # ops/arrays.py's matmul: what the fast path's door chose
        del r0                                 # r0's last reader was the line above
        r6 = Sum_backward_5(r5, r4)            # an op's rule run whole...
        r7 = multiply_reference_8(r6, r4)
        if r7.shape != (32, 64): fail(7)       # ...so a guard: shapes the capture saw (plan.py unchecked():
        ...                                    # none where they follow from the inputs' shapes)
        return tensor(r41, True)

Functions, constants and parameters are bound by name in the function's globals (`matmul_reference_2`,
`c7`, `W_1`). `step.explain(code=True)` prints the source. Local variables and one call per line
are what make a replay cheaper than the engine's Python.
"""
from .capture import Live, Reg
from .seams import ArrayCall


class Source:
    """Names for everything the code refers to, and the lines."""

    def __init__(self, helpers):
        self.namespace = dict(helpers)
        self.lines = []
        self.names = {}  # id(object) -> its name in the namespace

    def bind(self, value, hint="c"):
        name = self.names.get(id(value))
        if name is None:
            stem = "".join(ch if ch.isalnum() else "_" for ch in str(hint))[:24].strip("_") or "c"
            name = self.names[id(value)] = f"{stem}_{len(self.names)}"
            self.namespace[name] = value
        return name

    def render(self, template):
        """Python source for a template: registers by name, constants bound."""
        if isinstance(template, Reg):
            return f"r{template.index}"
        if isinstance(template, Live):
            return self.bind(template.tensor, "param") + ".data"
        if not _has_register(template):
            if template is None or template.__class__ in (bool, int, str):
                return repr(template)
            return self.bind(template, getattr(template, "__name__", "c"))
        if template.__class__ is tuple:
            items = [self.render(t) for t in template]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if template.__class__ is list:
            return "[" + ", ".join(self.render(t) for t in template) + "]"
        return "{" + ", ".join(f"{self.render(k)}: {self.render(v)}" for k, v in template.items()) + "}"

    def call(self, function, args, kwargs, hint=None, first=()):
        """`f(a, b, key=c)` for a function bound by name (`first`: source of leading arguments)."""
        parts = list(first) + [self.render(a) for a in args] + [f"{k}={self.render(v)}" for k, v in kwargs.items()]
        return f"{self.bind(function, hint or getattr(function, '__name__', 'f'))}({', '.join(parts)})"


def _has_register(template):
    if isinstance(template, (Reg, Live)):
        return True
    if template.__class__ in (tuple, list):
        return any(_has_register(t) for t in template)
    if template.__class__ is dict:
        return any(_has_register(k) or _has_register(v) for k, v in template.items())
    return False


def _targets(regs):
    names = [f"r{r}" if r is not None else "_" for r in regs]
    return names[0] if len(names) == 1 else ", ".join(names)


def _check(src, regs, shapes, what):
    for reg, shape in zip(regs, shapes):
        src.lines.append(f"if r{reg}.shape != {shape!r}: fail({what!r})")


def line(src, index, ins, contexts, check=True):
    """Append the source of instruction `index` (check=False: no check of its results' shapes)."""
    kind = ins[0]
    where = f"instruction {index} ({kind})"
    if kind == "live":
        src.lines.append(f"r{ins[2]} = {src.render(ins[1])}")
    elif kind == "forward":
        cls, template, needs, regs, node_reg, several, shapes = ins[1:]
        ctx = f"r{node_reg}" if node_reg is not None else "ctx"
        src.lines.append(f"{ctx} = {src.bind(contexts(needs), 'Ctx')}()")
        src.lines.append(f"{_targets(regs) if several else f'r{regs[0]}'} = "
                         f"{src.call(cls.forward, template, {}, cls.__name__ + '_forward', first=(ctx,))}")
        _check(src, regs, shapes, f"{cls.__name__} ({where})")
    elif kind == "backward":
        cls, node_reg, grads, regs = ins[1:]
        src.lines.append(f"out = {src.call(cls.backward, (Reg(node_reg),) + grads, {}, cls.__name__ + '_backward')}")
        src.lines.append(f"{_targets(regs)}{',' if len(regs) == 1 else ''} = out if out.__class__ is tuple else as_tuple(out)")
    elif kind == "ctx":
        needs, saved, attributes, reg = ins[1:]
        src.lines.append(f"r{reg} = {src.bind(contexts(needs), 'Ctx')}()")
        src.lines.append(f"r{reg}._saved = {src.render(saved)}")
        if attributes:
            src.lines.append(f"r{reg}.__dict__.update({src.render(attributes)})")
    elif kind == "leaf":
        src.lines.append(f"add_to_grad({src.render(ins[1]).removesuffix('.data')}, r{ins[2]})")
    elif kind == "grad":
        src.lines.append(f"r{ins[2]} = grad_of({src.render(ins[1]).removesuffix('.data')})")
    elif kind == "host":
        function, args, kwargs, regs, shapes, form = ins[1:]
        chosen = function.chosen if isinstance(function, ArrayCall) else None  # bound at capture: no door
        call = src.call(chosen[0], args, kwargs, f"{function.name}_{chosen[1]}") if chosen else src.call(function, args, kwargs)
        if not regs:
            src.lines.append(call)
        else:
            targets = _targets(regs) + ("," if form == "several" and len(regs) == 1 else "")
            src.lines.append(f"{targets} = {'asarray(' + call + ')' if form == 'scalar' else call}")
            if check:
                _check(src, regs, shapes, f"{getattr(function, '__name__', function)} ({where})")
    elif kind == "guard":
        function, args, kwargs, value = ins[1:]
        src.lines.append(f"if not same({src.call(function, args, kwargs)}, {src.bind(value, 'seen')}): "
                         f"fail({f'a value read into Python ({where})'!r})")
    elif kind == "read":  # a value the step returns, read from its array at the end
        function, args, kwargs = ins[1:]
        src.lines.append(f"v{index} = {src.call(function, args, kwargs)}")
    elif kind == "draw":
        name, args, kwargs, reg = ins[1:]
        src.lines.append(f"r{reg} = generator().{name}({', '.join([src.render(a) for a in args] + [f'{k}={src.render(v)}' for k, v in kwargs.items()])})")
    elif kind == "call":
        method, args, kwargs = ins[1:]
        src.lines.append(src.call(method, args, kwargs, getattr(method, "__qualname__", "call")))


def generate(code, inputs, result, dead, helpers, contexts, render_result, entry_guards=(), unchecked=()):
    """The source and the compiled function `replay(leaves)` of a plan (`entry_guards`: guard
    instructions checked before any of `code` runs; `unchecked`: the instructions whose results'
    shapes the plan knows, plan.py's unchecked(): no check line)."""
    src = Source(helpers)
    for position, kind, reg in inputs:
        src.lines.append(f"r{reg} = leaves[{position}]{'.data' if kind == 'data' else ''}")
    for ins in entry_guards:
        line(src, "entry", ins, contexts)
    for index, ins in enumerate(code):
        line(src, index, ins, contexts, index not in unchecked)
        if dead[index]:
            src.lines.append("del " + ", ".join(f"r{r}" for r in dead[index]))
    src.lines.append(f"return {render_result(src, result)}")
    source = "def replay(leaves):\n" + "\n".join("    " + text for text in src.lines) + "\n"
    exec(compile(source, "<ta.compile plan>", "exec"), src.namespace)  # noqa: S102  (our own generated code)
    return source, src.namespace["replay"]
