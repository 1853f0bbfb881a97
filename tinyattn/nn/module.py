"""`Module` and `Parameter`: how layers hold their weights, as in PyTorch.

Assigning a Parameter or a Module to an attribute registers it, so `parameters()`,
`state_dict()`, `train()` and friends find everything by walking the attributes, with dotted
names ("encoder.rnn.weight_ih_l0") that match PyTorch's for the same model.
"""
from collections import OrderedDict

import numpy as np

from ..autograd.tensor import Tensor
from .module_conveniences import ModuleConveniences
from .module_state import ModuleState


class Parameter(Tensor):
    """A Tensor that a Module trains: requires_grad=True unless told otherwise."""

    __slots__ = ()

    def __init__(self, data, requires_grad=True):
        super().__init__(data.data if isinstance(data, Tensor) else data)
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


class Module(ModuleState, ModuleConveniences):
    """Base class of every layer: subclass it, set Parameters and Modules in __init__, write forward.

    Saving and loading (state_dict) are in module_state.py; train/eval, dtypes and printing in
    module_conveniences.py; the containers (Sequential, ModuleList, ModuleDict) in containers.py."""

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


def zero_grads(params, set_to_none):
    """Module.zero_grad and Optimizer.zero_grad: .grad = None, or a .grad there filled with zeros in place."""
    for param in params:
        if set_to_none or param.grad is None:
            param.grad = None
        else:
            param.grad[...] = 0
