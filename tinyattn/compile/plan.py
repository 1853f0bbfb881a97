"""The plan: the captured instructions, their registers' lifetimes, and the replay.

A replay runs one Python function that codegen.py writes from the instructions, in the order the
eager step ran them: the ops' own forward and backward rules (or, where a rule was followed inside,
its numpy calls), called with the arrays they took when the step was captured, so the same numbers
come out, bit for bit. No Tensor objects, no graph, no backward walk, no module code. CUDA graphs
do the same with GPU kernels: record once, launch the recorded list again on new inputs.

The memory plan is liveness, as a compiler's register allocator computes it: each register's last
reader is known, so the generated code `del`s its array right after (and malloc hands its memory
to the next array of that size). Without it a replay would hold every array of the step at once.

Before the code is written out: the gradients of disjoint slices share one array of zeros
(buffers.py), element-wise runs are fused (fuse.py), each ops/arrays.py call is bound to what the
fast path's door chose at capture (bind_door), and a shape check is left out where the result's
shape follows from shapes already known (unchecked).
"""
import operator

import numpy as np

from ..autograd import creation as _rng
from ..autograd.tensor import wrap
from ..ops import arrays as _arrays
from ..ops import get_backend
from ..ops.fast_path import TABLE
from .buffers import _bounds, join_slice_grads, layout_guards, lend, with_out
from .capture import Live, Out, Reg, strided
from .seams import ArrayCall
from .codegen import _has_register, generate
from .fuse import fuse, loops, renumber
from .traced import MISSING, Refused, alike, unchanged


class GuardFailed(Exception):
    """A value the capture relied on is different at replay: run eagerly instead."""


class ReplayContext:
    """The `ctx` an op's forward and backward get at replay (the engine's Context, less the graph
    links); needs_input_grad is a class attribute of each instruction's own subclass."""
    _saved = ()

    def save_for_backward(self, *arrays):
        self._saved = arrays

    @property
    def saved_arrays(self):
        return self._saved


def leaves(template):
    """The items of a template that are not tuples, lists or dicts (registers, outputs, constants)."""
    if template.__class__ in (tuple, list):
        for item in template:
            yield from leaves(item)
    elif template.__class__ is dict:
        for item in template.values():
            yield from leaves(item)
    else:
        yield template


def reads(template, into):
    """Add every register the template reads to `into`."""
    into.update(leaf.index for leaf in leaves(template) if isinstance(leaf, Reg))
    return into


def reads_of(ins):
    """The registers instruction `ins` reads (liveness)."""
    kind = ins[0]
    if kind == "forward":
        return reads(ins[2], set())
    if kind == "backward":
        return reads(ins[3], {ins[2]})
    if kind == "ctx":
        return reads(ins[2], reads(ins[3], set()))
    if kind in ("leaf", "grad"):
        return reads(ins[1], {ins[2]} if kind == "leaf" else set())
    if kind in ("host", "guard", "draw", "read"):
        return reads(ins[2], reads(ins[3], set()))
    return set()  # live, call


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


_contexts = {}


def _context_class(needs):
    """A ReplayContext class whose needs_input_grad is `needs`: making a ctx is then one call."""
    if needs not in _contexts:
        _contexts[needs] = type("ReplayContext", (ReplayContext,), {"needs_input_grad": needs})
    return _contexts[needs]


def _fail(what):
    raise GuardFailed(f"{what}: not what the capture saw")


def _add_to_grad(tensor, grad):
    """As the engine adds into a leaf's .grad: a copy it owns, or +=."""
    if tensor.grad is None:
        tensor.grad = np.array(grad, dtype=tensor.data.dtype, copy=True)
    else:
        tensor.grad += grad


def _grad_of(tensor):
    return tensor.grad


def _journaled(journal):
    """add_to_grad and grad_of that first write down a leaf's .grad as the replay found it (the
    array and a copy of its values; once per replay) in `journal`: a replay stopped midway after it
    has added into a .grad puts every .grad back (_undo) before the step runs again eagerly, which
    would otherwise add it twice."""
    def note(tensor):
        if id(tensor) not in journal:
            grad = tensor.grad
            journal[id(tensor)] = tensor, grad, None if grad is None else grad.copy()

    def add_to_grad(tensor, grad):
        note(tensor)
        _add_to_grad(tensor, grad)

    def grad_of(tensor):  # the step may change the array in place after reading it (p.grad *= s)
        note(tensor)
        return tensor.grad
    return {"add_to_grad": add_to_grad, "grad_of": grad_of}


