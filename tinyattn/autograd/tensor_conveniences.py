"""What a Tensor offers besides backpropagation: its size, printing, conversions to numpy, Python
and other dtypes, and PyTorch's spellings of them (size(), numel(), dim(), long(), bool(), to(), type(),
new_zeros(), clone(), detach(), t(), mT, view()). Tensor (tensor.py) inherits them, so tensor.py keeps to the graph and the ops.
"""
import re

import numpy as np

from .axes import dim_or_axis as _dim_or_axis, one_axis as _one_axis
from .errors import ShapeError


class TensorConveniences:
    __slots__ = ()  # a base of Tensor, whose instances keep their fixed slots

    def size(self, dim=None):
        """The shape as a tuple, or one axis's length: PyTorch's x.size() and x.size(0)."""
        return self.data.shape if dim is None else self.data.shape[_one_axis(dim, self.ndim, "size")]

    def numel(self):
        """How many elements (PyTorch's numel; numpy calls it size)."""
        return self.data.size

    def dim(self):
        """The number of axes, as PyTorch's x.dim() (numpy's x.ndim works too)."""
        return self.data.ndim

    def __len__(self):
        return len(self.data)

    def __repr__(self):
        body = np.array2string(self.data, separator=", ", prefix="tensor(")
        extra = ""
        if self.data.dtype not in (np.float32, np.int64, np.bool_):
            extra += f", dtype={self.data.dtype}"
        if self.grad_fn is not None:
            extra += f", grad_fn=<{self.grad_fn}>"
        elif self.requires_grad:
            extra += ", requires_grad=True"
        return f"tensor({body}{extra})"

    # --- to numpy and Python ----------------------------------------------------------------
    def numpy(self):
        """The underlying array (shared, not copied)."""
        return self.data

    def __array__(self, dtype=None, copy=None):
        """numpy's protocol: np.array(t) copies (numpy 2 passes copy=True), np.asarray(t) shares.

        Refused on a tensor that requires grad, as PyTorch refuses it: np.exp(t) would compute on
        the array and the gradient through it would be lost without a word."""
        if self.requires_grad:
            raise RuntimeError(
                f"Can't call numpy() on Tensor that requires grad (np.{'asarray' if copy is None else 'array'} "
                "or a numpy function such as np.exp was given one): numpy's result is not on the graph, so no "
                "gradient could flow back through it. Use the tensor's own op (t.exp(), t.sum(), ta.where...) "
                "to keep the gradient, or tensor.detach().numpy() for the values alone")
        array = self.data if dtype is None else self.data.astype(dtype, copy=False)
        if copy is False and array is not self.data:
            raise ValueError(f"np.asarray(tensor, dtype={dtype}, copy=False): a {self.data.dtype} tensor "
                             "cannot be viewed as another dtype without a copy")
        return array.copy() if copy and array is self.data else array

    def item(self):
        """The single element as a Python number (for logging a loss: keeps no graph alive)."""
        if self.data.size != 1:
            raise ValueError(f"item: tensor of shape {self.data.shape} has {self.data.size} elements, not 1")
        return self.data.item()

    def __float__(self):
        return float(self.item())

    def __bool__(self):
        return bool(self.data)

    @_dim_or_axis
    def argmax(self, axis=None, keepdims=False):
        """Indices of the largest values (int64, no gradient); over the flattened tensor if axis is None."""
        return _tensor.wrap(np.argmax(self.data, axis=_one_axis(axis, self.ndim, "argmax"), keepdims=keepdims))

    @_dim_or_axis
    def argmin(self, axis=None, keepdims=False):
        """Indices of the smallest values (int64, no gradient); over the flattened tensor if axis is None."""
        return _tensor.wrap(np.argmin(self.data, axis=_one_axis(axis, self.ndim, "argmin"), keepdims=keepdims))

    def view(self, *shape):
        """reshape that never copies: refused where PyTorch's view is, when the layout of the
        elements (after a transpose, say) cannot be read as the new shape; then use reshape."""
        out = self.reshape(*shape)
        if self.data.size and not np.may_share_memory(out.data, self.data):
            raise RuntimeError(f"view: a tensor of shape {self.shape} laid out as it is (strides "
                               f"{self.data.strides}) cannot be viewed as {out.shape} without a copy; "
                               "use .reshape(...), which copies when it must")
        return out

    def t(self):
        """The transpose of a matrix (a 0-D or 1-D tensor as it is), as PyTorch's t()."""
        if self.ndim > 2:
            raise ValueError(f"t: expects a tensor of at most 2 dims, got shape {self.shape}; "
                             "use .transpose(dim0, dim1) or .permute(...)")
        return self.T

    @property
    def mT(self):
        """The last two dims swapped (a batch of matrices transposed), as PyTorch's x.mT."""
        if self.ndim < 2:
            raise ShapeError(f"mT: needs a matrix or a batch of matrices (2 or more dims), got shape {self.shape}; "
                             "a 1-d tensor is its own transpose")
        return self.transpose(-2, -1)

    def double(self):
        return self.to(np.float64)

    def float(self):
        return self.to(np.float32)

    def long(self):
        """An int64 copy (integers carry no gradient)."""
        return self.to(np.int64)

    def int(self):
        """An int32 copy (integers carry no gradient)."""
        return self.to(np.int32)

    def bool(self):
        """A bool copy: True where self is nonzero (a mask from 0/1 numbers: ta.ones(T, T).triu(1).bool())."""
        return self.to(np.bool_)

    def to(self, *args, dtype=None, device=None):
        """This tensor in a dtype (ta.float32, np.float64, "float64", ...) or another tensor's
        dtype: a float target keeps the gradient flowing back. PyTorch's device arguments, as
        x.to("cpu"), x.to("cpu", ta.float64), x.to(device=...): "cpu" (the only device) changes
        nothing; "cuda" and other devices are a RuntimeError saying tinyattn runs on the CPU."""
        for arg in args:
            if isinstance(arg, TensorConveniences):
                dtype = arg.dtype
            elif _is_device(arg):
                device = arg
            else:
                dtype = arg
        if len(args) > 2:
            raise TypeError(f"to: takes a device and/or a dtype, got {len(args)} arguments {args}")
        on_the_cpu(device, "to")
        if dtype is None:
            return self
        try:
            dtype = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"to: {dtype!r} is not a dtype or a device; use ta.float32, ta.float64, ta.int64, "
                            "ta.bool or 'cpu'") from None
        if dtype == self.data.dtype:
            return self
        if dtype.kind == "f" and self.data.dtype.kind == "f":
            return _tensor._ew.Cast.apply(self, dtype)
        return _tensor.wrap(self.data.astype(dtype))

    def type(self, dtype=None):
        """x.type(): the type's name as PyTorch spells it, with tinyattn's prefix
        ("tinyattn.FloatTensor"); x.type(dtype) is x.to(dtype) (also x.type("torch.DoubleTensor"))."""
        if dtype is None:
            return f"tinyattn.{_TYPE_NAMES.get(self.data.dtype, str(self.data.dtype))}"
        if isinstance(dtype, str) and dtype.rpartition(".")[2] in _TYPE_NAMES.values():
            dtype = next(d for d, name in _TYPE_NAMES.items() if name == dtype.rpartition(".")[2])
        return self.to(dtype)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        """ta.zeros(*size) in self's dtype unless `dtype` says otherwise (PyTorch's new_zeros)."""
        return self.new_full(_tensor._creation._shape(size, "new_zeros"), 0, dtype=dtype, device=device,
                             requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        """ta.ones(*size) in self's dtype unless `dtype` says otherwise (PyTorch's new_ones)."""
        return self.new_full(_tensor._creation._shape(size, "new_ones"), 1, dtype=dtype, device=device,
                             requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        """ta.full(size, fill_value) in self's dtype unless `dtype` says otherwise (PyTorch's new_full)."""
        on_the_cpu(device, "new_full")
        return _tensor._creation.full(size, fill_value, dtype=self.data.dtype if dtype is None else dtype,
                                      requires_grad=requires_grad)

    def clone(self):
        """A copy of the data that stays on the graph (the gradient passes through unchanged)."""
        if self.data.dtype.kind != "f":
            return _tensor.wrap(self.data.copy())
        return _tensor._ew.Cast.apply(self, self.data.dtype)  # astype copies; Cast's backward is the identity

    def detach(self):
        """The same data as a new leaf with no history, leaving the graph: gradients stop here."""
        return _tensor._versions.share_with_view(_tensor.wrap(self.data), self)


# PyTorch's type names (x.type()) for the dtypes tinyattn has.
_TYPE_NAMES = {np.dtype(np.float16): "HalfTensor", np.dtype(np.float32): "FloatTensor",
               np.dtype(np.float64): "DoubleTensor", np.dtype(np.int32): "IntTensor",
               np.dtype(np.int64): "LongTensor", np.dtype(np.bool_): "BoolTensor"}

# PyTorch's device names ("cuda", "cuda:0", "mps", ...): what .to() reads as a device, not a dtype.
_DEVICE = re.compile(r"(cpu|cuda|mps|xpu|xla|hip|hpu|meta|mtia|ipu|vulkan|lazy)(:\d+)?")


def _is_device(arg):
    return _DEVICE.fullmatch(str(arg)) is not None and not isinstance(arg, np.dtype)


def on_the_cpu(device, op):
    """Refuse a device other than the CPU (None and "cpu" pass), saying that tinyattn runs on the CPU."""
    if device is not None and str(device).partition(":")[0] != "cpu":
        raise RuntimeError(f"{op}: tinyattn runs on the CPU only, there is no {str(device)!r} device; leave the "
                           "tensor where it is (x.to('cpu') is x) and set device = 'cpu' where the script picks one")


def matmul(a, b):
    """a @ b, PyTorch's torch.matmul: (..., n, k) @ (..., k, m) -> (..., n, m), batch axes broadcast."""
    return a @ b if isinstance(a, _tensor.Tensor) else _tensor.Tensor.__rmatmul__(b, a)


from . import tensor as _tensor  # noqa: E402  (tensor.py imports this module before it defines Tensor)
