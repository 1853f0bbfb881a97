"""`Tensor`: a numpy array that remembers how it was made, so it can be differentiated.

A tensor holds `.data` (a numpy array), `.requires_grad`, and, once `backward()` has run,
`.grad` (an array of the same shape and dtype). A tensor made by an op also points at its
graph node (`_ctx`, see function.py); a leaf (made by the user) points at none.

dtype rules: Python float lists give float32, int lists int64, an ndarray keeps its dtype;
Python and numpy scalars never change a tensor's dtype; float32 and float64 tensors in one op
raise a TypeError (convert with .double() / .float()).
"""
import numbers

import numpy as np

from .errors import require_float
from .hooks import HookMethods
from .index_order import integers_first
from .inplace import InPlaceOps
from .tensor_conveniences import TensorConveniences
from .tensor_math import TensorMath
from .tensor_methods import TensorMethods
from . import versions as _versions
from .axes import axes as _axes, dim_or_axis as _dim_or_axis, one_axis as _one_axis


class Tensor(TensorConveniences, HookMethods, TensorMath, TensorMethods, InPlaceOps):
    """An array that remembers the op that made it (module docstring); conversions:
    tensor_conveniences.py; hooks, retain_grad, grad_fn: hooks.py; powers, exp, log, sqrt, abs,
    comparisons: tensor_math.py; PyTorch's other methods: tensor_methods.py; in-place ops: inplace.py."""
    __slots__ = ("data", "grad", "requires_grad", "_ctx", "_out_index", "_hooks", "_versions", "_earlier",
                 "__weakref__")

    # Make numpy defer to Tensor's reflected operators (ndarray * tensor -> Tensor.__rmul__).
    __array_priority__ = 1000

    def __init__(self, data, requires_grad=False, dtype=None):
        self.data = _to_array(data, dtype)
        self.grad = None
        self._ctx = None
        self._out_index = 0
        self._hooks = None  # a leaf's hooks (hooks.py); an op's output keeps them on its node
        self._versions = None  # its memory's count of in-place changes, made on first need (versions.py)
        self._earlier = None  # itself before an in-place change recorded in the graph (inplace.py)
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_(True)

    def requires_grad_(self, flag=True):
        """Ask for (or stop asking for) this tensor's gradient; returns self."""
        if flag and self.data.dtype.kind != "f":
            raise TypeError(
                f"requires_grad=True needs a floating tensor, got {self.data.dtype}; "
                "only real-valued tensors have gradients (convert it with .float() / .double())"
            )
        if not flag and self._ctx is not None:
            # Silently cutting a made tensor off its graph would drop gradients without a word.
            raise RuntimeError(f"requires_grad_(False): this tensor was made by {self.grad_fn}; only a leaf's "
                               "flag can change. For a copy without history use .detach()")
        self.requires_grad = bool(flag)
        return self

    # --- what a tensor is ---------------------------------------------------------------
    shape = property(lambda self: self.data.shape)
    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: self.data.ndim)
    is_leaf = property(lambda self: self._ctx is None)

    # --- the backward pass ----------------------------------------------------------------
    def backward(self, grad=None, retain_graph=False):
        """Compute d(self)/d(leaf) for every leaf that requires grad, into leaf.grad.

        `self` must be a scalar, or `grad` (same shape as self) gives the upstream gradient.
        The graph is freed afterwards unless retain_graph=True.
        """
        if not self.requires_grad:
            raise RuntimeError(
                "backward: this tensor does not require grad, so there is nothing to differentiate "
                "(was it made under no_grad(), or from inputs without requires_grad=True?)"
            )
        if grad is None:
            if self.data.size != 1:
                raise RuntimeError(
                    f"backward: output has shape {self.data.shape}; backward() without a gradient "
                    f"needs a scalar. Pass one of shape {self.data.shape}: y.backward(grad)"
                )
            grad = np.ones(self.data.shape, self.data.dtype)
        _engine.backward([self], [grad], retain_graph=retain_graph)

    # --- operators (the Functions live in ops_*.py) ------------------------------------
    def __add__(self, other):
        return _ew.Add.apply(*_pair(self, other))

    def __radd__(self, other):
        return _ew.Add.apply(*_pair(other, self))

    def __sub__(self, other):
        return _ew.Sub.apply(*_pair(self, other))

    def __rsub__(self, other):
        return _ew.Sub.apply(*_pair(other, self))

    def __mul__(self, other):
        return _ew.Mul.apply(*_pair(self, other))

    def __rmul__(self, other):
        return _ew.Mul.apply(*_pair(other, self))

    def __truediv__(self, other):
        return _ew.Div.apply(*_pair(self, other, true_divide=True))

    def __rtruediv__(self, other):
        return _ew.Div.apply(*_pair(other, self, true_divide=True))

    def __neg__(self):
        return _ew.Neg.apply(self)

    def __matmul__(self, other):
        return _nn.MatMul.apply(*_pair(self, other))

    def __rmatmul__(self, other):
        return _nn.MatMul.apply(*_pair(other, self))

    __hash__ = object.__hash__

    def __getitem__(self, index):
        index = _raw_index(index)
        two_steps = integers_first(index)  # t[0, :, idx] in PyTorch's order, not numpy's
        if two_steps is not None:
            return self[two_steps[0]][two_steps[1]]
        return _versions.share_with_view(_shape.GetItem.apply(self, index), self)

    # --- methods ------------------------------------------------------------------------
    def tanh(self):
        """tanh element-wise, same shape; dL/dx = g * (1 - tanh(x)^2). Integer input becomes float32."""
        return _ew.Tanh.apply(_floating(self))

    def sigmoid(self):
        """1 / (1 + e^-x) element-wise, same shape; dL/dx = g * y (1 - y). Integer input becomes float32."""
        return _ew.Sigmoid.apply(_floating(self))

    def relu(self):
        """max(x, 0) element-wise, same shape and dtype (NaN stays NaN); dL/dx = g where x > 0."""
        return _ew.Relu.apply(self)

    # Reductions take numpy's axis= / keepdims= or PyTorch's dim= / keepdim= (axes.dim_or_axis).
    @_dim_or_axis
    def sum(self, axis=None, keepdims=False):
        """Sum over `axis` (an int, a tuple, or None for all) -> the shape without those axes (kept as 1 with keepdims)."""
        return _reduce.Sum.apply(self, None if axis is None else _axes(axis, self.ndim, "sum"), keepdims)

    @_dim_or_axis
    def mean(self, axis=None, keepdims=False):
        """Mean over `axis` (an int, a tuple, or None for all) of a float tensor, shaped as sum's result."""
        require_float("mean", x=self.data)  # as PyTorch: the mean of integers has no dtype to be in
        return _reduce.Mean.apply(self, None if axis is None else _axes(axis, self.ndim, "mean"), keepdims)

    def reshape(self, *shape):
        """The same elements in `shape` (one -1 allowed), copied only when the layout needs it."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _versions.share_with_view(_shape.Reshape.apply(self, shape), self)

    def transpose(self, axis_a=-2, axis_b=-1):
        """Swap two axes (PyTorch's transpose(dim0, dim1)); `.T` reverses them all."""
        order = list(range(self.ndim))
        a, b = _axes(axis_a, self.ndim, "transpose")[0], _axes(axis_b, self.ndim, "transpose")[0]
        order[a], order[b] = order[b], order[a]
        return self.permute(order)

    def permute(self, *order):
        """Axes reordered: out.shape[i] = self.shape[order[i]] (PyTorch's permute, numpy's transpose)."""
        if len(order) == 1 and isinstance(order[0], (tuple, list)):
            order = tuple(order[0])
        return _versions.share_with_view(_shape.Permute.apply(self, _axes(order, self.ndim, "permute")), self)

    @property
    def T(self):
        return self.permute(tuple(reversed(range(self.ndim))))

    @_dim_or_axis
    def softmax(self, axis=-1, mask=None):
        """exp(x) / sum(exp(x)) along `axis`, same shape; mask (bool, broadcasting to x) True = may attend."""
        return _nn.Softmax.apply(self, _one_axis(axis, self.ndim, "softmax"), _raw(mask))

    @_dim_or_axis
    def log_softmax(self, axis=-1):
        """x - log(sum(exp(x))) along `axis`, same shape (stable for large x)."""
        return _log_softmax.LogSoftmax.apply(self, _one_axis(axis, self.ndim, "log_softmax"))

    def masked_fill(self, mask, value):
        """Put `value` where `mask` is True (as PyTorch); those places get no gradient."""
        if isinstance(value, Tensor) and value.ndim == 0 and not value.requires_grad:
            value = value.item()
        if not isinstance(value, (numbers.Real, np.number, np.bool_)):
            raise TypeError(f"masked_fill: value must be a number, got {value!r} ({type(value).__name__})")
        if self.data.dtype.kind != "f" and not float(value).is_integer():
            raise TypeError(f"masked_fill: cannot put {value} into a {self.data.dtype} tensor")
        return _shape.MaskedFill.apply(self, _bool_mask(mask, "masked_fill"), value)

_new_instance = object.__new__  # Tensor.__new__(Tensor) is the same call, ~60 ns slower: every op makes one


def wrap(array):
    """A Tensor around `array` as it is (no copy, no dtype rules): how ops return results."""
    tensor = _new_instance(Tensor)
    tensor.data = array if isinstance(array, np.ndarray) else np.asarray(array)
    tensor.grad = None
    tensor.requires_grad = False
    tensor._ctx = None
    tensor._out_index = 0
    tensor._hooks = None
    tensor._versions = None
    tensor._earlier = None
    return tensor


def tensor(data, requires_grad=False, dtype=None):
    """A new leaf tensor holding a copy of `data` (see the dtype rules at the top)."""
    return Tensor(data, requires_grad=requires_grad, dtype=dtype)


def _floating(x):
    """x, or a float32 copy of an int or bool x: PyTorch's rule for exp, log, sqrt, tanh, sigmoid, pow."""
    return x if x.data.dtype.kind == "f" else wrap(x.data.astype(np.float32))


def _raw(value):
    return value.data if isinstance(value, Tensor) else value


def _raw_index(index):
    if isinstance(index, tuple):
        for part in index:  # a plain loop first: an index rarely holds a Tensor
            if isinstance(part, Tensor):
                return tuple(_raw(part) for part in index)
        return index
    return _raw(index)


def _bool_mask(mask, op):
    mask = np.asarray(_raw(mask))
    if mask.dtype != np.bool_:
        raise TypeError(f"{op}: the mask must be bool (True = fill), got {mask.dtype}")
    return mask


from . import engine as _engine  # noqa: E402  (these modules need Tensor defined first)
from .promotion import pair as _pair, to_array as _to_array  # noqa: E402
from . import ops_elementwise as _ew  # noqa: E402
from . import ops_nn as _nn  # noqa: E402
from . import ops_reduce as _reduce  # noqa: E402
from . import ops_shape as _shape  # noqa: E402
from . import compare as _compare, ops_select as _select, shaping as _shaping, statistics as _statistics  # noqa: E402
from . import creation as _creation, ops_log_softmax as _log_softmax, ops_where as _where, sampling as _sampling  # noqa: E402
