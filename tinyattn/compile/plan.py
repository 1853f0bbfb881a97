"""The plan: the captured instructions turned into a list of small functions over registers.

    env = [None] * registers          # one slot per value the step computes
    for run, dead in steps:           # in the order the eager step ran them
        run(env)                      # e.g. env[7] = MatMul.forward(ctx, env[3], W.data)
        for r in dead: env[r] = None  # the memory plan: a value is let go after its last use

That is what a replay is: no Tensor objects, no graph, no backward walk, no module code, just the
ops' own forward and backward rules called with the arrays they took when the step was captured
(the same calls, so the same numbers, bit for bit). CUDA graphs do the same with GPU kernels:
record once, launch the recorded list again with new inputs in the same buffers.

The memory plan is liveness, as a compiler's register allocator computes it: each register's
last reader is known, so its array is dropped right after (and malloc hands its memory to the
next array of that size). Without it a replay would hold every array of the step at once.
"""
from operator import itemgetter

import numpy as np

from ..autograd import rng as _rng
from ..autograd.tensor import wrap
from .capture import Live, Reg


class GuardFailed(Exception):
    """A value the capture relied on is different at replay: run eagerly instead."""


class ReplayContext:
    """The `ctx` an op's forward and backward get at replay (the engine's Context, less the graph
    links); needs_input_grad is a class attribute of each instruction's own subclass."""
    _saved = ()

    def save_for_backward(self, *arrays):
        self._saved = arrays

    @property
    def saved_tensors(self):
        return self._saved


def getter(template):
    """A function env -> the template's value with each Reg read from env, or None if constant."""
    if isinstance(template, Reg):
        index = template.index
        return lambda env: env[index]
    if isinstance(template, Live):
        tensor = template.tensor
        return lambda env: tensor.data
    if template.__class__ in (tuple, list):
        parts = [getter(item) for item in template]
        if all(part is None for part in parts):
            return None
        if all(isinstance(item, Reg) for item in template) and template.__class__ is tuple:
            return _registers(tuple(item.index for item in template))
        fns = [part or (lambda env, value=item: value) for part, item in zip(parts, template)]
        kind = template.__class__
        return lambda env: kind([fn(env) for fn in fns])
    if template.__class__ is dict:
        parts = {key: getter(item) for key, item in template.items()}
        if all(part is None for part in parts.values()):
            return None
        fns = {key: part or (lambda env, value=template[key]: value) for key, part in parts.items()}
        return lambda env: {key: fn(env) for key, fn in fns.items()}
    return None


def _registers(indices):
    """The common case, every argument a register: one C-level lookup (operator.itemgetter)."""
    if len(indices) == 1:
        index = indices[0]
        return lambda env: (env[index],)
    return itemgetter(*indices)


def value_of(template):
    """getter(template) that also takes constants: always a function."""
    fn = getter(template)
    return fn if fn is not None else (lambda env: template)


def reads(template, into):
    """Add every register the template reads to `into`."""
    if isinstance(template, Reg):
        into.add(template.index)
    elif template.__class__ in (tuple, list):
        for item in template:
            reads(item, into)
    elif template.__class__ is dict:
        for item in template.values():
            reads(item, into)
    return into


def _check_shapes(values, shapes):
    for value, shape in zip(values, shapes):
        if value.shape != shape:
            raise GuardFailed(f"an array of shape {value.shape} where the capture saw {shape}")


def _forward(cls, template, needs, regs, node_reg, several, shapes):
    args, forward = value_of(template), cls.forward
    context = _context_class(needs)
    if not several:  # the common case, written out: one output, one register
        (reg,), (shape,) = regs, shapes

        def run(env):
            ctx = context()
            out = forward(ctx, *args(env))
            if out.shape != shape:
                raise GuardFailed(f"{cls.__name__} gave shape {out.shape} where the capture saw {shape}")
            env[reg] = out
            if node_reg is not None:
                env[node_reg] = ctx
        return run, reads(template, set())

    def run(env):
        ctx = context()
        outs = forward(ctx, *args(env))
        _check_shapes(outs, shapes)
        for reg, array in zip(regs, outs):
            env[reg] = array
        if node_reg is not None:
            env[node_reg] = ctx
    return run, reads(template, set())


