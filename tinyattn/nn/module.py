"""`Module` and `Parameter`: how layers hold their weights, as in PyTorch.

Assigning a Parameter or a Module to an attribute registers it, so `parameters()`,
`state_dict()`, `train()` and friends find everything by walking the attributes, with dotted
names ("encoder.rnn.weight_ih_l0") that match PyTorch's for the same model.
"""
from collections import OrderedDict
from collections.abc import Mapping

import numpy as np

from ..autograd.tensor import Tensor


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

    def zero_grad(self):
        """Set every parameter's .grad to None."""
        for param in self.parameters():
            param.grad = None

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

    # --- state ---------------------------------------------------------------------------
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

    # --- printing ----------------------------------------------------------------------
    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = [f"({name}): " + repr(module).replace("\n", "\n  ") for name, module in self._modules.items()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not lines:
            return head + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"


class ModuleList(Module):
    """A list of modules registered as "0", "1", ... (PyTorch's ModuleList); it has no forward."""

    def __init__(self, modules=()):
        super().__init__()
        for module in modules:
            self.append(module)

    def append(self, module):
        """Register `module` under the next index; returns self."""
        setattr(self, str(len(self)), module)
        return self

    def __getitem__(self, index):
        return list(self._modules.values())[index]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class ModuleDict(Module):
    """Modules under string keys, registered as "key" (PyTorch's ModuleDict): parameters are named
    "key.weight", ..., in insertion order; it has no forward."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def update(self, modules):
        """Add (key, module) pairs from a dict or an iterable of pairs, in order."""
        for key, module in (modules.items() if hasattr(modules, "items") else modules):
            self[key] = module

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        if not isinstance(key, str) or not key or "." in key or hasattr(type(self), key):
            raise KeyError(f"ModuleDict: a key must be a non-empty string without '.' that is not a method's "
                           f"name (as PyTorch), got {key!r}")
        if not isinstance(module, Module):
            raise TypeError(f"ModuleDict: {key!r} must be a Module, got {type(module).__name__}")
        setattr(self, key, module)

    def __delitem__(self, key):
        del self._modules[key]
        object.__delattr__(self, key)

    def __contains__(self, key):
        return key in self._modules

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def keys(self):
        """The keys, in the order they were added."""
        return self._modules.keys()

    def items(self):
        """(key, module) pairs, in the order they were added."""
        return self._modules.items()

    def values(self):
        """The modules, in the order they were added."""
        return self._modules.values()


class Sequential(ModuleList):
    """Modules applied one after another: Sequential(Linear(4, 8), ReLU(), Linear(8, 2))."""

    def __init__(self, *modules):
        super().__init__(modules)

    def forward(self, x):
        for module in self:
            x = module(x)
        return x
