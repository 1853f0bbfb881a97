"""What a Module does besides holding weights: train/eval modes, float/double, printing.

Mixed into Module (module.py); each walks the tree with `modules()`.
"""
import numpy as np


class ModuleConveniences:
    """train/eval, float/double and the printed tree for Module."""

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

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = [f"({name}): " + repr(module).replace("\n", "\n  ") for name, module in self._modules.items()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not lines:
            return head + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"
