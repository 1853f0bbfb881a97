"""`ta.compile(fn)`: signatures, guards, when to capture, when to replay, when to stay eager.

    call 1 with a signature   eager, captured             (a signature: the arguments' shapes,
    call 2                    eager, captured again,        dtypes and kinds, plus grad mode,
                              compared with call 1          ta.fused and the backend)
    call 3, 4, ...            replayed (plan.py)

Why two captures: an array the step makes for itself in plain Python (a batch drawn inside fn, a
mask built from data the capture cannot see) would be frozen into the plan as a constant. So the
constants of two captures are compared; if one changed, the step runs eagerly and says so once.
A value Python read from an array (int(n), bool(x.any())) is a guard: a replay whose value
differs is abandoned, the step runs eagerly and is captured for that value too (up to
MAX_PLANS per signature; past that, the value changes every step: eager, said once).
"""
import contextlib
import os
import threading
import warnings

import numpy as np

from ..autograd import is_grad_enabled
from ..autograd.tensor import Tensor
from ..ops.blocks import is_fused
from ..ops import get_backend
from . import seams
from .capture import Out, Recorder, Reg
from .traced import MISSING, Refused, Traced, alike, seen
from .plan import GuardFailed, Plan, _writes, reads_of, result_reads, same, same_outside
from .seams import ArrayCall
from .fuse import MODES, TOLERANCE

MAX_PLANS = 8
MAX_SIGNATURES = 64  # past this many input signatures a new one runs eagerly (torch.compile's cache_size_limit)


class _Off(threading.local):
    off = os.environ.get("TINYATTN_COMPILE", "1").strip().lower() in ("0", "false")


_switch = _Off()


@contextlib.contextmanager
def off():
    """`with ta.compile.off():` every compiled step inside runs eagerly (TINYATTN_COMPILE=0: the whole run)."""
    before, _switch.off = _switch.off, True
    try:
        yield
    finally:
        _switch.off = before


class Entry:
    """What is known about one signature: its plans, and why it stays eager if it does."""

    def __init__(self, spec):
        self.spec, self.plans, self.pending, self.refused = spec, [], [], None
        self.calls = self.replays = 0


class CompiledStep:
    def __init__(self, fn, fuse="exact"):
        if fuse not in MODES:
            raise ValueError(f"ta.compile(fn, fuse={fuse!r}): fuse is 'exact' (bit for bit, the default), 'all' "
                             f"(also tanh, exp, sigmoid: within {TOLERANCE:g} relative in float32) or False")
        self.fn, self.fuse = fn, fuse
        self.entries = {}
        self.too_many = False  # the warning about MAX_SIGNATURES was given
        self.__name__ = getattr(fn, "__name__", "step")
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args, **kwargs):
        if _switch.off or seams.active() is not None:
            return self.fn(*args, **kwargs)
        leaves = []
        spec = (_spec((args, kwargs), leaves), is_grad_enabled(), is_fused(), get_backend())
        entry = self.entries.get(spec)
        if entry is None:
            if len(self.entries) >= MAX_SIGNATURES:
                if not self.too_many:
                    self.too_many = True
                    warnings.warn(f"ta.compile({self.__name__}): more than {MAX_SIGNATURES} input signatures; new ones "
                                  "run eagerly (a capture costs several eager steps: give the batches fewer shapes, "
                                  "e.g. bucket them by length)", stacklevel=2)
                return self.fn(*args, **kwargs)
            entry = self.entries[spec] = Entry(spec)
        entry.calls += 1
        if entry.refused:
            return self.fn(*args, **kwargs)
        for plan in entry.plans:
            try:
                result = plan.replay(leaves)
            except GuardFailed:
                continue
            entry.replays += 1
            return result
        return self._capture(entry, args, kwargs, leaves)

    def _capture(self, entry, args, kwargs, leaves):
        recorder = Recorder()
        recorder.outside = [(name, read, seen(read())) for name, read in outside_reads(self.fn)]
        args, kwargs = _hand_in(recorder, (args, kwargs), leaves)
        seams.install(recorder)
        result = None
        try:
            result = self.fn(*args, **kwargs)
            if not recorder.refused:
                template = _result(recorder, result)
                _set_by_modules(recorder)
        except Refused as why:  # found after fn returned
            recorder.refused = str(why)
        finally:
            seams.remove(recorder)
            _hand_back(recorder, result)
        if recorder.refused:
            entry.refused = recorder.refused
            self._warn(entry)
            return result
        try:
            plan = Plan(recorder, template, len(recorder.values), self.fuse)
        except Refused as why:
            entry.refused = str(why)
            self._warn(entry)
            return result
        self._file(entry, plan)
        return result

    def _file(self, entry, plan):
        """Confirm the plan against an earlier capture of the same values read, or keep it to compare."""
        for earlier in entry.pending:
            if not same_outside(earlier, plan):  # another train/eval setting, Dropout.p, a closure's value...:
                continue                         # another path, not a change
            where = first_difference(earlier, plan)
            if where is None:
                entry.pending.remove(earlier)
                entry.plans.append(earlier)
                return
            index, guard = where
            if not guard:
                entry.refused = (f"the step made an array or number for itself that changed between two calls with "
                                 f"the same inputs ({_describe(plan, index)}): pass it to the step as an argument")
                self._warn(entry)
                return
        entry.pending.append(plan)
        if len(entry.pending) + len(entry.plans) > MAX_PLANS:
            guards = [plan.wheres[i] for i, ins in enumerate(plan.code) if ins[0] == "guard"]
            changing = _changing_outside(entry.pending)
            entry.refused = (f"{changing} changes from call to call" if changing else
                             f"a value read into Python changes from call to call ({', '.join(guards[:3])})") + \
                f"; {MAX_PLANS} captures did not repeat"
            entry.pending, entry.plans = [], []
            self._warn(entry)

    def _warn(self, entry):
        warnings.warn(f"ta.compile({self.__name__}): runs eagerly for this signature: {entry.refused}", stacklevel=4)

    def explain(self, code=False):
        """What was captured, signature by signature (see docs/API.md, "Compiled steps"); with
        code=True, also the Python source generated for each plan (codegen.py)."""
        lines = [f"ta.compile({self.__name__}): {len(self.entries)} signature(s)"]
        for number, entry in enumerate(self.entries.values(), 1):
            inputs, grad, fused, backend = entry.spec
            lines.append(f"signature {number}: inputs {inputs}; grad mode {grad}, ta.fused {fused}, backend {backend}")
            lines.append(f"  calls {entry.calls}, replayed {entry.replays}")
            if entry.refused:
                lines.append(f"  eager: {entry.refused}")
            for label, plans in (("plan", entry.plans), ("captured once, to be confirmed", entry.pending)):
                for plan in plans:
                    lines.extend("  " + line for line in describe(plan, label))
                    if code:
                        lines.append(plan.source)
        return "\n".join(lines)


