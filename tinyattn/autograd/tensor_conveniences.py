"""What a Tensor offers besides backpropagation: its size, printing, conversions to numpy, Python
and other dtypes, and PyTorch's spellings of them (size(), numel(), dim(), long(), to(), clone(), detach(),
t(), view()). Tensor (tensor.py) inherits them, so tensor.py keeps to the graph and the ops.
"""
import numpy as np

from .axes import one_axis as _one_axis, pytorch_names as _pytorch_names


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

    def argmax(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """Indices of the largest values (int64, no gradient); over the flattened tensor if axis is None."""
        axis, keepdims = _pytorch_names("argmax", axis, dim, keepdims, keepdim)
        return _tensor.wrap(np.argmax(self.data, axis=_one_axis(axis, self.ndim, "argmax"), keepdims=keepdims))

    def argmin(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """Indices of the smallest values (int64, no gradient); over the flattened tensor if axis is None."""
        axis, keepdims = _pytorch_names("argmin", axis, dim, keepdims, keepdim)
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

    def to(self, dtype):
        """This tensor in `dtype` (ta.float32, np.float64, "float64", ...): a float target keeps
        the gradient flowing back; "cpu" (the only device) returns self, as PyTorch's .to does."""
        if isinstance(dtype, str) and dtype == "cpu":
            return self
        try:
            dtype = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"to: {dtype!r} is not a dtype; use ta.float32, ta.float64, ta.int64 or ta.bool") from None
        if dtype == self.data.dtype:
            return self
        if dtype.kind == "f" and self.data.dtype.kind == "f":
            return _tensor._ew.Cast.apply(self, dtype)
        return _tensor.wrap(self.data.astype(dtype))

    def clone(self):
        """A copy of the data that stays on the graph (the gradient passes through unchanged)."""
        if self.data.dtype.kind != "f":
            return _tensor.wrap(self.data.copy())
        return _tensor._ew.Cast.apply(self, self.data.dtype)  # astype copies; Cast's backward is the identity

    def detach(self):
        """The same data as a new leaf with no history, leaving the graph: gradients stop here."""
        return _tensor._versions.share_with_view(_tensor.wrap(self.data), self)


def matmul(a, b):
    """a @ b, PyTorch's torch.matmul: (..., n, k) @ (..., k, m) -> (..., n, m), batch axes broadcast."""
    return a @ b if isinstance(a, _tensor.Tensor) else _tensor.Tensor.__rmatmul__(b, a)


from . import tensor as _tensor  # noqa: E402  (tensor.py imports this module before it defines Tensor)
