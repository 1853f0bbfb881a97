"""What a Module does besides holding weights: train/eval modes, float/double/to, apply, printing.

Mixed into Module (module.py); each walks the tree with `modules()`.
"""
import numpy as np

from ..autograd.tensor import on_the_cpu

DEVICES = ("cpu", "cuda", "mps", "xpu", "meta")  # the names PyTorch code passes to .to()


class ModuleConveniences:
    """train/eval, float/double/to, apply and the printed tree for Module."""

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
        for arg in args:
            if isinstance(arg, str) and arg.split(":")[0] in DEVICES:
                device = arg
            else:
                dtype = getattr(arg, "dtype", arg) if hasattr(arg, "requires_grad") else arg  # a tensor: its dtype
        on_the_cpu(device, f"{type(self).__name__}.to")
        if dtype is None:
            return self
        try:
            dtype = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"{type(self).__name__}.to: {dtype!r} is neither a device nor a dtype; "
                            "use ta.float32 or ta.float64") from None
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


def _no_fused_switch(module):
    return AttributeError(f"{type(module).__name__}: no per-module fused switch; fused nodes are turned on and off "
                          "for every layer at once: `with ta.fused(False): ...` (or TINYATTN_FUSED=0)")
