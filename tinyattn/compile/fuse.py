"""Fusion: a run of element-wise calls in the plan becomes one generated Numba loop.

A GRU step is a chain of small numpy calls (z * h + (1 - z) * n, where(mask, h_new, h)), each one
a pass over memory and an array for its result. A run of such calls is written as one loop that
computes the whole chain per element and stores only what the rest of the plan reads:

    r268 = multiply(r261, r267)            @njit(cache=True, error_model="numpy")
    r269 = add(r266, r268)          ->     def fused(a0, a1, a2): ...
    r271 = subtract(c_140, r265)               for i0 in range(n0):
    ...                                           for i1 in range(n1):
                                                     t0 = a0[i0, i1] * a1[i0, i1] ...

Two kinds of run (ta.compile(fn, fuse=...)):
  exact   +, -, *, /, negation, comparisons, where, not (and ops/arrays.py's sigmoid under the
          numba backend, whose kernel is the same scalar function): each is one IEEE operation
          in the dtype numpy uses (constants cast to it, as NumPy 2 casts a Python number), no
          fastmath, so no reassociation and no a*b+c contracted into an FMA: the same bits as eager
          (but for which operand's NaN a NaN result carries, and numpy's floating-point warnings and
          np.errstate, which a loop does not raise).
  all     also tanh, exp and sigmoid under the numpy backend, through fast_activations.py's scalar
          functions: within 1e-6 relative of numpy's in float32 (measured 1.9e-7 on normal results;
          a subnormal one within 1 ulp: tests/test_compile_fusion.py), so the step equals eager
          within that, not bit for bit. Not the default: "exact" keeps ta.compile's promise that a
          replay gives eager's numbers, and the transcendental calls are few in these models.
Layout: on a strided operand LLVM cannot vectorize the loop, and numpy's own strided loop was faster
(add then sigmoid on a (64, 64) column slice: 57 us fused, 26 us unfused; 13 us fused on contiguous
arrays). So a run takes operands that are C-contiguous (or 0-d) as captured, and a slice with steps
of 1 of a C-contiguous register (a GRU's gates, g[:, 64:128]) joins the run as that register read
at offsets (x = g[i0, i1 + 64]), whether the slice is taken in the run or before it (outside_views).
The loop itself is correct on any layout.
Left out: max/min (numpy's SIMD and scalar loops disagree on the sign of max(-0.0, 0.0)), mixed
dtypes, integer arrays, calls with out=.

A loop is keyed by its source (the chain, ndim, dtypes, which operands broadcast; not the sizes),
written to a file in the cache directory and imported with cache=True: each chain compiles once
per process and, from Numba's on-disk cache, once per machine.
"""
import hashlib
import importlib.util
import operator
import os
import sys

import numpy as np

from .capture import Out, Reg
from .seams import ArrayCall

EXACT = {np.add: "({} + {})", np.subtract: "({} - {})", np.multiply: "({} * {})", np.true_divide: "({} / {})",
         np.negative: "(-{})", np.greater: "({} > {})", np.greater_equal: "({} >= {})", np.less: "({} < {})",
         np.less_equal: "({} <= {})", np.equal: "({} == {})", np.not_equal: "({} != {})", np.where: "({1} if {0} else {2})",
         np.invert: "(not {})"}
TRANSCENDENTAL = {np.tanh: "fast_tanh({})", np.exp: "fast_exp({})"}
ARRAY_CALLS = {"multiply": "({} * {})", "sigmoid": "fast_sigmoid({})"}  # ops/arrays.py's, by name
COMPARISONS = {np.greater, np.greater_equal, np.less, np.less_equal, np.equal, np.not_equal}
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
TOLERANCE = 1e-6  # relative, float32: what a run with a transcendental call is within
MODES = ("exact", "all", False)

