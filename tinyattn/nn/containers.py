"""Modules that hold modules: ModuleList, ModuleDict and Sequential, as in PyTorch.

Each registers its members as attributes ("0", "1", ... or the dict's keys), so parameters() and
state_dict() name them as PyTorch does ("layers.0.weight").
"""
from .module import Module


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
        if not isinstance(key, str):
            raise TypeError(f"ModuleDict: a key must be a string (as PyTorch), got {type(key).__name__} {key!r}; "
                            f"write d[{str(key)!r}] = module")
        if not key or "." in key or hasattr(type(self), key):
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
    """Modules applied one after another: Sequential(Linear(4, 8), ReLU(), Linear(8, 2)), registered
    as "0", "1", ...; or, as PyTorch, Sequential(OrderedDict([("fc1", Linear(4, 8)), ...])), registered
    under the dict's names (parameters "fc1.weight", ...)."""

    def __init__(self, *modules):
        if len(modules) == 1 and isinstance(modules[0], dict):
            super().__init__()
            for name, module in modules[0].items():
                ModuleDict.__setitem__(self, name, module)  # the same rules on names as ModuleDict's keys
            return
        super().__init__(modules)

    def forward(self, x):
        for module in self:
            x = module(x)
        return x
