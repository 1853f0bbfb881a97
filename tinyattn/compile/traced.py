"""`Traced`: an array the capture follows through plain numpy code.

Most of a step's work goes through tinyattn's ops (Function.apply), which the capture sees at
the seam. But some arrays are made by plain numpy in Python: a dropout mask
(`generator().random(shape) >= p`), a padding mask from the step's `lengths`, `x.data > 0`.
To follow those, the step's input arrays, the random draws and the ops' outputs are handed to
the Python code as `Traced` arrays: an ndarray subclass whose numpy calls (ufuncs, numpy
functions, indexing, astype, reshape) are recorded as "host" calls of the plan, and whose
values read into Python (int(x), bool(x), x.item(), x.tolist()) become guards: replay checks
that the value is the one Python saw, as torch.compile's guards do.

numpy offers the two doors used here to any subclass: `__array_ufunc__` (every ufunc: +, *, >,
np.exp, x.sum() ...) and `__array_function__` (np.where, np.concatenate, ...). What reaches a
Traced array by another door is marked `untracked`, and a capture that then uses it refuses.
Outside a capture (no recorder), a Traced array is an ordinary array.
"""
import operator

import numpy as np

recorder = None  # the Recorder (capture.py) while a step is being captured, else None


class Refused(Exception):
    """The step does something a replay cannot repeat; the message says what and where. The
    capture stops there, and the rest of the step runs eagerly."""

UNTRACKED = -1   # the register of an array numpy made from a Traced one by a door not followed


class Traced(np.ndarray):
    reg = UNTRACKED

    def __array_finalize__(self, obj):
        # numpy made this from a Traced array without passing through a recorded call
        # (a method such as .argmax or .copy): its value is not in the plan.
        self.reg = UNTRACKED

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        function = ufunc if method == "__call__" else getattr(ufunc, method)
        return _host(function, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return _host(func, args, kwargs)

    def __getitem__(self, key):
        return _host(operator.getitem, (self, key), {})

    def __setitem__(self, key, value):
        _host(operator.setitem, (self, key, value), {})

    def astype(self, dtype, *args, **kwargs):
        return _host(np.ndarray.astype, (self, dtype) + args, kwargs)

    def reshape(self, *shape, **kwargs):
        return _host(np.ndarray.reshape, (self,) + shape, kwargs)

    def copy(self, order="C"):
        return _host(np.ndarray.copy, (self, order), {})

    @property
    def data(self):
        # tinyattn's idiom `getattr(x, "data", x)` (a Tensor or an array) would give numpy's
        # memoryview here, whose arrays the capture cannot follow: while capturing, the array itself.
        if recorder is not None and not recorder.depth:
            return self
        return memoryview(self.view(np.ndarray))

    @property
    def T(self):
        return _host(np.transpose, (self,), {})

    # values read into Python: guards
    def __int__(self):
        return _read(self, int)

    def __index__(self):
        return _read(self, operator.index)

    def __float__(self):
        return _read(self, float)

    def __bool__(self):
        return _read(self, bool)

    def item(self, *args):
        return _read(self, np.ndarray.item, *args)

    def tolist(self):
        return _read(self, np.ndarray.tolist)


def _method(name):
    method = getattr(np.ndarray, name)
    return lambda self, *args, **kwargs: _host(method, (self,) + args, kwargs)


# ndarray methods that do not pass through __array_ufunc__ or __array_function__: followed one by one
for _name in ("transpose", "swapaxes", "squeeze", "ravel", "flatten", "repeat", "take", "argmax", "argmin",
              "cumsum", "dot", "diagonal", "nonzero", "sort", "argsort", "fill", "__copy__", "__deepcopy__"):
    setattr(Traced, _name, _method(_name))


def plain(value):
    """`value` with every Traced array in it (in tuples, lists, dicts) as a plain ndarray view."""
    if isinstance(value, Traced):
        return value.view(np.ndarray)
    if value.__class__ in (tuple, list):
        return value.__class__(plain(v) for v in value)
    if value.__class__ is dict:
        return {k: plain(v) for k, v in value.items()}
    return value


def _host(function, args, kwargs):
    if recorder is not None and not recorder.depth:  # capturing, and not inside an op
        try:
            return recorder.host(function, args, kwargs)
        except Refused as why:
            recorder.stop(why)
    return function(*plain(args), **plain(kwargs))


def _read(array, convert, *extra):
    if recorder is not None and not recorder.depth:
        try:
            return recorder.read(array, convert, extra)
        except Refused as why:
            recorder.stop(why)
    return convert(array.view(np.ndarray), *extra)


# --- values from outside the step that a replay relies on: guards --------------------------------
# A module's attributes (Dropout.p, which parameter is its weight) and the closure variables and
# globals of the step's function are read by the captured Python, which a replay does not run.
# Each is kept as it was at the capture and compared at each replay: numbers and strings by
# value, a small dict or list by its items (one level deep), anything else as the same object.

BY_VALUE = (bool, int, float, complex, str, type(None))
SMALL = 64  # a dict or list up to this long is compared item by item; a longer one as the same object
MISSING = object()  # a closure variable not yet assigned, or a global not defined any more


class Items:
    """A small dict's or list's items as a guard keeps them."""
    __slots__ = ("kind", "items")

    def __init__(self, value):
        self.kind, self.items = value.__class__, tuple(value.items() if value.__class__ is dict else value)


def seen(value):
    """`value` as a guard keeps it."""
    if value.__class__ in (dict, list) and len(value) <= SMALL:
        return Items(value)
    return value


def unchanged(kept, value):
    """True if `value` is what `kept` (a seen() value) says it was."""
    if kept.__class__ is Items:
        if value.__class__ is not kept.kind or len(value) != len(kept.items):
            return False
        if kept.kind is dict:
            return all(k == key and unchanged(v, item) for (k, v), (key, item) in zip(kept.items, value.items()))
        return all(unchanged(v, item) for v, item in zip(kept.items, value))
    return kept is value or kept.__class__ in BY_VALUE and kept.__class__ is value.__class__ and kept == value


def alike(a, b):
    """Two seen() values of two captures are the same."""
    return unchanged(a, b.kind(b.items) if b.__class__ is Items else b)


def module_state(module):
    """The attributes of a module a replay relies on (its train/eval switch is a guard of its own)."""
    return tuple((name, seen(value)) for name, value in vars(module).items()
                 if name not in ("training", "_parameters", "_modules", "_buffers"))
