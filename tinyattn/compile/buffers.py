"""Lending memory, the memory plan's second half: a numpy ufunc writes its result (`out=`) into
the array of a register whose last reader has passed, instead of asking malloc for a new one.

plan.py's liveness `del`s each array after its last reader. Here, where a later ufunc makes an
array of the same shape and dtype, the dead array is kept for it instead and handed in as out=:
one allocation fewer, and memory the step touched a moment ago. The numbers are the same: a
ufunc computes the same loop whether numpy allocates the result or is given it.

Only memory nobody else can see is lent: a fresh array the plan made with a numpy or kernel call
(C-contiguous, owning its memory), none of whose views is still live. Never a step's input, a
parameter's array or a view of one, a .grad, what the step returns, nor anything an op's rule run
whole, a node's ctx, an optimiser or a draw touched (they may hold it past the last reader the
plan sees). Views are found by memory address: every register's array is held during a capture,
so two registers whose bytes overlap share memory.

Below, join_slice_grads: the gradients of a tensor's disjoint slices, which the walk sums from
one array of zeros per slice, written into one array of zeros (before fusion and lending).
"""
import bisect
import operator

import numpy as np

from .capture import Live, Reg
from .codegen import _has_register

HOLDERS = ("forward", "backward", "ctx", "call", "draw", "grad", "live", "leaf")  # may keep what they touch


def _bounds(value):
    if not isinstance(value, np.ndarray) or value.size == 0:
        return None
    start = value.__array_interface__["data"][0]
    low = high = start
    for size, stride in zip(value.shape, value.strides):
        low, high = (low + (size - 1) * stride, high) if stride < 0 else (low, high + (size - 1) * stride)
    return low, high + value.itemsize


def _fresh(value):
    """An array that owns its memory, C-contiguous: what a ufunc gives when numpy allocates."""
    return isinstance(value, np.ndarray) and value.base is None and value.flags.c_contiguous and value.size > 0


def lend(code, written, last, kept, inputs, values, reads_of):
    """{instruction index: the register whose array that instruction's ufunc writes into}.

    `written[i]`: the registers instruction i writes; `last`: register -> index of its last reader;
    `kept`: registers the step's result is rebuilt from; `inputs`: the step's argument registers;
    `values`: each register's array at capture."""
    born = {reg: index for index, regs in enumerate(written) for reg in regs}
    barred = set(kept) | set(inputs)
    for index, ins in enumerate(code):
        if ins[0] in HOLDERS:
            barred.update(reads_of(ins))
            barred.update(written[index])
    donors = sorted((b, reg) for reg in born
                    if code[born[reg]][0] == "host" and _fresh(values[reg]) and (b := _bounds(values[reg])))
    starts = [b[0] for b, _ in donors]
    ends = {reg: max(last.get(reg, born[reg]), born[reg]) for _, reg in donors}
    for reg, value in enumerate(values):  # each donor lives as long as its last view, and is barred with it
        bounds = _bounds(value)
        if bounds is None:
            continue
        for at in range(bisect.bisect_left(starts, bounds[1]) - 1, -1, -1):
            (_, high), donor = donors[at]
            if high <= bounds[0]:  # donors own disjoint memory, sorted: the ones before end lower still
                break
            if reg in barred or reg not in born:
                barred.add(donor)
            elif reg != donor and reg in ends:  # two registers of one array (x.astype(x.dtype, copy=False)):
                barred.add(max(reg, donor))     # lend it once, under the first
            ends[donor] = max(ends[donor], last.get(reg, born.get(reg, 0)))
    free_at = {}
    for _, reg in donors:
        if reg not in barred:
            free_at.setdefault(ends[reg], []).append(reg)
    held = _held(len(code), born, {**last, **ends}, values)
    peak = held.max(initial=0)
    pool, borrow = {}, {}
    for index, ins in enumerate(code):
        if ins[0] == "host" and _borrows(ins, values):
            reg = written[index][0]
            spare = pool.get((values[reg].shape, values[reg].dtype.str))
            if spare:  # the latest freed; kept alive till here only if that raises no peak
                donor = spare[-1]
                gap = held[ends[donor] + 1:index]
                if gap.max(initial=0) + values[donor].nbytes <= peak:
                    gap += values[donor].nbytes
                    borrow[index] = spare.pop()
        for reg in free_at.get(index, ()):
            pool.setdefault((values[reg].shape, values[reg].dtype.str), []).append(reg)
    return borrow


def _held(length, born, last, values):
    """Bytes of arrays alive after each instruction under the `del`s alone (`last`: when each
    array's last view goes; a view costs nothing)."""
    change = np.zeros(length + 1, np.int64)
    for reg, index in born.items():
        if isinstance(values[reg], np.ndarray) and values[reg].base is None:
            change[index] += values[reg].nbytes
            change[max(last.get(reg, index), index) + 1] -= values[reg].nbytes
    return np.cumsum(change)[:length]


def _borrows(ins, values):
    """A ufunc call with one array result, no keywords, giving a fresh C-contiguous array."""
    function, _, kwargs, regs, _, form = ins[1:]
    return (isinstance(function, np.ufunc) and function.nout == 1 and not kwargs and form == "one"
            and len(regs) == 1 and _fresh(values[regs[0]]))


def with_out(ins, reg):
    """The host instruction `ins` writing into register `reg`'s array (out=)."""
    return ins[:3] + ({"out": Reg(reg)},) + ins[4:]


def c_contiguous(array):
    return array.flags.c_contiguous