_contexts = {}


def _context_class(needs):
    """A ReplayContext class whose needs_input_grad is `needs`: making a ctx is then one call."""
    if needs not in _contexts:
        _contexts[needs] = type("ReplayContext", (ReplayContext,), {"needs_input_grad": needs})
    return _contexts[needs]


def _backward(cls, node_reg, grads, regs):
    grads_of = value_of(grads)

    backward = cls.backward

    def run(env):
        result = backward(env[node_reg], *grads_of(env))
        if result.__class__ is not tuple:
            result = tuple(result) if isinstance(result, list) else (result,)
        for reg, grad in zip(regs, result):
            if reg is not None:
                env[reg] = grad
    return run, reads(grads, {node_reg})


def _leaf(where, reg):
    tensor_of = value_of(where) if isinstance(where, Reg) else (lambda env: where.tensor)

    def run(env):  # as the engine adds into a leaf's .grad: a copy it owns, or +=
        tensor, grad = tensor_of(env), env[reg]
        if tensor.grad is None:
            tensor.grad = np.array(grad, dtype=tensor.data.dtype, copy=True)
        else:
            tensor.grad += grad
    return run, reads(where, {reg})


def _live(where, reg):
    tensor = where.tensor

    def run(env):  # a parameter's array, read when the step reaches it (an update may have replaced it)
        env[reg] = tensor.data
    return run, set()


def _ctx(needs, saved, attributes, reg):
    saved_of, attributes_of, context = value_of(saved), value_of(attributes), _context_class(needs)

    def run(env):  # the ctx an inlined forward would have left, for a backward that runs whole
        ctx = context()
        ctx._saved = saved_of(env)
        ctx.__dict__.update(attributes_of(env))
        env[reg] = ctx
    return run, reads(saved, reads(attributes, set()))


def _grad(where, reg):
    tensor_of = value_of(where) if isinstance(where, Reg) else (lambda env: where.tensor)

    def run(env):
        env[reg] = tensor_of(env).grad
    return run, reads(where, set())


def _host(function, args, kwargs, regs, shapes):
    args_of, kwargs_of = value_of(args), value_of(kwargs)

    def run(env):
        result = function(*args_of(env), **kwargs_of(env))
        if regs:
            results = result if len(regs) > 1 else (np.asarray(result),)
            _check_shapes(results, shapes)
            for reg, array in zip(regs, results):
                env[reg] = array
    return run, reads(args, reads(kwargs, set()))


def _guard(function, args, kwargs, value):
    args_of, kwargs_of = value_of(args), value_of(kwargs)

    def run(env):
        if not same(function(*args_of(env), **kwargs_of(env)), value):
            raise GuardFailed(f"a value read into Python is not {value!r} this time")
    return run, reads(args, reads(kwargs, set()))


def _draw(name, args, kwargs, reg):
    args_of, kwargs_of = value_of(args), value_of(kwargs)

    def run(env):  # from tinyattn's generator as it is now: the same draws as an eager step's
        env[reg] = getattr(_rng.generator(), name)(*args_of(env), **kwargs_of(env))
    return run, reads(args, reads(kwargs, set()))


def _call(method, args, kwargs):
    def run(env):
        method(*args, **kwargs)
    return run, set()


BUILD = {"live": _live, "ctx": _ctx, "forward": _forward, "backward": _backward, "leaf": _leaf, "grad": _grad, "host": _host, "guard": _guard,
         "draw": _draw, "call": _call}


