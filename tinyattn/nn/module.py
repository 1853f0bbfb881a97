"""`Module` and `Parameter`: how layers hold their weights, as in PyTorch.

Assigning a Parameter or a Module to an attribute registers it, so `parameters()`,
`state_dict()`, `train()` and friends find everything by walking the attributes, with dotted
names ("encoder.rnn.weight_ih_l0") that match PyTorch's for the same model. A state_dict
therefore crosses to PyTorch's model of the same shape and back.

In reading order: registering and calling; walking the tree; saving and loading (state_dict);
modes, dtypes, apply and printing. The containers (Sequential, ModuleList, ModuleDict) are
containers.py.
"""
from collections import OrderedDict
from collections.abc import Mapping

import numpy as np

from ..autograd.tensor import Tensor, target_dtype



class Parameter(Tensor):
    """A Tensor that a Module trains: requires_grad=True unless told otherwise."""

    __slots__ = ()

    def __init__(self, data, requires_grad=True):
        super().__init__(data.data if isinstance(data, Tensor) else data)
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


class Module:
    """Base class of every layer: subclass it, set Parameters and Modules in __init__, write forward."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_buffers", [])  # names of attributes that are buffers
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                f"{type(self).__name__}: call super().__init__() before assigning {name!r}"
            )
        kind = self._parameters if isinstance(value, Parameter) else self._modules if isinstance(value, Module) else None
        for registry in (self._parameters, self._modules):
            if registry is not kind:
                registry.pop(name, None)
        if kind is not None:
            kind[name] = value  # a name already there keeps its place in parameters() and state_dict(), as PyTorch
        if name in self._buffers and (kind is not None or not isinstance(value, np.ndarray)):
            self._buffers.remove(name)  # an array put in a buffer's place stays that buffer
        object.__setattr__(self, name, value)

    def register_buffer(self, name, array):
        """An array that belongs to the module's state (saved, loaded) but is not trained."""
        self.__setattr__(name, array)
        if name not in self._buffers:
            self._buffers.append(name)

    # PyTorch spellings this module does not take, with what to write instead (see Attention).
    keyword_hints = {}

    def __call__(self, *args, **kwargs):
        for key in kwargs:
            if key in self.keyword_hints:
                raise TypeError(f"{type(self).__name__}: no argument {key}=; {self.keyword_hints[key]}")
        self._check_input_dtypes(args)
        return self.forward(*args, **kwargs)

    def _check_input_dtypes(self, args):
        """A float input of another dtype than this module's own parameters is an error naming both."""
        param = next(iter(self._parameters.values()), None)  # its own first, else its first sub-module's
        param = param if param is not None else next((p for _, p in self.named_parameters()), None)
        if param is None:
            return
        dtype = param.data.dtype
        for arg in args:
            for tensor in (arg if isinstance(arg, (tuple, list)) else (arg,)):
                if isinstance(tensor, Tensor) and tensor.data.dtype.kind == "f" and tensor.data.dtype != dtype:
                    convert = ".float()" if dtype == np.float32 else ".double()"
                    raise TypeError(f"{type(self).__name__}: the input is {tensor.data.dtype}, the layer's parameters "
                                    f"{dtype}; convert the input with {convert} or the model with "
                                    f"{'.double()' if convert == '.float()' else '.float()'}")

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    # --- walking the tree ------------------------------------------------------------
    def named_modules(self, prefix=""):
        """(dotted name, module) for this module and every module inside it, this one first (name "")."""
        yield prefix, self
        for name, module in self._modules.items():
            yield from module.named_modules(f"{prefix}.{name}" if prefix else name)

    def children(self):
        """The modules registered directly on this one, in the order they were set."""
        return iter(self._modules.values())

    def modules(self):
        """This module and every module inside it."""
        return (module for _, module in self.named_modules())

    def named_parameters(self, prefix=""):
        """(dotted name, Parameter) for every parameter, each shared one once."""
        seen = set()
        for module_name, module in self.named_modules(prefix):
            for name, param in module._parameters.items():
                if id(param) not in seen:
                    seen.add(id(param))
                    yield (f"{module_name}.{name}" if module_name else name), param

    def parameters(self):
        """Every Parameter of this module and the modules inside it, each once (a list)."""
        return [param for _, param in self.named_parameters()]

    def zero_grad(self, set_to_none=True):
        """Set every parameter's .grad to None (PyTorch 2's default), or to zeros with set_to_none=False."""
        zero_grads(self.parameters(), set_to_none)

    # --- saving and loading: the arrays a checkpoint carries ---------------------------
    def _all_named_parameters(self):
        """(dotted name, Parameter) under every name, a tied (shared) parameter once per name."""
        for module_name, module in self.named_modules():
            for name, param in module._parameters.items():
                yield (f"{module_name}.{name}" if module_name else name), param

    def state_dict(self):
        """Dotted name -> a copy of each parameter's and buffer's array.

        A tied parameter (an embedding reused as the output layer) appears under each of its
        names, as in PyTorch, so the dict loads into the same model there.
        """
        state = OrderedDict((name, param.data.copy()) for name, param in self._all_named_parameters())
        for module_name, module in self.named_modules():
            for name in module._buffers:
                state[f"{module_name}.{name}" if module_name else name] = np.array(getattr(module, name))
        return state

    def load_state_dict(self, state_dict, strict=True):
        """Copy arrays into the parameters; checks everything first, so a failure changes nothing.

        Missing and unexpected keys (when strict) and shape or dtype mismatches are all listed in
        one error. Parameters keep their identity, so an optimiser holding them stays valid. A
        tied parameter loads from any one of its names.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"load_state_dict into {type(self).__name__}: expected a dict of name -> array "
                            f"(what state_dict() returns, or ta.load(path)), got {type(state_dict).__name__}")
        own = dict(self._all_named_parameters())
        buffers = {}
        for module_name, module in self.named_modules():
            for name in module._buffers:
                buffers[f"{module_name}.{name}" if module_name else name] = (module, name)
        problems = []
        if strict:
            given = {id(own[k]) for k in state_dict if k in own}
            missing = [k for k in own if k not in state_dict and id(own[k]) not in given]
            missing += [k for k in buffers if k not in state_dict]
            unexpected = [k for k in state_dict if k not in own and k not in buffers]
            if missing:
                problems.append(f"missing keys: {', '.join(missing)}")
            if unexpected:
                problems.append(f"unexpected keys: {', '.join(unexpected)}")
        updates = []
        for key, value in state_dict.items():
            target = own[key].data if key in own else getattr(*buffers[key]) if key in buffers else None
            if target is None:
                continue
            value = np.asarray(value.data if isinstance(value, Tensor) else value)
            if value.shape != target.shape:
                problems.append(f"{key}: shape {value.shape} in the file, {target.shape} in the model")
            elif value.dtype != target.dtype:
                problems.append(f"{key}: dtype {value.dtype} in the file, {target.dtype} in the model "
                                "(convert the model with .double() / .float() first)")
            else:
                updates.append((key, value))
        loaded = {}
        for key, value in updates:
            if key in own:
                first = loaded.setdefault(id(own[key]), (key, value))
                if not np.array_equal(first[1], value, equal_nan=value.dtype.kind == "f"):  # a NaN is data
                    problems.append(f"{first[0]} and {key} are one tied parameter, but differ in the file")
        if problems:
            raise RuntimeError(f"load_state_dict into {type(self).__name__}: " + "; ".join(problems))
        for key, value in updates:
            if key in own:
                own[key].data = value.copy()
            else:
                module, name = buffers[key]
                object.__setattr__(module, name, value.copy())
        return self

    # --- modes, dtypes, apply and printing -------------------------------------------
    def train(self, mode=True):
        """Training mode (dropout active) for this module and all inside it; returns self."""
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self):
        """Evaluation mode (dropout off), the same as train(False); returns self."""
        return self.train(False)

    def _to_dtype(self, dtype):
        for module in self.modules():
            for param in module._parameters.values():
                param.data = param.data.astype(dtype)
                param.grad = None
            for name in module._buffers:
                buffer = getattr(module, name)
                if buffer.dtype.kind == "f":
                    object.__setattr__(module, name, buffer.astype(dtype))
        return self

    def double(self):
        """Parameters (and float buffers) to float64, for gradcheck; returns self."""
        return self._to_dtype(np.float64)

    def float(self):
        """Parameters (and float buffers) to float32; returns self."""
        return self._to_dtype(np.float32)

    def to(self, *args, device=None, dtype=None, non_blocking=False):
        """PyTorch's module.to: to(dtype), to("cpu"), to(device, dtype), to(tensor) (its dtype); returns self.

        Only float dtypes (as PyTorch's). tinyattn runs on the CPU: "cpu" changes nothing, any other
        device is an error; non_blocking is accepted and means nothing here."""
        dtype = target_dtype(f"{type(self).__name__}.to", args, device, dtype)
        if dtype is None:
            return self
        if dtype.kind != "f":
            raise TypeError(f"{type(self).__name__}.to: parameters can only be float (as PyTorch's Module.to), "
                            f"got {dtype}; use ta.float32 or ta.float64")
        return self._to_dtype(dtype)

    def apply(self, fn):
        """fn(module) on every module inside this one, children before their parent, this one last
        (PyTorch's order, so an init written for leaves sees them first); returns self."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    @property
    def fused(self):
        """Not a switch: fused nodes are on or off for every layer at once. Reading or setting it names ta.fused."""
        raise _no_fused_switch(self)

    @fused.setter
    def fused(self, value):
        raise _no_fused_switch(self)

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = [f"({name}): " + repr(module).replace("\n", "\n  ") for name, module in self._modules.items()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not lines:
            return head + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"


def zero_grads(params, set_to_none):
    """Module.zero_grad and Optimizer.zero_grad: .grad = None, or a .grad there filled with zeros in place."""
    for param in params:
        if set_to_none or param.grad is None:
            param.grad = None
        else:
            param.grad[...] = 0


def _no_fused_switch(module):
    return AttributeError(f"{type(module).__name__}: no per-module fused switch; fused nodes are turned on and off "
                          "for every layer at once: `with ta.fused(False): ...` (or TINYATTN_FUSED=0)")
