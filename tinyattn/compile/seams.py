"""The seams: where the recorder (capture.py) plugs into tinyattn while one step is captured.

install() swaps each of these for a version that tells the recorder, and remove() puts every
original back; outside a capture nothing here runs and the engine never knows it was there:

    Function.apply                 every op's forward
    Tensor.backward                refuses retain_graph=True and ta.autograd.trace; follows .grad after
    Tensor.register_hook/retain_grad   refused: a replay runs no hooks
    Tensor.grad                    the step's Python assigning a leaf's .grad (p.grad = None) is refused:
                                   a replay would not repeat the assignment (the walk's, zero_grad's
                                   and the capture's own writes pass)
    Tensor's in-place changes      refused in the graph through a view (x[:, 0].mul_(2)): that gives
                                   the base a new history (CopySlices) and renews older views of
                                   it when backward reaches them, which the capture cannot follow
    ops/arrays.py's functions      a kernel call with a followed array: one instruction
    Module.__call__                which modules ran (their train/eval switch and attributes are guarded)
    Optimizer.step/zero_grad, Module.zero_grad, a schedule's step   run now, called again at replay
    tinyattn's generator           every draw (dropout masks) drawn again at replay
    np.asarray, np.array, np.ascontiguousarray   keep a followed array followed
    np.zeros, np.ones, np.full     inside a rule being followed: a register the rule fills
"""
import numpy as np

from ..autograd import creation as _rng, engine as _walk
from ..autograd.function import Function
from ..autograd.inplace import InPlaceOps
from ..autograd.tensor import Tensor
from ..nn.module import Module
from ..ops import arrays as _arrays
from ..optim.optimizer import Optimizer
from ..optim.schedules import _Schedule
from . import traced as _traced
from .traced import Refused, Traced, plain


class _Draws:
    """tinyattn's generator while a step is captured: each draw becomes a "draw" instruction."""

    def __init__(self, recorder, generator):
        self._recorder, self._generator = recorder, generator

    def __getattr__(self, name):
        attr = getattr(self._generator, name)
        if not callable(attr) or name.startswith("_") or name == "bit_generator" or self._recorder.refused:
            return attr
        return lambda *args, **kwargs: self._recorder.draw(name, attr, args, kwargs)


# --- installing and removing the seams --------------------------------------------------------
_active = None  # the Recorder of the step being captured
original_apply = Function.apply.__func__  # the engine's own, which the recorder calls
_tensor_backward = Tensor.backward
_step, _zero_grad, _module_zero_grad = Optimizer.step, Optimizer.zero_grad, Module.zero_grad
_schedule_step = _Schedule.step
_module_call = Module.__call__
_register_hook, _retain_grad = Tensor.register_hook, Tensor.retain_grad
_grad_slot = Tensor.grad  # the slot's descriptor (Tensor has __slots__)
_change_in_place = InPlaceOps._change_in_place
_np_asarray, np_array, _np_contiguous = np.asarray, np.array, np.ascontiguousarray


def deactivate():
    """Stop telling the recorder (it gave up: the rest of the step runs eagerly, seams still in)."""
    global _active
    _active = _traced.recorder = None


def active():
    return _active


def _seam_apply(cls, *args):
    if _active is not None and _active.inline is not None:  # an op inside an op's rule: run it whole
        _active.inline[2] = f"it calls {cls.__name__}.apply"
        _active.depth += 1
        try:
            return original_apply(cls, *plain(args))
        finally:
            _active.depth -= 1
    if _active is not None and not _active.depth:
        try:
            return _active.apply(cls, args)
        except Refused as why:
            _active.stop(why)
    return original_apply(cls, *args)


def _seam_backward(self, grad=None, retain_graph=False):
    if _active is not None and retain_graph:
        _active.stop("backward(retain_graph=True): a replayed step keeps no graph")
    if _active is not None and _walk.recording() is not None:
        _active.stop("ta.autograd.trace() watches the walk, which a replay does not run")
    with plan_writes_grads():  # the walk sets each leaf's .grad, as a replay's "leaf" instructions do
        _tensor_backward(self, grad, retain_graph)
    if _active is not None:
        _active.follow_grads()


def _seam_grad_write(tensor, value):
    if (_active is not None and not _active.depth and not _active.writing_grads
            and getattr(tensor, "requires_grad", False) and getattr(tensor, "_ctx", None) is None
            and value is not getattr(tensor, "grad", None)):  # p.grad *= s changes it in place, then sets the same array
        _active.stop("the step assigns a leaf's .grad in Python (p.grad = ...), which a replay would not "
                     "repeat: call opt.zero_grad() or model.zero_grad(), or change .grad in place (p.grad *= s)")
    _grad_slot.__set__(tensor, value)


class plan_writes_grads:
    """Writes of .grad inside the block are the plan's own (the walk's, the capture's)."""

    def __enter__(self):
        self.recorder = _active
        if self.recorder is not None:
            self.recorder.writing_grads += 1

    def __exit__(self, *exc):
        if self.recorder is not None:
            self.recorder.writing_grads -= 1


def _seam_module_call(self, *args, **kwargs):
    if _active is not None and id(self) not in _active.modules:
        _active.modules[id(self)] = (self, self.training, _traced.module_state(self))  # as it was when called
    return _module_call(self, *args, **kwargs)


def _seam_change_in_place(self, op, out_of_place, *others):
    """An in-place change that rewrote the history of memory views share (inplace.py notes it in the
    shared counter's rewrites): made, as eager makes it; the rest of the step runs eagerly."""
    before = 0 if self._versions is None else len(self._versions.rewrites)
    result = _change_in_place(self, op, out_of_place, *others)
    if _active is not None and not _active.depth and self._versions is not None \
            and len(self._versions.rewrites) > before:
        _active.stop(f"{op} changed in place, in the graph, a tensor that views share (a change through a view "
                     "such as x[:, 0].mul_(2), or of a tensor a view was taken from): the history it rewrites "
                     "(CopySlices, views renewed in backward) is not captured")
    return result