class Plan:
    """One captured signature's work, ready to replay (and to explain)."""

    def __init__(self, recorder, result, registers):
        self.code, self.wheres = recorder.code, recorder.wheres
        self.inputs = [(position, kind, reg) for position, kind, reg, _ in recorder.inputs]
        self.modules = list(recorder.modules.values())
        self.live = [(t, t.data.shape, t.data.dtype, t.requires_grad) for t in recorder.live.values()]
        self.result = result
        self.registers = registers
        self.guarded = any(ins[0] == "guard" for ins in self.code)
        built = [BUILD[ins[0]](*ins[1:]) for ins in self.code]
        kept = result_reads(result, set())
        last = {}
        for index, (_, read) in enumerate(built):
            for reg in read:
                last[reg] = index
        dead = [[] for _ in built]
        written = [_writes(ins) for ins in self.code]
        for index, regs in enumerate(written):  # a value nobody reads goes at once
            for reg in regs:
                if reg not in last and reg not in kept:
                    dead[index].append(reg)
        for reg, index in last.items():
            if reg not in kept:
                dead[index].append(reg)
        self.steps = [(run, tuple(gone)) for (run, _), gone in zip(built, dead)]
        self.sizes = {**_sizes(recorder.values), **recorder.saved_bytes}
        self.dead, self.written = dead, written

    def check_entry(self):
        """The guards on what lives outside the step: modules' train/eval switch, parameters."""
        for module, training in self.modules:
            if module.training != training:
                raise GuardFailed(f"{type(module).__name__} is in {'train' if module.training else 'eval'} mode now")
        for tensor, shape, dtype, requires_grad in self.live:
            data = tensor.data
            if data.shape != shape or data.dtype != dtype or tensor.requires_grad != requires_grad:
                raise GuardFailed("a parameter changed shape, dtype or requires_grad")

    def replay(self, leaves):
        self.check_entry()
        env = [None] * self.registers
        for position, kind, reg in self.inputs:
            value = leaves[position]
            env[reg] = value.data if kind == "data" else value
        state = _rng.get_rng_state() if self.guarded else None
        try:
            for run, dead in self.steps:
                run(env)
                if dead:
                    for reg in dead:
                        env[reg] = None
        except GuardFailed:
            if state is not None:
                _rng.set_rng_state(state)  # the next attempt draws the same numbers again
            raise
        return build_result(self.result, env)

    def peaks(self):
        """(bytes held at once under the memory plan, bytes the step's arrays take all together)."""
        held, peak = 0, 0
        for regs, dead in zip(self.written, self.dead):
            held += sum(self.sizes.get(reg, 0) for reg in regs)
            peak = max(peak, held)
            held -= sum(self.sizes.get(reg, 0) for reg in dead)
        return peak, sum(self.sizes.values())


def _writes(instruction):
    kind = instruction[0]
    if kind == "forward":
        return instruction[4] + ((instruction[5],) if instruction[5] is not None else ())
    if kind == "backward":
        return tuple(reg for reg in instruction[4] if reg is not None)
    if kind == "host":
        return instruction[4]
    if kind == "draw":
        return (instruction[4],)
    if kind in ("grad", "live"):
        return (instruction[2],)
    if kind == "ctx":
        return (instruction[4],)
    return ()


def _sizes(values):
    """Bytes of each register that owns its memory (a view costs nothing)."""
    return {reg: value.nbytes for reg, value in enumerate(values)
            if isinstance(value, np.ndarray) and value.base is None}


def result_reads(template, into):
    """The registers the step's result is rebuilt from: they live to the end."""
    if template.__class__ is tuple and template[:1] == ("tensor",):
        into.add(template[1])
    elif template.__class__ in (tuple, list):
        for item in template:
            result_reads(item, into)
    elif template.__class__ is dict:
        for item in template.values():
            result_reads(item, into)
    return reads(template, into) if isinstance(template, Reg) else into


def build_result(template, env):
    """What the step returns: tensors rebuilt around the replayed arrays."""
    if template.__class__ is tuple and template[:1] == ("tensor",):
        tensor = wrap(env[template[1]])
        tensor.requires_grad = template[2]
        return tensor
    if template.__class__ in (tuple, list):
        return template.__class__(build_result(item, env) for item in template)
    if template.__class__ is dict:
        return {key: build_result(item, env) for key, item in template.items()}
    return env[template.index] if isinstance(template, Reg) else template


def same(a, b):
    """Equal as a capture means it: arrays by value (NaN equal to NaN), the rest with ==, or the same object."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, Reg) or isinstance(b, Reg):
        return a == b
    if isinstance(a, Live) or isinstance(b, Live):
        return isinstance(a, Live) and isinstance(b, Live) and a.tensor is b.tensor
    if a.__class__ in (tuple, list) and b.__class__ is a.__class__:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if a.__class__ is dict and b.__class__ is dict:
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    try:
        return bool(a == b) and type(a) is type(b)
    except (TypeError, ValueError):
        return False
