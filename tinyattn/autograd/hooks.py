"""Tensor hooks and retain_grad: functions the backward walk calls with a tensor's gradient.

`t.register_hook(fn)` asks the walk to call fn(grad) once per backward, when t's gradient is
complete (summed over every op that used t), before that gradient flows on: into the node
that made t, or into t.grad for a leaf. fn may return a replacement of the same shape and
dtype. `t.retain_grad()` is a hook that keeps the gradient of an intermediate tensor in t.grad;
it runs after the other hooks, so t.grad shows what flowed on (as in PyTorch).

Where they live: a leaf keeps its hooks itself (`tensor._hooks`); a tensor made by an op keeps
them on its graph node, by output index (`ctx.hooks`), since the walk sees nodes, not tensors.
Either way a hook-less graph costs the walk one `is None` test per node or leaf.
"""
import itertools
import weakref

import numpy as np

_RETAIN = "retain_grad"  # the key of the retain_grad hook: always run last
_next_key = itertools.count()


class RemovableHandle:
    """What register_hook returns: `handle.remove()` takes the hook off again."""

    def __init__(self, hooks, key):
        self._hooks, self._key = hooks, key

    def remove(self):
        """Take the hook off (doing so twice is harmless)."""
        self._hooks.pop(self._key, None)


def _hooks_dict(tensor):
    """The {key: fn} dict of `tensor`'s hooks, made empty on first use."""
    ctx = tensor._ctx
    if ctx is None:
        if tensor._hooks is None:
            tensor._hooks = {}
        return tensor._hooks
    if ctx.hooks is None:
        ctx.hooks = {}
    return ctx.hooks.setdefault(tensor._out_index, {})


class HookMethods:
    """x.register_hook(fn), x.retain_grad() and x.grad_fn: Tensor inherits them (tensor.py)."""
    __slots__ = ()  # a base of Tensor, whose instances keep their fixed slots

    @property
    def grad_fn(self):
        """Name of the Function that made this tensor, or None for a leaf."""
        ctx = self._ctx
        return None if ctx is None else ctx.fn.__name__

    def register_hook(self, fn):
        """Call fn(grad array) in every backward once this tensor's gradient is complete.

        fn may return a replacement (same shape and dtype) that flows on instead; returns a
        handle whose .remove() takes the hook off. On a leaf it runs before .grad is updated.
        """
        if not callable(fn):
            raise TypeError(f"register_hook: expected a function of the gradient array, got {type(fn).__name__}")
        _check_requires_grad(self, "register_hook", "a hook")
        hooks = _hooks_dict(self)
        key = next(_next_key)
        hooks[key] = fn
        return RemovableHandle(hooks, key)

    def retain_grad(self):
        """Keep this intermediate tensor's gradient in .grad (summed across backwards)."""
        _check_requires_grad(self, "retain_grad", "a gradient")
        if self._ctx is None:
            return  # a leaf keeps its gradient in .grad anyway
        if self._out_index in self._ctx.fn.used_inside:
            raise RuntimeError(f"retain_grad: output {self._out_index} of {self._ctx.fn.__name__}, a fused node that uses it "
                               "inside, would show only the gradient from outside (zeros if nothing else uses it); build "
                               "the graph under `with ta.fused(False):`, where retain_grad shows the whole gradient.")
        # A weak reference: the graph node must not keep the tensor alive (nor make a cycle).
        _hooks_dict(self)[_RETAIN] = _Retain(weakref.ref(self))


def follow_in_place_change(tensor, old_node, old_index):
    """After an in-place change gives `tensor` a new node, its retain_grad follows it there, as
    PyTorch's does (.grad then shows the newest value's gradient); other hooks stay with the old."""
    old = old_node.hooks.get(old_index) if old_node is not None and old_node.hooks else None
    if old and _RETAIN in old:
        _hooks_dict(tensor)[_RETAIN] = old.pop(_RETAIN)


class _Retain:
    """Adds the gradient into tensor.grad, as the walk does for a leaf (across backwards too)."""

    def __init__(self, tensor_ref):
        self.tensor_ref = tensor_ref

    def __call__(self, grad):
        from .engine import _add_to_grad  # here: tensor.py imports this module before the engine exists

        tensor = self.tensor_ref()
        if tensor is not None:
            _add_to_grad(tensor, grad)


def run_hooks(hooks, grad, what):
    """Call each hook on `grad` in the order registered, retain_grad last; the final gradient.

    Hooks see a read-only view: the array may be shared with other branches of the graph, so
    a hook returns a new array instead of changing this one in place. `what` names the tensor
    ("output 0 of MatMul", "a leaf") in the error for a replacement of the wrong shape or dtype.
    """
    for key, fn in list(hooks.items()):
        if key == _RETAIN:
            continue
        new = fn(_read_only(grad))
        if new is None:
            continue
        if isinstance(new, np.generic):  # a 0-d array times a number gives a numpy scalar
            new = np.asarray(new)
        if not isinstance(new, np.ndarray) or new.shape != grad.shape or new.dtype != grad.dtype:
            got = f"a {new.dtype} array of shape {new.shape}" if isinstance(new, np.ndarray) else f"a {type(new).__name__}"
            raise RuntimeError(
                f"hook {getattr(fn, '__qualname__', fn)} on {what}, a {grad.dtype} tensor of shape {grad.shape}, "
                f"returned {got}: a hook returns None or an array of that shape and dtype"
            )
        grad = new
    retain = hooks.get(_RETAIN)
    if retain is not None:
        retain(grad)
    return grad


def _read_only(array):
    view = array.view()
    view.flags.writeable = False
    return view


def _check_requires_grad(tensor, op, thing):
    if not tensor.requires_grad:
        raise RuntimeError(
            f"{op}: this tensor of shape {tensor.data.shape} does not require grad, so no gradient "
            f"reaches it and {thing} would never be seen (make it with requires_grad=True)"
        )


def run_output_hooks(node, out_grads):
    """Run the hooks of each output of `node` on its gradient, replacing it in out_grads."""
    for index, hooks in node.hooks.items():
        if hooks:
            what = f"the output of {node.fn.__name__}" if len(out_grads) == 1 else f"output {index} of {node.fn.__name__}"
            out_grads[index] = run_hooks(hooks, out_grads[index], what)