def _undo(journal):
    """Every .grad as it was before the replay: the latest note first, so that where two leaves'
    .grad share memory the earlier note (taken before either was added into) is written last."""
    for tensor, grad, values in reversed(list(journal.values())):
        if grad is not None:
            grad[...] = values
        tensor.grad = grad
    journal.clear()


# numpy functions and methods that change their first argument in place
CHANGE_FIRST = (np.copyto, operator.setitem, np.putmask, np.place, np.put, np.ndarray.fill, np.ndarray.put,
                np.ndarray.sort, np.ndarray.partition)


def _in_place_targets(ins):
    """The registers a host call writes into in place: its out=, or the first argument of a call
    that changes it (CHANGE_FIRST, a ufunc's .at)."""
    if ins[0] != "host":
        return ()
    function, args, kwargs = ins[1:4]
    out = kwargs.get("out")
    targets = out if isinstance(out, tuple) else () if out is None else (out,)
    if args and (any(function is f for f in CHANGE_FIRST) or getattr(function, "__name__", None) == "at"):
        targets += (args[0],)
    return tuple(t.index for t in targets if isinstance(t, Reg))


def _refuse_changes_before(stop, code, wheres, values, outside):
    """A replay that stops midway (a value read into Python, a shape check) runs the step again
    eagerly: what the replay had already written into memory from outside the step (a parameter's
    array, an argument; `outside`) would be written twice. .grad is journaled and put back; an
    in-place change of a parameter or an argument, or an optimiser's step, before the last place a
    replay can stop is refused."""
    spans = [b for array in outside if (b := _bounds(array))]
    for ins in code[:stop]:
        if ins[0] == "call" and ins[1].__name__ == "step":  # an optimiser's or a schedule's
            raise Refused(f"a value read into Python or a shape that depends on data after the optimiser's step() "
                          f"({wheres[stop]}): a replay stopped there could not undo the step; read it before the "
                          "step, or step outside the compiled function")
        for reg in _in_place_targets(ins):
            low, high = _bounds(values[reg]) or (0, 0)
            if any(low < end and start < high for start, end in spans):
                raise Refused(f"it changes a parameter or an argument in place before a later check ({wheres[stop]}): "
                              "a replay stopped there could not take the change back; change it after the step, or "
                              "read any value into Python before the change")


def _tensor(array, requires_grad):
    tensor = wrap(array)
    tensor.requires_grad = requires_grad
    return tensor


HELPERS = {"fail": _fail, "same": None, "asarray": np.asarray, "add_to_grad": _add_to_grad, "grad_of": _grad_of,
           "generator": _rng.generator, "as_tuple": lambda out: tuple(out) if isinstance(out, list) else (out,),
           "tensor": _tensor}