def layout_guards(recorder):
    """Guards (plan instructions) that each input array and parameter has the C order it had at
    capture: a ufunc given out= writes in C order, where numpy alone follows its inputs' order,
    and a later sum or product over another order could round differently."""
    arrays = [(Reg(reg), recorder.values[reg]) for _, kind, reg, _ in recorder.inputs if kind in ("data", "array")]
    arrays += [(Live(tensor), tensor.data) for tensor in recorder.live.values()]
    return [("guard", c_contiguous, (ref,), {}, c_contiguous(value)) for ref, value in arrays]


# --- gradients of slices: one zeros array for all of them ----------------------------------------
# GetItem's backward puts a slice's gradient into an array of zeros of the whole shape; the walk
# then adds those arrays up. A GRU's gates (64, 192) cut in three and read twice each: six zeros
# arrays of the whole shape and four sums, for gradients that never touch one element twice.
# Where each array of zeros is read only by its slice assignments and one sum, the sums and their
# slices' places are pairwise disjoint, the sum is one array of zeros with each gradient assigned
# into its slice, then 0.0 added to it all in place (one pass in memory order): each element is
# one gradient plus 0.0 (which turns -0.0 into +0.0, as the sum does), or 0.0 where no slice falls.
# The sum's bits: an element of a sum of zeros arrays is its one gradient + 0.0 + 0.0 ..., and
# x + 0.0 + 0.0 is x + 0.0.


def _slice_mask(array, key, value):
    """The elements array[key] picks, as a bool mask, if array[key] is a view that `value` (same
    dtype, broadcast to it) fills; else None."""
    if not (isinstance(value, np.ndarray) and value.dtype == array.dtype) or _has_register(key):
        return None
    mask = np.zeros(array.shape, bool)
    try:
        view = mask[key]
        if not (isinstance(view, np.ndarray) and view.base is mask
                and np.broadcast_shapes(value.shape, view.shape) == view.shape):
            return None
        view[...] = True
    except (IndexError, TypeError, ValueError):
        return None
    return mask


class _Zeros:
    """An array of zeros the plan makes and fills by slices: where it is made, the slice
    assignments into it, the elements they cover, how many of its readers those are."""

    def __init__(self, made, shape, sets=(), mask=None, gone=(), summed=None):
        self.made, self.sets, self.gone = made, list(sets), list(gone)  # gone: the instructions a join removes
        self.summed = summed  # the last sum joined: where 0.0 is added, in place
        self.mask = np.zeros(shape, bool) if mask is None else mask
        self.readers = len(self.sets)


def join_slice_grads(code, wheres, values, kept, reads_of):
    """(code, wheres): the code with each sum of slice-filled arrays of zeros made one array of
    zeros that each gradient is assigned into, plus 0.0. `kept`: registers the result is rebuilt from."""
    readers = {}
    for ins in code:
        for reg in reads_of(ins):
            readers[reg] = readers.get(reg, 0) + 1
    zeros, groups = {}, []
    for index, ins in enumerate(code):
        if ins[0] != "host":
            continue
        function, args, kwargs, regs = ins[1:5]
        if function is np.zeros and len(regs) == 1 and not _has_register((args, kwargs)) and isinstance(values[regs[0]], np.ndarray):
            zeros[regs[0]] = _Zeros(index, values[regs[0]].shape)
        elif function is operator.setitem and isinstance(args[0], Reg) and args[0].index in zeros:
            record = zeros[args[0].index]
            value = values[args[2].index] if isinstance(args[2], Reg) else args[2]
            mask = _slice_mask(values[args[0].index], args[1], value)
            if mask is None or record.summed is not None or (mask & record.mask).any():  # a joined sum: assigned into
                del zeros[args[0].index]
                continue
            record.sets.append(index)
            record.mask |= mask
            record.readers += 1
        elif function is np.add and not kwargs and len(args) == 2 and all(isinstance(a, Reg) for a in args):
            a, b = args[0].index, args[1].index
            first, second = zeros.get(a), zeros.get(b)
            if (first is None or second is None or a == b or a in kept or b in kept
                    or readers.get(a) != first.readers + 1 or readers.get(b) != second.readers + 1
                    or (first.mask & second.mask).any() or values[regs[0]].shape != values[a].shape
                    or values[a].dtype != values[b].dtype or values[regs[0]].dtype != values[a].dtype):
                continue
            del zeros[a], zeros[b]
            gone = first.gone + second.gone + [max(first.made, second.made)]  # the later array of zeros,
            gone += [at for at in (first.summed, second.summed) if at is not None]  # the sums before this one
            joined = zeros[regs[0]] = _Zeros(min(first.made, second.made), None, first.sets + second.sets,
                                             first.mask | second.mask, gone, index)
            joined.readers = 0  # the sum's register: read by nothing yet
            groups = [(reg, g) for reg, g in groups if g is not first and g is not second] + [(regs[0], joined)]
    new = list(code)
    gone = set()
    for reg, record in groups:
        made = code[record.made]
        new[record.made] = made[:4] + ((reg,),) + made[5:]
        for at in record.sets:
            _, _, (_, key, value), _, _, _, _ = code[at]
            new[at] = ("host", operator.setitem, (Reg(reg), key, value), {}, (), (), "none")
        new[record.summed] = ("host", np.add, (Reg(reg), 0.0), {"out": Reg(reg)}, (), (), "none")
        gone.update(record.gone)
    code = [ins for index, ins in enumerate(new) if index not in gone]
    wheres = [where for index, where in enumerate(wheres) if index not in gone]
    return code, wheres
