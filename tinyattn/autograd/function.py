"""`Function`: one differentiable step, with its forward and its backward side by side.

A Function's `forward(ctx, *arrays)` computes numpy arrays from numpy arrays; its
`backward(ctx, *grads)` turns the gradient of each output into the gradient of each input
(the vector-Jacobian product). `MyFn.apply(*args)` unwraps Tensors, runs forward, and, when a
gradient is wanted, records a graph node: the `ctx` object itself, which remembers the inputs
and whatever forward saved. The backward walk (engine.py) visits these nodes in reverse.
"""
import functools

import numpy as np

_grad_enabled = True


def is_grad_enabled():
    """True unless inside `no_grad()`."""
    return _grad_enabled


class no_grad:
    """Build no graph inside this block or decorated function: for inference and updates.

    `with ta.no_grad():`, `@ta.no_grad()` and `@ta.no_grad` all work, nested or recursive:
    each entry remembers the state it found on a stack and each exit restores it.
    """

    enabled = False  # what the block sets

    def __init__(self, function=None):
        self._previous = []
        self._function = function
        if function is not None:
            functools.update_wrapper(self, function)

    def __enter__(self):
        global _grad_enabled
        self._previous.append(_grad_enabled)
        _grad_enabled = self.enabled
        return self

    def __exit__(self, *exc):
        global _grad_enabled
        _grad_enabled = self._previous.pop()
        return False

    def __call__(self, *args, **kwargs):
        if self._function is not None:  # used bare: @ta.no_grad
            with self:
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


class Context:
    """What one call of a Function remembers; it is also the call's node in the graph.

    forward may set any attribute on it (ctx.axis = axis) and save arrays for backward with
    `ctx.save_for_backward(*arrays)`. The engine adds the links it walks:
      fn               the Function class
      inputs           the Tensor arguments that need a gradient, as (position, tensor) pairs
      needs_input_grad one bool per argument, so backward can skip work nobody asked for
      output_meta      (shape, dtype) of each output, to stand in zeros for an unused output
    and, only when asked for:
      hooks            {output index: {key: fn}}: hooks of the outputs (hooks.py)
      last_grads       each output's gradient in the last backward(retain_graph=True)
    """

    freed = False
    hooks = None
    last_grads = None

    def save_for_backward(self, *arrays):
        self._saved = arrays

    @property
    def saved_tensors(self):
        if self.freed:
            raise RuntimeError(_freed_message(self))
        return self._saved

    def release(self):
        """Drop everything backward needed, keeping only what names the node in an error."""
        name = self.fn.__name__
        self.__dict__.clear()
        self.fn_name = name
        self.freed = True


def _freed_message(ctx):
    name = getattr(ctx, "fn_name", None) or ctx.fn.__name__
    return (
        f"backward through {name} a second time: its graph was freed by the first backward(). "
        "Pass retain_graph=True to the first backward() if you need to go through it again."
    )


class Function:
    """Base class of every differentiable op: subclass it and write two static methods.

        forward(ctx, *args)     arrays in for Tensor arguments (others pass through as they are);
                                returns one array or a tuple of arrays
        backward(ctx, *grads)   one gradient per output; returns one per input (None for inputs
                                that are not Tensors or need none)
    """

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args):
        arrays = []
        inputs = []          # (position, tensor) of arguments that need a gradient
        float_dtype = None   # the one floating dtype this op's Tensor arguments may share
        for position, arg in enumerate(args):
            if isinstance(arg, Tensor):
                data = arg.data
                arrays.append(data)
                if data.dtype.kind == "f":
                    if float_dtype is None:
                        float_dtype = data.dtype
                    elif data.dtype != float_dtype:
                        raise TypeError(
                            f"{cls.__name__}: {float_dtype} and {data.dtype} tensors in one op; "
                            "convert one with .double() or .float() first"
                        )
                if arg.requires_grad:
                    inputs.append((position, arg))
            else:
                arrays.append(arg)

        ctx = Context()
        record = _grad_enabled and bool(inputs)
        if record:
            needs = [False] * len(args)
            for position, _ in inputs:
                needs[position] = True
            ctx.needs_input_grad = tuple(needs)
        else:
            ctx.needs_input_grad = (False,) * len(args)

        result = cls.forward(ctx, *arrays)
        if isinstance(result, list):
            result = tuple(result)

        if isinstance(result, tuple):
            outputs = tuple(wrap(array) for array in result)
        else:
            outputs = wrap(result)
        if not record:
            return outputs

        ctx.fn = cls
        ctx.inputs = inputs
        if isinstance(result, tuple):
            ctx.output_meta = tuple((o.data.shape, o.data.dtype) for o in outputs)
            for index, out in enumerate(outputs):
                _attach(out, ctx, index)
        else:
            ctx.output_meta = ((outputs.data.shape, outputs.data.dtype),)
            _attach(outputs, ctx, 0)
        return outputs


def _attach(tensor, ctx, index):
    # Only floating outputs carry a gradient (an argmax or a mask never does).
    if tensor.data.dtype.kind == "f":
        tensor.requires_grad = True
        tensor._ctx = ctx
        tensor._out_index = index


def zeros_for_output(shape, dtype):
    """A read-only zero gradient for an output nobody used (a broadcast view: no memory)."""
    return np.broadcast_to(np.zeros((), dtype), shape)


from .tensor import Tensor, wrap  # noqa: E402  (tensor.py imports the ops, which import us)