class Plan:
    """One captured signature's work, written out as a Python function (codegen.py), ready to replay."""

    def __init__(self, recorder, result, registers, fusion="exact"):
        # fusion (fuse.py): runs of element-wise calls become one generated loop each; the plan is
        # the fused code (sigmoid's kernel is fast_sigmoid itself only under the numba backend)
        self.captured = len(recorder.code)
        # the gradients of a tensor's slices added into one array of zeros (buffers.py), then fusion
        code, wheres = join_slice_grads(recorder.code, recorder.wheres, recorder.values, result_reads(result, set()),
                                        reads_of)
        result = renumber(result, recorder.code, {id(ins): index for index, ins in enumerate(code)})
        self.code, self.wheres, self.fused, result = fuse(code, wheres, recorder.values,
                                                          result_reads(result, set()), result, reads_of, fusion,
                                                          get_backend() == "numba")
        # each ops/arrays.py call bound to the kernel or reference the fast path's door chose at capture
        ordered = all(ins[4] for ins in layout_guards(recorder))  # every input and parameter in C order
        unordered = _unordered(self.code) if ordered else None
        bound = [bind_door(ins, recorder.values, unordered) for ins in self.code]
        self.code, by_order = [ins for ins, _ in bound], any(relied for _, relied in bound)
        self.inputs = [(position, kind, reg) for position, kind, reg, _ in recorder.inputs]
        self.modules = list(recorder.modules.values())
        self.outside = recorder.outside
        self.live = [(t, t.data.shape, t.data.dtype, t.requires_grad) for t in recorder.live.values()]
        self.result = result
        self.registers = registers
        self.unchecked = unchecked(self.code, self.inputs, loops())  # results whose shapes need no check
        # where a replay can stop midway: a value read into Python, a shape check (codegen.py)
        stops = [i for i, ins in enumerate(self.code) if ins[0] == "guard"
                 or ins[0] == "forward" and ins[4] or ins[0] == "host" and ins[4] and i not in self.unchecked]
        self.guarded = bool(stops)  # the random generator is put back when a replay stops midway
        # a stop after the first write to (or read of) a leaf's .grad: the .grads are journaled
        touches = [i for i, ins in enumerate(self.code) if ins[0] in ("leaf", "grad")]
        self.journal = {} if touches and stops and stops[-1] > touches[0] else None  # id(leaf) -> its note
        outside = [t.data for t in recorder.live.values()] + [
            value.data if kind == "tensor" else recorder.values[reg] for _, kind, reg, value in recorder.inputs]
        if stops:
            _refuse_changes_before(stops[-1], self.code, self.wheres, recorder.values, outside)
        kept = result_reads(result, set())
        written = [_writes(ins) for ins in self.code]
        defined = {reg for _, _, reg in self.inputs}
        last = {}
        for index, (ins, regs) in enumerate(zip(self.code, written)):
            read = reads_of(ins)
            if not read <= defined:
                raise Refused(f"{ins[0]} {getattr(ins[1], '__name__', '')} reads a value the plan never computes "
                              f"({self.wheres[index]})")
            defined.update(regs)
            for reg in read:
                last[reg] = index
        # the memory plan: a value goes after its last reader (or, never read, after it is made)
        freed_at = {reg: index for index, regs in enumerate(written) for reg in regs if reg not in kept}
        freed_at.update((reg, index) for reg, index in last.items() if reg not in kept)
        self._source = self._run = None  # written and compiled on the first replay (a plan may be dropped first)
        made = {reg for _, _, reg in self.inputs}.union(*written)  # the registers of values a replay holds
        self.sizes = {reg: size for reg, size in {**_sizes(recorder.values), **recorder.saved_bytes}.items() if reg in made}
        # a dead array lent to a later ufunc of its shape and dtype (out=; buffers.py): kept till then
        self.borrow = lend(self.code, written, last, kept, [reg for _, _, reg in self.inputs], recorder.values, reads_of)
        for index, reg in self.borrow.items():
            freed_at[reg] = index
            self.sizes[written[index][0]] = 0  # the borrower's memory is the lender's
        dead = [[] for _ in self.code]
        for reg, index in freed_at.items():
            dead[index].append(reg)
        self.layouts = layout_guards(recorder) if self.borrow or by_order else []
        self.dead, self.written = dead, written

    def check_entry(self):
        """The guards on what lives outside the step: modules' train/eval switch and attributes (which
        parameter is the weight, Dropout.p), the closure variables and globals fn reads, parameters."""
        for module, training, state in self.modules:
            if module.training != training:
                raise GuardFailed(f"{type(module).__name__} is in {'train' if module.training else 'eval'} mode now")
            for name, kept in state:
                if not unchanged(kept, module.__dict__.get(name, MISSING)):
                    raise GuardFailed(f"{type(module).__name__}.{name} changed")
        for name, read, kept in self.outside:
            if not unchanged(kept, read()):
                raise GuardFailed(f"{name}, which the step reads from outside, changed")
        for tensor, shape, dtype, requires_grad in self.live:
            data = tensor.data
            if data.shape != shape or data.dtype != dtype or tensor.requires_grad != requires_grad:
                raise GuardFailed("a parameter changed shape, dtype or requires_grad")

    def _generate(self):
        """Write the replay's Python source (codegen.py) and compile it, once."""
        if self._source is None:
            code = [with_out(ins, self.borrow[i]) if i in self.borrow else ins for i, ins in enumerate(self.code)]
            helpers = {**HELPERS, "same": same, **({} if self.journal is None else _journaled(self.journal))}
            self._source, self._run = generate(code, self.inputs, self.result, self.dead, helpers, _context_class,
                                               _render_result, self.layouts, self.unchecked)

    @property
    def source(self):
        self._generate()
        return self._source

    def replay(self, leaves):
        self.check_entry()
        self._generate()
        state = _rng.get_rng_state() if self.guarded else None
        if self.journal is not None:
            self.journal.clear()
        try:
            return self._run(leaves)
        except GuardFailed:
            if state is not None:
                _rng.set_rng_state(state)  # the next attempt draws the same numbers again
            if self.journal is not None:
                _undo(self.journal)  # ... and adds its gradients into the .grads as they were
            raise

    def peaks(self):
        """(bytes held at once under the memory plan, bytes the step's arrays take all together)."""
        held, peak = 0, 0
        for regs, dead in zip(self.written, self.dead):
            held += sum(self.sizes.get(reg, 0) for reg in regs)
            peak = max(peak, held)
            held -= sum(self.sizes.get(reg, 0) for reg in dead)
        return peak, sum(self.sizes.values())