def describe(plan, label):
    counts = {}
    ops = {}
    for ins in plan.code:
        counts[ins[0]] = counts.get(ins[0], 0) + 1
        if ins[0] in ("forward", "backward"):
            name = ins[1].__name__ + (".backward" if ins[0] == "backward" else "")
            ops[name] = ops.get(name, 0) + 1
    planned, everything = plan.peaks()
    top = ", ".join(f"{name} x{n}" for name, n in sorted(ops.items(), key=lambda kv: -kv[1])[:8])
    guards = [f"{_value(ins[4])} at {where}" for ins, where in zip(plan.code, plan.wheres) if ins[0] == "guard"]
    calls = [ins[1] for ins in plan.code if ins[0] == "host" and isinstance(ins[1], ArrayCall)]
    kernels = sum(1 for call in calls if call.chosen and call.chosen[1] == "kernel")
    bound = sum(1 for call in calls if call.chosen)
    whole = sum(1 for ins in plan.code if ins[0] in ("forward", "backward"))
    exact = sum(run.exact for run in plan.fused)
    return [f"{label}: {plan.captured} array calls before fusion, {len(plan.code)} after ({len(plan.fused)} run(s) "
            f"fused into one loop each: {exact} exact, {len(plan.fused) - exact} within {TOLERANCE:g} relative); "
            f"generated code {plan.source.count(chr(10))} lines (explain(code=True) prints it)",
            "  " + ", ".join(f"{kind} {n}" for kind, n in counts.items())
            + f"  (forward/backward: an op's rule run whole, {whole}; host: numpy and ops/arrays.py calls, "
              "including those of the rules followed inside)",
            f"  most called: {top}",
            f"  memory (the arrays the plan computes and the nodes save): planned peak {planned / 2 ** 20:.2f} MB, "
            f"all held at once {everything / 2 ** 20:.2f} MB (a replay without the plan); {len(plan.borrow)} numpy "
            "call(s) write into a dead array (out=, buffers.py); the eager step's peak is measured in "
            "benchmarks/bench_compiled.py",
            f"  guards: the signature; train/eval and attributes of {len(plan.modules)} module(s); "
            f"{len(plan.outside)} closure variable(s) and global(s) of fn; shape, dtype and "
            f"requires_grad of {len(plan.live)} parameter(s); {len(guards)} value(s) read into Python"
            + "".join(f"\n    {g}" for g in guards[:10]),
            f"  fast path: {bound} ops/arrays.py call(s) bound to what the door chose at capture ({kernels} kernel(s)), "
            f"{len(calls) - bound} through the door (plan.py bind_door)",
            "  fused runs (calls -> stored outputs): " + _fused_runs(plan.fused)]