def _refusing(method, why):
    def seam(self, *args, **kwargs):
        if _active is not None:
            _active.stop(why)
        return method(self, *args, **kwargs)
    return seam


def _followed(value):
    """A Traced array, or a float argument of the step (the same object: a float of the plan)."""
    if _active is None or _active.depth:
        return False
    if value.__class__ is Traced:
        return True
    hit = _active.ids.get(id(value)) if value.__class__ is float else None
    return hit is not None and hit[1] is value


def _seam_asarray(a, dtype=None, *args, **kwargs):
    """np.asarray keeps a Traced array Traced (numpy's own hands back a plain view, which the
    capture could no longer follow through the numpy code after it), and follows a float argument."""
    if _followed(a):
        if a.__class__ is Traced and not args and not kwargs and (dtype is None or np.dtype(dtype) == a.dtype):
            return a
        return _traced._host(_np_asarray, (a, dtype) + args, kwargs)
    return _np_asarray(a, dtype, *args, **kwargs)


def _seam_converter(function):
    """np.array, np.ascontiguousarray: numpy does not hand these to a subclass; follow them here."""
    def seam(a, *args, **kwargs):
        if _followed(a):
            return _traced._host(function, (a,) + args, kwargs)
        return function(a, *args, **kwargs)
    return seam


class ArrayCall:
    """A call of ops/arrays.py's function `name`, looked up at each call (so the fast path's door
    runs); a plan may bind the function the door chose at capture instead (`chosen`, plan.py)."""
    chosen = None  # (function, "kernel" or "reference"): what the replay calls, named so in its code

    def __init__(self, name):
        self.__name__ = self.name = name

    def __call__(self, *args):
        return getattr(_arrays, self.name)(*args)

    def __eq__(self, other):
        return isinstance(other, ArrayCall) and other.name == self.name

    __hash__ = None


def _array_seam(name, function):
    call = ArrayCall(name)

    def seam(*args):
        if _active is not None and not _active.depth and any(a.__class__ is Traced for a in args):
            return _traced._host(call, args, {})  # one instruction: a kernel's arithmetic is not numpy's
        return function(*plain(args))
    return seam


def _seam_new(function):
    """np.zeros, np.ones, np.full inside an op's rule being followed: a register (the rule fills it in
    place). Nowhere else: numpy's own code calls them too (a Generator fills an np.empty in C), and
    np.empty is left out for that reason: what C fills, the capture cannot see."""
    def seam(*args, **kwargs):
        if _active is not None and not _active.depth and _active.inline is not None:
            return _traced._host(function, args, kwargs)
        return function(*args, **kwargs)
    return seam


_NEW = ("zeros", "ones", "full")
_new_originals = {name: getattr(np, name) for name in _NEW}


def install(recorder):
    global _active
    for name in _NEW:
        setattr(np, name, _seam_new(_new_originals[name]))
    recorder.arrays = {name: f for name, f in vars(_arrays).items() if callable(f) and not name.startswith("_")}
    for name, function in recorder.arrays.items():
        setattr(_arrays, name, _array_seam(name, function))
    np.asarray, np.array = _seam_asarray, _seam_converter(np_array)
    np.ascontiguousarray = _seam_converter(_np_contiguous)
    _active = _traced.recorder = recorder
    Function.apply = classmethod(_seam_apply)
    Tensor.backward = _seam_backward
    Tensor.grad = property(_grad_slot.__get__, _seam_grad_write)
    Optimizer.step = lambda self: recorder.call(_step.__get__(self))
    Optimizer.zero_grad = lambda self, *a, **k: recorder.call(_zero_grad.__get__(self), *a, **k)
    Module.zero_grad = lambda self, *a, **k: recorder.call(_module_zero_grad.__get__(self), *a, **k)
    _Schedule.step = lambda self: recorder.call(_schedule_step.__get__(self))
    Module.__call__ = _seam_module_call
    InPlaceOps._change_in_place = _seam_change_in_place
    Tensor.register_hook = _refusing(_register_hook, "a hook (register_hook): a replay runs no hooks")
    Tensor.retain_grad = _refusing(_retain_grad, "retain_grad(): a replay keeps no intermediate gradients")
    recorder.generator = _rng._generator
    _rng._generator = _Draws(recorder, recorder.generator)


def remove(recorder):
    global _active
    for name in _NEW:
        setattr(np, name, _new_originals[name])
    for name, function in recorder.arrays.items():
        setattr(_arrays, name, function)
    np.asarray, np.array, np.ascontiguousarray = _np_asarray, np_array, _np_contiguous
    _active = _traced.recorder = None
    Function.apply = classmethod(original_apply)
    Tensor.backward = _tensor_backward
    Tensor.grad = _grad_slot
    Optimizer.step, Optimizer.zero_grad, Module.zero_grad = _step, _zero_grad, _module_zero_grad
    _Schedule.step = _schedule_step
    Module.__call__ = _module_call
    InPlaceOps._change_in_place = _change_in_place
    Tensor.register_hook, Tensor.retain_grad = _register_hook, _retain_grad
    if isinstance(_rng._generator, _Draws):
        _rng._generator = recorder.generator
    elif not recorder.refused:  # a manual_seed inside the step put in a new one: a replay would not
        recorder.refused = "ta.manual_seed() inside the step (a replay would not seed again): seed outside it"