# numpy calls whose result's shape follows from their first argument's shapes (the arrays) and
# their other arguments (constants): a register's shape never changes their result's
SHAPE_CALLS = {np.ndarray.reshape, np.reshape, np.ndarray.transpose, np.transpose, np.ndarray.swapaxes, np.swapaxes,
               np.moveaxis, np.ascontiguousarray, np.broadcast_to, np.concatenate, np.stack, operator.getitem, strided,
               np.ndarray.astype, np.ndarray.copy, np.ndarray.squeeze, np.squeeze, np.expand_dims, np.ndarray.ravel,
               np.empty_like}
NEW = {np.zeros, np.ones, np.full}


def unchecked(code, inputs, loops):
    """The instructions whose results' shapes the plan knows without a check: numpy calls (ufuncs,
    np.where, ops/arrays.py's functions, fused loops `loops`, SHAPE_CALLS) whose array operands'
    shapes are known and whose other arguments are constants: the inputs' and parameters' shapes
    are guarded (the signature, check_entry), and such a call's result shape follows from them (a
    value read into Python that sets a shape is a guard of its own). Other calls keep their checks,
    which make their results known; what a backward rule run whole, a .grad or a draw sized by a
    register gives is not checked, so a call that reads it keeps its check."""
    known = {reg for _, kind, reg in inputs if kind != "tensor"}  # Live (a parameter's array) is known too
    proven = set()
    for index, ins in enumerate(code):
        kind = ins[0]
        if kind == "live" or kind == "forward":  # a parameter's shape is guarded on entry; a rule's output checked
            known.update(_writes(ins))
        elif kind == "draw" and not _has_register((ins[2], ins[3])):
            known.add(ins[4])
        elif kind == "host" and ins[4]:
            function, args, kwargs = ins[1:4]
            regs = [leaf for leaf in leaves((args, kwargs)) if isinstance(leaf, Reg)]
            if any(reg.index not in known for reg in regs):
                fits = False
            elif _hashable(function) and function in NEW:
                fits = not regs
            elif isinstance(function, (np.ufunc, ArrayCall)) or id(function) in loops:
                fits = True
            elif function is np.where:
                fits = len(args) == 3
            else:
                fits = _hashable(function) and function in SHAPE_CALLS and not _has_register((args[1:], kwargs))
            if fits:
                proven.add(index)
            known.update(ins[4])  # proven, or checked
    return proven


def _hashable(function):
    return getattr(function, "__hash__", None) is not None


def _unordered(code):
    """The registers whose memory order may differ from the capture's at a replay whose input arrays
    and parameters are in the capture's C order (the entry's guards): what a .grad read after
    backward (which the user may have set, in any order) leads to. Every other array is made by
    the plan's calls from those, in an order that follows from theirs."""
    unordered = set()
    for ins in code:
        if ins[0] == "grad" or reads_of(ins) & unordered:
            unordered.update(_writes(ins))
    return unordered


