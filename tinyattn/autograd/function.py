"""`Function`: one differentiable step, with its forward and its backward side by side.

A Function's `forward(ctx, *arrays)` computes numpy arrays from numpy arrays; its
`backward(ctx, *grads)` turns the gradient of each output into the gradient of each input
(the vector-Jacobian product). `MyFn.apply(*args)` unwraps Tensors, runs forward, and, when a
gradient is wanted, records a graph node: the `ctx` object itself, which remembers the inputs
and whatever forward saved. The backward walk (engine.py) visits these nodes in reverse.

Also here: grad mode (`no_grad`, per thread), which decides whether apply records a node, and
the clock that numbers nodes and in-place changes in one order (`tick`).
"""
import functools
import itertools
import threading

import numpy as np

from . import tensor as _tensor


tick = itertools.count(1).__next__  # the clock: node creation numbers and in-place changes (inplace.py)


class Context:
    """What one call of a Function remembers; it is also the call's node in the graph.

    forward may set any attribute on it (ctx.axis = axis) and save arrays for backward with
    `ctx.save_for_backward(*arrays)`. The engine adds the links it walks:
      fn               the Function class
      args             the call's arguments, as given (the Tensors, not their arrays)
      needs_input_grad one bool per argument, so backward can skip work nobody asked for
      _created         when the node was made: a node is always made after the nodes it uses,
                       so visiting the newest first is a valid order for the backward walk
    and, for a Function with several outputs only:
      n_outputs        how many (1 otherwise)
      output_meta      (shape, dtype) of each output, to stand in zeros for an unused output
    and, only when asked for:
      hooks            {output index: {key: fn}}: hooks of the outputs (engine.py)
      last_grads       each output's gradient in the last backward(retain_graph=True)
      changed_outputs  in-place changes made to its outputs' memory since (inplace.py)
    A single output's shape is not kept here: its Tensor and its gradient have it.
    """

    freed = False
    hooks = None
    _saved = ()
    changed_outputs = ()  # ((array, counter),) of in-place changes of its outputs' memory (inplace.py)
    last_grads = None
    n_outputs = 1
    output_meta = None

    @property
    def inputs(self):
        """The Tensor arguments that need a gradient, in argument order."""
        return tuple(arg for arg, need in zip(self.args, self.needs_input_grad) if need)

    def save_for_backward(self, *arrays):
        """Keep arrays (or anything) for backward, read back as ctx.saved_arrays."""
        self._saved = arrays

    @property
    def saved_arrays(self):
        if self.freed:
            raise RuntimeError(_freed_message(self))
        return self._saved

    @property
    def saved_tensors(self):
        """PyTorch's name; here the saved things are numpy arrays, so the name is saved_arrays."""
        raise AttributeError("ctx.saved_tensors: tinyattn's rules save numpy arrays, not tensors; "
                             "read them back as ctx.saved_arrays")

    def release(self):
        """Drop everything backward needed, keeping only the Function (it names the node in an error)."""
        # A new dict (faster than clearing the old one); _created stays for inplace.as_used_by.
        self.__dict__ = {"fn": self.fn, "freed": True, "_created": self._created}


def _freed_message(ctx):
    return (
        f"backward through {ctx.fn.__name__} a second time: its graph was freed by the first backward(). "
        "Pass retain_graph=True to the first backward() if you need to go through it again."
    )


class Function:
    """Base class of every differentiable op: subclass it and write two static methods.

        forward(ctx, *args)     arrays in for Tensor arguments (others pass through as they are);
                                returns one array or a tuple of arrays
        backward(ctx, *grads)   one gradient per output; returns one per input (None for inputs
                                that are not Tensors or need none)
    """
    used_inside = ()  # outputs the op also uses itself (a fused node's weights): retain_grad refuses them

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args):
        arrays, needs, float_dtypes = [], [], []
        for arg in args:  # unwrap the Tensors, note which need a gradient and their floating dtypes
            if isinstance(arg, _tensor.Tensor):
                arrays.append(arg.data)
                needs.append(arg.requires_grad)
                if arg.data.dtype.kind == "f" and arg.data.dtype not in float_dtypes:
                    float_dtypes.append(arg.data.dtype)
            else:
                arrays.append(arg)
                needs.append(False)
        if len(float_dtypes) > 1:
            raise TypeError(f"{cls.__name__}: {float_dtypes[0]} and {float_dtypes[1]} tensors in one op; "
                            "convert one with .double() or .float() first")

        ctx = Context()
        record = True in needs and _grad_mode.enabled  # no graph node when nothing needs a gradient
        ctx.needs_input_grad = tuple(needs) if record else (False,) * len(args)
        result = cls.forward(ctx, *arrays)
        several = isinstance(result, (tuple, list))  # a forward may return one array or several
        outputs = tuple(map(_tensor.wrap, result)) if several else (_tensor.wrap(result),)
        if record:
            ctx.fn = cls
            ctx._created = tick()  # one clock with in-place changes (inplace.py)
            ctx.args = args
            if several:  # one output's count and shape are the class defaults and its Tensor's own
                ctx.n_outputs = len(outputs)
                ctx.output_meta = tuple((o.data.shape, o.data.dtype) for o in outputs)
            for index, output in enumerate(outputs):
                if output.data.dtype.kind == "f":  # only floating outputs carry a gradient (an argmax never does)
                    output.requires_grad = True
                    output._ctx = ctx
                    output._out_index = index
        return outputs if several else outputs[0]


def zeros_for_output(shape, dtype):
    """A read-only zero gradient for an output nobody used (a broadcast view: no memory)."""
    return np.broadcast_to(np.zeros((), dtype), shape)


# --------------------------------------------------------------------------------------------------
# Grad mode: whether ops record the graph. `with ta.no_grad():` turns it off for a block.
#
# It is kept per thread, as in PyTorch: a `no_grad()` block in one thread leaves the others
# recording, and every new thread starts with grad mode on.
# --------------------------------------------------------------------------------------------------

class _GradMode(threading.local):
    enabled = True  # each thread starts here; an assignment holds for its own thread only


_grad_mode = _GradMode()


def is_grad_enabled():
    """True unless inside `no_grad()` (in this thread)."""
    return _grad_mode.enabled


class no_grad:
    """Build no graph inside this block or decorated function: for inference and updates.

    `with ta.no_grad():`, `@ta.no_grad()` and `@ta.no_grad` all work, nested or recursive:
    each entry remembers the state it found on a stack and each exit restores it. A decorated
    function enters a fresh block per call, as PyTorch's: threads calling it at once each get
    their own saved state back.
    """

    enabled = False  # what the block sets

    def __init__(self, function=None):
        self._previous = []
        self._function = function
        if function is not None:
            functools.update_wrapper(self, function)

    def __enter__(self):
        self._previous.append(_grad_mode.enabled)
        _grad_mode.enabled = self.enabled
        return self

    def __exit__(self, *exc):
        _grad_mode.enabled = self._previous.pop()
        return False

    def __call__(self, *args, **kwargs):
        if self._function is not None:  # used bare: @ta.no_grad
            with type(self)():
                return self._function(*args, **kwargs)
        (function,) = args  # used with parentheses: @ta.no_grad()
        return type(self)(function)

    def __get__(self, instance, owner=None):
        """On a method, bind like a function does: model.predict(x) passes model as self."""
        if instance is None or self._function is None:
            return self
        return functools.partial(self.__call__, instance)


class enable_grad(no_grad):
    """Build the graph again inside a `no_grad()` block."""

    enabled = True