def _fused_runs(runs):
    """The distinct fused runs, most frequent first, with how often each occurs."""
    counts = {}
    for run in runs:
        counts[str(run)] = counts.get(str(run), 0) + 1
    return "none" if not counts else "".join(f"\n    x{n} {text}" for text, n in
                                                 sorted(counts.items(), key=lambda kv: -kv[1])[:12])


def _value(value):
    text = repr(value)
    return text if len(text) < 40 else text[:37] + "..."


def first_difference(a, b):
    """None if two captures did the same work with the same constants; else (index, is_a_guard_value).
    Registers are compared by their rank among the registers each plan uses: an op's rule that ran
    whole may have used a number of registers inside, then dropped, that depends on the data (a
    recurrent node's steps), which shifts every later number without changing the work."""
    if len(a.code) != len(b.code):
        index = next((i for i, (x, y) in enumerate(zip(a.code, b.code)) if not same(x[:2], y[:2])), min(len(a.code), len(b.code)))
        return index, any(ins[0] == "guard" for ins in a.code[:index + 1])
    rank_a, rank_b = _ranks(a), _ranks(b)
    for index, (x, y) in enumerate(zip(a.code, b.code)):
        x, y = _renamed(x, rank_a), _renamed(y, rank_b)
        if not same(x, y):
            return index, x[0] == "guard" and same(x[:4], y[:4])
    return None


def _ranks(plan):
    """register -> its rank among the registers the plan's instructions, inputs and result use."""
    used = result_reads(plan.result, {reg for _, _, reg in plan.inputs})
    for ins in plan.code:
        used |= reads_of(ins) | {reg for reg in _writes(ins) if reg is not None}
    return {reg: rank for rank, reg in enumerate(sorted(used))}


# where an instruction holds register numbers as plain ints (plan.py's _writes and reads_of)
_NUMBERS = {"forward": (4, 5), "backward": (2, 4), "host": (4,), "draw": (4,), "grad": (2,), "live": (2,),
            "leaf": (2,), "ctx": (4,)}


def _renamed(ins, rank):
    """The instruction with each register, a Reg in a template or a plain number, given as its rank."""
    def template(item):
        if isinstance(item, Reg):
            return Reg(rank.get(item.index, -1 - item.index))  # one no plan uses: its own number, apart
        if item.__class__ in (tuple, list):
            return item.__class__(template(t) for t in item)
        if item.__class__ is dict:
            return {k: template(v) for k, v in item.items()}
        return item

    def number(item):
        if item.__class__ is tuple:
            return tuple(number(t) for t in item)
        return item if item is None else rank.get(item, -1 - item)
    return tuple(number(field) if position in _NUMBERS.get(ins[0], ()) else template(field)
                 for position, field in enumerate(ins))


def _describe(plan, index):
    ins = plan.code[min(index, len(plan.code) - 1)]
    what = {"leaf": "a gradient added into a .grad", "grad": "a tensor's .grad read after backward",
            "live": "a parameter's array"}.get(ins[0]) or f"{ins[0]} {getattr(ins[1], '__name__', ins[1])}"
    return f"{what} at {plan.wheres[min(index, len(plan.wheres) - 1)]}"