CACHE = os.environ.get("TINYATTN_FUSION_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "tinyattn", "fusion")
HEADER = '''import numpy as np
from numba import njit, types
from numba.extending import overload

from tinyattn.ops.kernels.fast_activations import fast_sigmoid, fast_tanh
from tinyattn.ops.kernels.fast_exp import fast_exp


def item(x):
    """A 0-d operand's value: a register the capture saw as a 0-d array may be a numpy scalar at replay."""


@overload(item)
def _item(x):
    return (lambda x: x[()]) if isinstance(x, types.Array) else (lambda x: x)


'''
_loops = {}  # source -> the compiled dispatcher, once per process


class Run:
    """What explain() says of one fused run: its calls, and whether it is exact."""

    def __init__(self, names, exact, outputs):
        self.names, self.exact, self.outputs = names, exact, outputs

    def __str__(self):
        return f"{' '.join(self.names)} -> {self.outputs} output(s), {'exact' if self.exact else f'within {TOLERANCE:g}'}"


def _is(function, group):
    """`function in group` for any callable (ArrayCall is unhashable)."""
    return getattr(function, "__hash__", None) is not None and function in group


def _value(item, values):
    return values[item.index] if isinstance(item, Reg) else item


def _formula(ins, mode, exact_sigmoid):
    """(formula, exact) for an element-wise instruction fusion may take, else None."""
    function = ins[1]
    if isinstance(function, ArrayCall):
        formula = ARRAY_CALLS.get(function.name)
        exact = function.name == "multiply" or exact_sigmoid
    elif _is(function, EXACT) or _is(function, TRANSCENDENTAL):
        exact = _is(function, EXACT)
        formula = (EXACT if exact else TRANSCENDENTAL)[function]
    else:
        return None
    if formula is None or (not exact and mode != "all"):
        return None
    return formula, exact


def _operands_fit(function, operands, out):
    """numpy gives the dtype the loop computes in: every array operand has the result's dtype (a
    comparison's: one float dtype; where's condition: bool), Python numbers are cast to it."""
    if function is np.where:
        cond, *branches = operands
        return isinstance(cond, np.ndarray) and cond.dtype == np.bool_ and _operands_fit(None, branches, out)
    arrays = [o for o in operands if isinstance(o, (np.ndarray, np.generic))]
    numbers = [o for o in operands if o.__class__ in (int, float)]
    if len(arrays) + len(numbers) != len(operands) or not arrays:
        return False
    if function is np.invert:
        return out.dtype == np.bool_ and arrays[0].dtype == np.bool_
    comparison = _is(function, COMPARISONS)
    dtype = arrays[0].dtype if comparison else out.dtype
    if comparison and (out.dtype != np.bool_ or any(np.float64(dtype.type(n)) != n for n in numbers)):
        return False  # a Python float a float32 comparison would round: left to numpy
    return dtype in FLOATS and all(a.dtype == dtype for a in arrays)


def _view(ins, values, written):
    """Offsets of a getitem that slices a C-contiguous register with steps of 1 (a gate's columns), or
    None: the loop reads that parent at the offsets, and stays vectorizable where the view would not."""
    parent, key = ins[2] if len(ins[2]) == 2 else (None, None)
    if not (isinstance(parent, Reg) and parent.index not in written and key.__class__ is tuple):
        return None
    array = values[parent.index]
    if not (isinstance(array, np.ndarray) and array.flags.c_contiguous and len(key) == array.ndim
            and (array.dtype in FLOATS or array.dtype == np.bool_) and all(k.__class__ is slice for k in key)):
        return None
    bounds = [k.indices(n) for k, n in zip(key, array.shape)]
    return tuple(start for start, _, _ in bounds) if all(step == 1 for _, _, step in bounds) else None


def outside_views(code, values):
    """{register: (parent, offsets)}: every slice _view reads through its parent, wherever it was
    taken. A run reads one taken before it through the parent too (the view's memory is the parent's:
    the same numbers at the time of the loop), as it reads a slice taken inside it."""
    views = {}
    for ins in code:
        if ins[0] == "host" and ins[1] is operator.getitem and not ins[3] and len(ins[4]) == 1 and ins[6] == "one":
            offsets = _view(ins, values, ())
            if offsets is not None:
                views[ins[4][0]] = (ins[2][0], offsets)
    return views


def find_runs(code, values, mode, exact_sigmoid, outside=()):
    """[(start, stop, formulas)]: maximal stretches of consecutive fusable calls with one result shape
    (a formula is ("view", offsets) for a slice the loop reads through its parent; `outside`:
    outside_views(), slices taken before a run that it reads through their parents)."""
    runs, start, shape, formulas, written = [], None, None, [], set()
    for index, ins in enumerate(code + [("end",)]):
        fit = None
        extends = ins[0] == "host" and start is not None and ins[5][:1] == (shape,)  # same shape as the open run
        if ins[0] == "host" and not ins[3] and len(ins[4]) == 1 and ins[6] in ("one", "scalar"):
            if ins[1] is operator.getitem:
                offsets = _view(ins, values, written if extends else ())
                fit = ("view", offsets) if offsets is not None else None
            else:
                fit = _formula(ins, mode, exact_sigmoid)
                out = values[ins[4][0]]
                operands = [_value(a, values) for a in ins[2]]
                if any(isinstance(a, Reg) and v.__class__ in (int, float) for a, v in zip(ins[2], operands)):
                    fit = None  # a Python number that is an input of the plan: numpy casts it at each call
                inside = written if extends else ()
                if fit and not (isinstance(out, np.ndarray) and _operands_fit(ins[1], operands, out) and all(
                        np.ndim(v) == 0 or not isinstance(v, np.ndarray) or v.flags.c_contiguous
                        or isinstance(a, Reg) and (a.index in inside or a.index in outside and v.shape == out.shape)
                        for a, v in zip(ins[2], operands))):
                    fit = None  # a strided view from outside the run: numpy's own loop is faster on it
        if fit and extends:
            formulas.append(fit)
            written.add(ins[4][0])
            continue
        while formulas and formulas[-1][0] == "view":  # trailing slices: left as they are
            formulas.pop()
        computing = sum(f[0] != "view" for f in formulas)
        if computing and len(formulas) > 1:
            runs.append((start, start + len(formulas), formulas))
        start, shape, formulas, written = (index, ins[5][0], [fit], {ins[4][0]}) if fit else (None, None, [], set())
    return runs


def fuse(code, wheres, values, kept, result, reads_of, mode="exact", exact_sigmoid=True):
    """The code with each run replaced by one call of its fused loop; the wheres to match; the runs;
    the result template with each value read at the end renumbered to its instruction's new place.
    reads_of(instruction): the registers it reads (plan.py's, which imports this module)."""
    if not mode:
        return code, wheres, [], result
    last = {}
    for index, ins in enumerate(code):
        for reg in reads_of(ins):
            last[reg] = index
    new_code, new_wheres, fused, at = [], [], [], 0
    outside = outside_views(code, values)
    for start, stop, formulas in find_runs(code, values, mode, exact_sigmoid, outside):
        new_code += code[at:start]
        new_wheres += wheres[at:start]
        instructions, names = _loop(code[start:stop], formulas, values, kept, last, stop, outside)
        new_code += instructions
        new_wheres += [wheres[start]] * len(instructions)
        fused.append(Run(names, all(exact for formula, exact in formulas if formula != "view"), len(instructions[-1][4])))
        at = stop
    moved = {}
    for new_index, ins in enumerate(new_code + code[at:]):
        moved[id(ins)] = new_index
    return new_code + code[at:], new_wheres + wheres[at:], fused, renumber(result, code, moved)


def renumber(template, code, moved):
    """Out("read", i) -> Out("read", where instruction i is now)."""
    if isinstance(template, Out):
        return Out("read", moved[id(code[template.index])]) if template.kind == "read" else template
    if template.__class__ in (tuple, list):
        return template.__class__(renumber(t, code, moved) for t in template)
    if template.__class__ is dict:
        return {k: renumber(v, code, moved) for k, v in template.items()}
    return template


def _loop(run, formulas, values, kept, last, stop, outside=()):
    """One "host" instruction calling the generated loop of `run`, and the names of its calls
    (`outside`: slices taken before the run, read through their parents where the shape is the run's)."""
    shape = run[0][5][0]
    ndim = len(shape)
    index = [f"i{d}" for d in range(ndim)]
    inputs, args, temps, body = {}, [], {}, []
    views = {reg: view for reg, view in outside.items() if values[reg].shape == shape}
    sizes = ["1"] * ndim

    def operand(item):
        if isinstance(item, Reg) and item.index in temps:
            return temps[item.index]
        if isinstance(item, Reg) and item.index in views:
            parent, offsets = views[item.index]
            key = ("v", parent.index, offsets)
            if key not in inputs:
                name = inputs[key] = f"a{len(inputs)}"
                args.append(parent)
                at = [f"i{d} + {o}" if o else f"i{d}" for d, o in enumerate(offsets)]
                sizes[:] = [str(n) if size == "1" else size for n, size in zip(shape, sizes)]
                body.append(f"x{name} = {name}{_subscript(at)}")
            return "x" + inputs[key]
        value = _value(item, values)
        if item.__class__ in (int, float):
            return None  # a number: cast where it is used
        key = ("r", item.index) if isinstance(item, Reg) else ("c", id(item))
        if key not in inputs:
            name = inputs[key] = f"a{len(inputs)}"
            args.append(item if isinstance(item, Reg) else np.asarray(item))
            own = np.shape(value)
            at = []
            for d, n in enumerate(own):
                axis = ndim - len(own) + d
                full = n == shape[axis]
                at.append(index[axis] if full else "0")
                if full:
                    sizes[axis] = f"{name}.shape[{d}]"
            body.append(f"x{name} = {name}{_subscript(at)}" if at else f"x{name} = item({name})")
        return "x" + inputs[key]

    for number, (ins, fit) in enumerate(zip(run, formulas)):
        if fit[0] == "view":
            views[ins[4][0]] = (ins[2][0], fit[1])  # the parent register, the offsets
            continue
        formula = fit[0]
        out = values[ins[4][0]]
        arrays = [_value(a, values) for a in ins[2] if a.__class__ not in (int, float)]
        dtype = arrays[0].dtype if _is(ins[1], COMPARISONS) else out.dtype  # what a number operand is cast to
        parts = [operand(a) or f"np.{dtype.name}({_number(a)})" for a in ins[2]]
        temps[ins[4][0]] = f"t{number}"
        body.append(f"t{number} = {formula.format(*parts)}")
    escaping = [ins[4][0] for ins in run if ins[4][0] in kept or last.get(ins[4][0], -1) >= stop]
    kept_views = [ins for ins in run if ins[4][0] in views and ins[4][0] in escaping]  # read later too: made as before
    escaping = [reg for reg in escaping if reg not in views]
    stores = [f"o{k}{_subscript(index)} = {temps[reg]}" for k, reg in enumerate(escaping)]
    size_names = [f"n{d}" for d in range(ndim)]
    lines = [f"{n} = {s}" for n, s in zip(size_names, sizes)]
    lines += [f"o{k} = np.empty({_subscript(size_names, '()')}, np.{_dtype(values[reg])})"
              for k, reg in enumerate(escaping)]
    indent = "    "
    for d in range(ndim):
        lines.append(indent * d + f"for i{d} in range(n{d}):")
    lines += [indent * ndim + line for line in body + stores]
    lines.append(f"return ({''.join(f'o{k}, ' for k in range(len(escaping)))})")
    params = ", ".join(inputs.values())
    source = f"def fused({params}):\n" + "".join(f"    {line}\n" for line in lines)
    names = [getattr(ins[1], "__name__", "?") for ins in run]
    return kept_views + [("host", compiled(source), tuple(args), {}, tuple(escaping),
                          tuple(values[reg].shape for reg in escaping), "several")], names


def _subscript(items, brackets="[]"):
    """`[i0, i1]`, `[i0,]`, `[()]` for a 0-d array (or, brackets="()", a shape tuple: `(n0, n1)`, `(n0,)`, `()`)."""
    if not items:
        return "[()]" if brackets == "[]" else "()"
    return brackets[0] + ", ".join(items) + ("," if len(items) == 1 else "") + brackets[1]


def _dtype(array):
    return "bool_" if array.dtype == np.bool_ else array.dtype.name


def _number(value):
    """A Python number as source that gives the same float (repr round-trips; inf and NaN by name)."""
    value = float(value)
    if value != value:
        return "np.nan"
    return repr(value) if abs(value) != float("inf") else ("np.inf" if value > 0 else "-np.inf")


def _kernels_version():
    """A line naming the source of the scalar kernels a loop calls: Numba's file cache checks the
    loop's own file only, so an edited fast_tanh must give the loop a new file (a new key)."""
    digest = hashlib.sha1()
    for name in ("fast_activations", "fast_exp"):
        with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "ops", "kernels", f"{name}.py"), "rb") as file:
            digest.update(file.read())
    return f"# scalar kernels: {digest.hexdigest()[:16]}\n\n"


KERNELS = _kernels_version()


def loops():
    """The id() of every loop compiled so far (a plan's fused calls are among them)."""
    return {id(loop) for loop in _loops.values()}


def compiled(source):
    """The loop of `source`, compiled once per process (and once per machine: Numba's file cache)."""
    loop = _loops.get(source)
    if loop is None:
        text = HEADER + KERNELS + '@njit(cache=True, error_model="numpy", fastmath=False)\n' + source
        key = hashlib.sha1(text.encode()).hexdigest()[:16]
        path = os.path.join(CACHE, f"fused_{key}.py")
        if not os.path.exists(path):
            os.makedirs(CACHE, exist_ok=True)
            temporary = f"{path}.{os.getpid()}"
            with open(temporary, "w") as file:
                file.write(text)
            os.replace(temporary, path)
        spec = importlib.util.spec_from_file_location(f"tinyattn_fused_{key}", path)
        module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # Numba's cache imports it by name
        spec.loader.exec_module(module)
        loop = _loops[source] = module.fused
    return loop