def bind_door(ins, values, unordered):
    """(`ins` calling the function the fast path's door chose for it at capture (ops/fast_path.py),
    whether that choice rests on memory order), or (ins, False) as it was. The door looks at its
    arrays' shapes and dtypes, which are the capture's at every replay (shapes: the signature and
    the guards, plan.py unchecked(); dtypes: the signature and the parameters' guards), and, for
    a kernel that needs C order, at their order: that choice is bound where the door would choose
    the same in any order, or where the order is the capture's at every replay (`unordered`: the
    registers where it may not be, plan.py _unordered(); None: any), the entry then guarding the
    C order of the inputs and parameters. A 0-d register may be a numpy scalar at replay (which
    the door does not count): its call keeps the door."""
    function = ins[1]
    if ins[0] != "host" or not isinstance(function, ArrayCall):
        return ins, False
    door = getattr(_arrays, function.name)
    choose = getattr(door, "choose", None)
    relied = False
    if choose is None:  # the numpy backend: the reference itself
        chosen = (door, "reference")
    else:
        args = [values[a.index] if isinstance(a, Reg) else a for a in ins[2]]
        if any(isinstance(a, Reg) and not (isinstance(v, np.ndarray) and v.ndim) for a, v in zip(ins[2], args)) \
                or any(not isinstance(a, Reg) and _has_register(a) for a in ins[2]) or ins[3]:
            return ins, False
        picked = choose(*args)
        # a kernel that needs C order: the choice rests on the arrays' order unless, order aside, the
        # door would still pick the reference
        rests_on_order = not (picked is door.reference and choose(*args, contiguous=False) is door.reference)
        if TABLE[function.name][1] and rests_on_order:
            if unordered is None or any(isinstance(a, Reg) and a.index in unordered for a in ins[2]):
                return ins, False
            relied = True
        chosen = (picked, "reference" if picked is door.reference else "kernel")
    bound = ArrayCall(function.name)
    bound.chosen = chosen
    return ins[:1] + (bound,) + ins[2:], relied


def _sizes(values):
    """Bytes of each register that owns its memory (a view costs nothing)."""
    return {reg: value.nbytes for reg, value in enumerate(values)
            if isinstance(value, np.ndarray) and value.base is None}


def result_reads(template, into):
    """The registers the step's result is rebuilt from (its registers and tensor outputs): they live to the end."""
    into.update(leaf.index for leaf in leaves(template)
                if isinstance(leaf, Reg) or isinstance(leaf, Out) and leaf.kind == "tensor")
    return into


def _render_result(src, template):
    """Source of what the step returns: each tensor rebuilt around its replayed array."""
    if isinstance(template, Out):
        return f"tensor(r{template.index}, {template.requires_grad})" if template.kind == "tensor" else f"v{template.index}"
    if template.__class__ in (tuple, list) and _has_out(template):
        items = ", ".join(_render_result(src, t) for t in template)
        return f"({items},)" if template.__class__ is tuple else f"[{items}]"
    if template.__class__ is dict:
        return "{" + ", ".join(f"{k!r}: {_render_result(src, v)}" for k, v in template.items()) + "}"
    return src.render(template)


def _has_out(template):
    if isinstance(template, Out):
        return True
    if template.__class__ in (tuple, list):
        return any(_has_out(t) for t in template)
    return template.__class__ is dict and any(_has_out(t) for t in template.values())


def same_outside(a, b):
    """Two captures found the same world outside the step: modules (train/eval, attributes), closure, globals."""
    return (len(a.modules) == len(b.modules) and len(a.outside) == len(b.outside)
            and all(m is n and t == u and len(s) == len(z) and all(k == j and alike(x, y) for (k, x), (j, y) in zip(s, z))
                    for (m, t, s), (n, u, z) in zip(a.modules, b.modules))
            and all(k == j and alike(x, y) for (k, _, x), (j, _, y) in zip(a.outside, b.outside)))


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