# --- what the step reads from outside: its closure variables and the globals its code names ----
def outside_reads(fn):
    """(name, read) for each closure variable of fn and each global its code (and the code of the
    lambdas and comprehensions in it) names: guarded like a module's attributes (traced.py).
    torch.compile guards whatever its bytecode trace reads, however deep; here one level (a
    closure's dict item, yes; a value read inside another function fn calls, no: docs/API.md)."""
    fn = getattr(fn, "__func__", fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    reads = [(f"closure variable {name!r}", _cell_reader(cell))
             for name, cell in zip(code.co_freevars, fn.__closure__ or ())]
    names, codes = [], [code]
    while codes:
        inner = codes.pop()
        names.extend(inner.co_names)
        codes.extend(c for c in inner.co_consts if hasattr(c, "co_names"))
    globals_ = fn.__globals__
    return reads + [(f"global {name!r}", _global_reader(globals_, name))
                    for name in dict.fromkeys(names) if name in globals_]


def _cell_reader(cell):
    def read():
        try:
            return cell.cell_contents
        except ValueError:  # not assigned yet
            return MISSING
    return read


def _global_reader(globals_, name):
    return lambda: globals_.get(name, MISSING)


# --- the step's arguments ---------------------------------------------------------------------
def _spec(value, leaves):
    """The signature of the arguments; their tensors, arrays and floats go to `leaves`, in order."""
    if isinstance(value, Tensor):
        leaves.append(value)
        return ("tensor", value.data.shape, value.data.dtype.str, value.requires_grad)
    if isinstance(value, np.ndarray):
        leaves.append(value)
        return ("array", value.shape, value.dtype.str)
    if value.__class__ is float:
        leaves.append(value)
        return "float"
    if value.__class__ in (tuple, list):
        return (value.__class__.__name__,) + tuple(_spec(v, leaves) for v in value)
    if value.__class__ is dict:
        return ("dict",) + tuple((k, _spec(v, leaves)) for k, v in value.items())
    if value is None or value.__class__ in (int, bool, str):
        return value
    return ("object", id(value))


def _hand_in(recorder, value, leaves):
    """The arguments as fn gets them while captured: arrays as Traced views, tensors holding one."""
    position = [0]

    def walk(value):
        if isinstance(value, (Tensor, np.ndarray)) or value.__class__ is float:
            at = position[0]
            position[0] += 1
            if isinstance(value, Tensor):
                recorder.inputs.append((at, "tensor", recorder.new_reg(value), value))
                view = recorder.follow(value.data)
                recorder.inputs.append((at, "data", view.reg, value))
                recorder.swapped.append((value, value.data))
                value.data = view
                return value
            if isinstance(value, np.ndarray):
                view = recorder.follow(value)
                recorder.inputs.append((at, "array", view.reg, value))
                return view
            recorder.inputs.append((at, "float", recorder.new_reg(value), value))
            return value
        if value.__class__ in (tuple, list):
            return value.__class__(walk(v) for v in value)
        if value.__class__ is dict:
            return {k: walk(v) for k, v in value.items()}
        return value
    recorder.swapped = []
    return walk(value)


def _hand_back(recorder, result):
    """Input tensors get their own arrays back; returned tensors hold plain arrays."""
    for tensor, data in recorder.swapped:
        tensor.data = data
    recorder.plain_grads()
    for tensor in _tensors(result):
        tensor.data = np.asarray(tensor.data)


def _tensors(value):
    if isinstance(value, Tensor):
        yield value
    elif value.__class__ in (tuple, list):
        for v in value:
            yield from _tensors(v)
    elif value.__class__ is dict:
        for v in value.values():
            yield from _tensors(v)


def _result(recorder, value):
    """The template of what fn returned: an Out for each tensor (and each value read at the end)."""
    if isinstance(value, Tensor):
        ref = recorder.ref(value.data)
        if not isinstance(ref, Reg):
            return value  # a tensor from outside the step, returned as it is
        if value.requires_grad and value._ctx is not None and not value._ctx.freed:
            raise Refused("the step returns a tensor whose graph is still there: call backward() inside the step "
                          "(a replay builds no graph)")
        return Out("tensor", ref.index, value.requires_grad)
    if value.__class__ in (tuple, list):
        return value.__class__(_result(recorder, v) for v in value)
    if value.__class__ is dict:
        return {k: _result(recorder, v) for k, v in value.items()}
    if value.__class__ in (int, float, bool):
        read = _trailing_read(recorder, value)
        if read is not None:
            return read
    return recorder.ref(value)


def _trailing_read(recorder, value):
    """Out("read", index) if `value` is what a read at the end of the step gave (return loss.item()):
    nothing after it depended on it, so the replay computes it instead of guarding it."""
    for index in range(len(recorder.code) - 1, -1, -1):
        ins = recorder.code[index]
        if ins[0] != "guard":
            return None
        if ins[4] is value:
            recorder.code[index] = ("read",) + ins[1:4]
            return Out("read", index)
    return None


def _changing_outside(plans):
    """What outside the step differs between the first two of these captures (a module's attribute,
    a closure variable, a global), in words; None if nothing does."""
    if len(plans) < 2:
        return None
    a, b = plans[0], plans[1]
    for (module, _, state), (_, _, other) in zip(a.modules, b.modules):
        for (name, x), (_, y) in zip(state, other):
            if not alike(x, y):
                return f"{type(module).__name__}.{name}"
    return next((name for (name, _, x), (_, _, y) in zip(a.outside, b.outside) if not alike(x, y)), None)


def _set_by_modules(recorder):
    """A module attribute set to an array the step computed (nn.keep_attention_weights' last_weights):
    the replay sets it too, at its end (and does not guard it). One set to a tensor is refused."""
    for key, (module, training, state) in recorder.modules.items():
        set_here = []
        for name, value in vars(module).items():
            items = value if isinstance(value, (tuple, list)) else (value,)
            if any(isinstance(v, Tensor) and v.data.__class__ is Traced for v in items):
                raise Refused(f"{type(module).__name__}.{name} keeps a tensor of the step (as nn.keep_attention_weights "
                              "does with ta.fused(False)): a replay makes no tensors")
            if value.__class__ is Traced:
                recorder.emit("host", setattr, (module, name, recorder.ref(value)), {}, (), (), "none")
                set_here.append(name)
        if set_here:
            recorder.modules[key] = module, training, tuple(item for item in state if item[0] not in set_here)
