"""A Module's state: `state_dict()` and `load_state_dict()`, the arrays a checkpoint carries.

Names are the dotted ones `named_modules()` walks ("encoder.rnn.weight_ih_l0"), so a state_dict
crosses to PyTorch's model of the same shape and back. Mixed into Module (module.py).
"""
from collections import OrderedDict
from collections.abc import Mapping

import numpy as np

from ..autograd.tensor import Tensor


class ModuleState:
    """state_dict / load_state_dict for Module."""

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
