"""`Tensor`: a numpy array that remembers how it was made, so it can be differentiated.

A tensor holds `.data` (a numpy array), `.requires_grad`, and, once `backward()` has run,
`.grad` (an array of the same shape and dtype). A tensor made by an op also points at its
graph node (`_ctx`, see function.py); a leaf (made by the user) points at none.

dtype rules: Python float lists give float32, int lists int64, an ndarray keeps its dtype;
Python and numpy scalars never change a tensor's dtype; float32 and float64 tensors in one op
raise a TypeError (convert with .double() / .float()).

Every method checks its arguments and calls a rule: a Function of rules_elementwise.py,
rules_reduce.py, rules_shape.py or rules_nn.py, whose backward sits under its forward. In-place
methods come from inplace.py, hooks and retain_grad from engine.py. After the class: how two
operands become arrays of one dtype (promotion) and PyTorch's order for mixed indices.
"""
import numbers
import re

import numpy as np

from . import creation, engine, inplace, rules_elementwise, rules_nn, rules_reduce, rules_shape
from .dtypes import ShapeError, axes, dim_or_axis, one_axis, reduced_axes, require_float
from .engine import HookMethods
from .inplace import InPlaceOps


class Tensor(InPlaceOps, HookMethods):
    """An array that remembers the op that made it (module docstring). The class reads in this
    order: what a tensor is, backward, the operators, indexing, the methods by kind (arithmetic,
    reductions, shapes, math, comparisons), then conversions and printing. In-place methods:
    inplace.py; hooks, retain_grad, grad_fn: engine.py."""
    __slots__ = ("data", "grad", "requires_grad", "_ctx", "_out_index", "_hooks", "_versions", "_earlier",
                 "__weakref__")

    # Make numpy defer to Tensor's reflected operators (ndarray * tensor -> Tensor.__rmul__).
    __array_priority__ = 1000

    def __init__(self, data, requires_grad=False, dtype=None):
        self.data = to_array(data, dtype)
        self.grad = None
        self._ctx = None
        self._out_index = 0
        self._hooks = None  # a leaf's hooks (engine.py); an op's output keeps them on its node
        self._versions = None  # its memory's count of in-place changes, made on first need (inplace.py)
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
        engine.backward([self], [grad], retain_graph=retain_graph)

    # --- operators (the Functions live in ops_*.py) ------------------------------------
    def __add__(self, other):
        return rules_elementwise.Add.apply(*pair(self, other))

    def __radd__(self, other):
        return rules_elementwise.Add.apply(*pair(other, self))

    def __sub__(self, other):
        return rules_elementwise.Sub.apply(*pair(self, other))

    def __rsub__(self, other):
        return rules_elementwise.Sub.apply(*pair(other, self))

    def __mul__(self, other):
        return rules_elementwise.Mul.apply(*pair(self, other))

    def __rmul__(self, other):
        return rules_elementwise.Mul.apply(*pair(other, self))

    def __truediv__(self, other):
        return rules_elementwise.Div.apply(*pair(self, other, true_divide=True))

    def __rtruediv__(self, other):
        return rules_elementwise.Div.apply(*pair(other, self, true_divide=True))

    def __neg__(self):
        return rules_elementwise.Neg.apply(self)

    def __matmul__(self, other):
        return rules_nn.MatMul.apply(*pair(self, other))

    def __rmatmul__(self, other):
        return rules_nn.MatMul.apply(*pair(other, self))

    __hash__ = object.__hash__

    def __getitem__(self, index):
        index = _raw_index(index)
        two_steps = integers_first(index)  # t[0, :, idx] in PyTorch's order, not numpy's
        if two_steps is not None:
            return self[two_steps[0]][two_steps[1]]
        return inplace.share_with_view(rules_shape.GetItem.apply(self, index), self)

    # --- methods ------------------------------------------------------------------------
    def tanh(self):
        """tanh element-wise, same shape; dL/dx = g * (1 - tanh(x)^2). Integer input becomes float32."""
        return rules_elementwise.Tanh.apply(_floating(self))

    def sigmoid(self):
        """1 / (1 + e^-x) element-wise, same shape; dL/dx = g * y (1 - y). Integer input becomes float32."""
        return rules_elementwise.Sigmoid.apply(_floating(self))

    def relu(self):
        """max(x, 0) element-wise, same shape and dtype (NaN stays NaN); dL/dx = g where x > 0."""
        return rules_elementwise.Relu.apply(self)

    # Reductions take numpy's axis= / keepdims= or PyTorch's dim= / keepdim= (axes.dim_or_axis).
    @dim_or_axis
    def sum(self, axis=None, keepdims=False):
        """Sum over `axis` (an int, a tuple, or None for all) -> the shape without those axes (kept as 1 with keepdims)."""
        return rules_reduce.Sum.apply(self, reduced_axes(axis, self.ndim, "sum"), keepdims)

    @dim_or_axis
    def mean(self, axis=None, keepdims=False):
        """Mean over `axis` (an int, a tuple, or None for all) of a float tensor, shaped as sum's result."""
        require_float("mean", x=self.data)  # as PyTorch: the mean of integers has no dtype to be in
        return rules_reduce.Mean.apply(self, reduced_axes(axis, self.ndim, "mean"), keepdims)

    def reshape(self, *shape):
        """The same elements in `shape` (one -1 allowed), copied only when the layout needs it."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return inplace.share_with_view(rules_shape.Reshape.apply(self, shape), self)

    def transpose(self, dim0=-2, dim1=-1):
        """Swap two axes (PyTorch's transpose(dim0, dim1)); `.T` reverses them all."""
        order = list(range(self.ndim))
        a, b = axes(dim0, self.ndim, "transpose")[0], axes(dim1, self.ndim, "transpose")[0]
        order[a], order[b] = order[b], order[a]
        return self.permute(order)

    def permute(self, *order):
        """Axes reordered: out.shape[i] = self.shape[order[i]] (PyTorch's permute, numpy's transpose)."""
        if len(order) == 1 and isinstance(order[0], (tuple, list)):
            order = tuple(order[0])
        return inplace.share_with_view(rules_shape.Permute.apply(self, axes(order, self.ndim, "permute")), self)

    @property
    def T(self):
        return self.permute(tuple(reversed(range(self.ndim))))

    @dim_or_axis
    def softmax(self, axis=-1, mask=None):
        """exp(x) / sum(exp(x)) along `axis`, same shape; mask (bool, broadcasting to x) True = may attend."""
        return rules_nn.Softmax.apply(self, one_axis(axis, self.ndim, "softmax"), _raw(mask))

    @dim_or_axis
    def log_softmax(self, axis=-1):
        """x - log(sum(exp(x))) along `axis`, same shape (stable for large x)."""
        return rules_nn.LogSoftmax.apply(self, one_axis(axis, self.ndim, "log_softmax"))

    def masked_fill(self, mask, value):
        """Put `value` where `mask` is True (as PyTorch); those places get no gradient."""
        if isinstance(value, Tensor) and value.ndim == 0 and not value.requires_grad:
            value = value.item()
        if not isinstance(value, (numbers.Real, np.number, np.bool_)):
            raise TypeError(f"masked_fill: value must be a number, got {value!r} ({type(value).__name__})")
        if self.data.dtype.kind != "f" and not float(value).is_integer():
            raise TypeError(f"masked_fill: cannot put {value} into a {self.data.dtype} tensor")
        return rules_shape.MaskedFill.apply(self, _bool_mask(mask, "masked_fill"), value)


    # ---- PyTorch's method spellings ---------------------------------------------------------------
    # x.add/sub/mul/div/neg/pow, max/min with PyTorch's meaning, clamp, var/std, logsumexp, norm,
    # cumsum, gather, topk, the shape methods and contiguous: each calls the function that composes
    # it in rules_reduce.py or rules_shape.py (spellings.py says what to write for a name tinyattn lacks).

    # --- arithmetic as methods (PyTorch's spellings of the operators) --------------------------
    def add(self, other, *, alpha=1):
        """self + alpha * other (PyTorch's add)."""
        return self + inplace.scaled("add", other, alpha)

    def sub(self, other, *, alpha=1):
        """self - alpha * other (PyTorch's sub)."""
        return self - inplace.scaled("sub", other, alpha)

    def mul(self, other):
        """self * other (PyTorch's mul)."""
        return self * other

    def div(self, other, *, rounding_mode=None):
        """self / other; rounding_mode "trunc" or "floor" rounds the quotient, in the operands' dtype
        (int32 // int32 is int32, as PyTorch), with gradient 0 (its slope almost everywhere)."""
        if rounding_mode is None:
            return self / other
        if rounding_mode not in ("trunc", "floor"):
            raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
        return rules_elementwise.RoundedDiv.apply(*pair(self, other), rounding_mode)

    def neg(self):
        """-self (PyTorch's neg)."""
        return -self

    def pow(self, exponent):
        """self ** exponent (a number or a tensor: then the exponent gets its gradient too)."""
        return self ** exponent

    # --- larger and smaller (rules_reduce.py) ----------------------------------------------------------
    def max(self, dim=None, keepdim=None, *, axis=None, keepdims=None):
        """PyTorch's meanings: x.max() is the largest entry (0-d; tied entries share the gradient);
        x.max(dim, keepdim=False) is a namedtuple (values, indices), the gradient going to the
        entry `indices` names; x.max(other) is ta.maximum(x, other). numpy's spelling
        x.max(axis=..., keepdims=...) gives the values only (axis may be a tuple)."""
        return rules_reduce.max_or_min(self, "max", dim, keepdim, axis, keepdims)

    def min(self, dim=None, keepdim=None, *, axis=None, keepdims=None):
        """As max, for the smallest: x.min(), x.min(dim) -> (values, indices), x.min(axis=...) -> values."""
        return rules_reduce.max_or_min(self, "min", dim, keepdim, axis, keepdims)

    def maximum(self, other):
        """ta.maximum(self, other): the larger element-wise; a tie splits the gradient in half."""
        return rules_reduce.maximum(self, other)

    def minimum(self, other):
        """ta.minimum(self, other): the smaller element-wise; a tie splits the gradient in half."""
        return rules_reduce.minimum(self, other)

    def clamp(self, min=None, max=None):
        """self limited to [min, max] element-wise (numbers or tensors); see compare.clamp. Also x.clip."""
        return rules_reduce.clamp(self, min, max)

    clip = clamp

    # --- statistics (rules_reduce.py) --------------------------------------------------------------
    @dim_or_axis
    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        """The variance over `dim` (None: all), correction=1 by default; x.var(dim, False) is the biased one."""
        return rules_reduce.var(self, dim, unbiased, keepdim, correction=correction)

    @dim_or_axis
    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        """The standard deviation: var's square root (same arguments)."""
        return rules_reduce.std(self, dim, unbiased, keepdim, correction=correction)

    @dim_or_axis
    def logsumexp(self, dim, keepdim=False):
        """log(sum(exp(self))) over `dim`, without overflow."""
        return rules_reduce.logsumexp(self, dim, keepdim)

    @dim_or_axis
    def norm(self, p="fro", dim=None, keepdim=False):
        """The p-norm over `dim` (None: all): p = 'fro'/2 (default), 1, inf, -inf or any p > 0."""
        return rules_reduce.norm(self, p, dim, keepdim)

    # --- picking (rules_shape.py) -------------------------------------------------------------------
    @dim_or_axis
    def unbind(self, dim=0):
        """The slices along `dim`, as a tuple of tensors (ta.unbind)."""
        return rules_shape.unbind(self, dim)

    @dim_or_axis
    def cumsum(self, dim):
        """Running sums along `dim`, same shape."""
        return rules_shape.cumsum(self, dim)

    @dim_or_axis
    def gather(self, dim, index):
        """Entries picked along `dim` by the integer `index` (PyTorch's gather), index's shape."""
        return rules_shape.gather(self, dim, index)

    @dim_or_axis
    def topk(self, k, dim=-1, largest=True, sorted=True):
        """(values, indices) of the k largest (largest=False: smallest) along `dim`, in order."""
        return rules_shape.topk(self, k, dim, largest, sorted)

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        """Category indices drawn in proportion to self's weights, per row (ta.multinomial)."""
        return creation.multinomial(self, num_samples, replacement, generator=generator)

    def expand(self, *sizes):
        """self repeated along its size-1 dims to `sizes` without copying (-1 keeps a size)."""
        return rules_shape.expand(self, *sizes)

    # --- shapes (rules_shape.py) -------------------------------------------------------------------------
    @dim_or_axis
    def split(self, split_size_or_sections=None, dim=0, *, split_size=None):
        """Pieces along `dim`: of one size (an int; the last may be smaller) or of the sizes listed
        (PyTorch's keyword for the first argument, split_size=, works too)."""
        if split_size is not None:
            if split_size_or_sections is not None:
                raise TypeError("split: got both split_size_or_sections and split_size; they are one argument")
            split_size_or_sections = split_size
        return rules_shape.split(self, split_size_or_sections, dim)

    @dim_or_axis
    def chunk(self, chunks, dim=0):
        """`chunks` pieces along `dim` of ceil(length / chunks) each (PyTorch's chunk)."""
        return rules_shape.chunk(self, chunks, dim)

    @dim_or_axis
    def squeeze(self, dim=None):
        """Without its size-1 dims (or those of them among `dim`)."""
        return rules_shape.squeeze(self, dim)

    def flatten(self, start_dim=0, end_dim=-1):
        """Dims start_dim..end_dim merged into one."""
        return rules_shape.flatten(self, start_dim, end_dim)

    @dim_or_axis
    def unflatten(self, dim, sizes):
        """Dim `dim` split into `sizes` (one -1 allowed)."""
        return rules_shape.unflatten(self, dim, sizes)

    def repeat(self, *reps):
        """Copied reps[i] times along dim i (numpy's tile)."""
        return rules_shape.repeat(self, *reps)

    @dim_or_axis
    def repeat_interleave(self, repeats, dim=None, *, output_size=None):
        """Each entry repeated `repeats` times in place along `dim` (None: flattened): [a, a, b, b]."""
        return rules_shape.repeat_interleave(self, repeats, dim, output_size=output_size)

    @dim_or_axis
    def flip(self, dims):
        """Entries in reverse order along each of `dims`."""
        return rules_shape.flip(self, dims if not isinstance(dims, numbers.Integral) else (dims,))

    def tril(self, diagonal=0):
        """Zeros above the `diagonal`-th diagonal of the last two dims."""
        return rules_shape.tril(self, diagonal)

    def triu(self, diagonal=0):
        """Zeros below the `diagonal`-th diagonal of the last two dims."""
        return rules_shape.triu(self, diagonal)

    @dim_or_axis
    def unsqueeze(self, axis=None):
        """A new axis of size 1 at `axis` (in [-ndim - 1, ndim], as PyTorch)."""
        if axis is None or not -self.ndim - 1 <= axis <= self.ndim:
            raise ValueError(f"unsqueeze: axis {axis} is out of range for a tensor with {self.ndim} dims "
                             f"(a new axis goes at {-self.ndim - 1}..{self.ndim})")
        axis = axis if axis >= 0 else axis + self.ndim + 1
        return self.reshape(self.shape[:axis] + (1,) + self.shape[axis:])

    def contiguous(self):
        """self if its elements are laid out in row-major order already, else a row-major copy
        that stays on the graph (PyTorch's contiguous)."""
        if self.data.flags.c_contiguous:
            return self
        return self.reshape(-1).reshape(self.shape)  # flattening a strided array copies it into order


    # ---- element-wise math ------------------------------------------------------------------------
    # Powers (x ** p, p ** x, x ** tensor), abs, exp, log, sqrt, rsqrt, log2, exp2, sin ... atanh,
    # lerp and the steps (floor, ceil, round, trunc, sign), whose rules are in rules_elementwise.py;
    # then the comparisons and the logic on masks (~, logical_not/and/or): bool tensors, no gradient.

    def __pow__(self, exponent):
        if isinstance(exponent, (Tensor, np.ndarray)):
            return _pow_tensors(self, exponent)
        if not isinstance(exponent, numbers.Real):
            raise TypeError(f"pow: the exponent must be a number or a tensor, got {type(exponent).__name__}")
        if self.data.dtype.kind != "f":  # integers: as PyTorch, int ** int stays int, int ** float is float32
            if isinstance(exponent, numbers.Integral):
                if exponent < 0:
                    raise ValueError(f"pow: an integer tensor to the negative power {exponent}; "
                                     "convert it first with .float()")
                return wrap(self.data.astype(np.int64) ** int(exponent))  # integers carry no gradient
            return rules_elementwise.Pow.apply(wrap(self.data.astype(np.float32)), float(exponent))
        return rules_elementwise.Pow.apply(self, float(exponent))

    def __rpow__(self, base):
        """number ** tensor, element-wise (a float result, as exp(tensor * log(number)))."""
        if isinstance(base, np.ndarray):
            return _pow_tensors(base, self)
        if not isinstance(base, numbers.Real):
            raise TypeError(f"pow: {type(base).__name__} ** tensor needs a number, an array or a tensor as the base")
        if self.data.dtype.kind in "iu" and isinstance(base, numbers.Integral):  # int ** int stays int, as PyTorch
            if (self.data < 0).any():
                raise ValueError(f"pow: {base} ** an integer tensor with negative entries; convert it first with .float()")
            return wrap(np.power(np.int64(base), self.data.astype(np.int64)))
        return rules_elementwise.PowOfNumber.apply(_floating(self), float(base))

    def __abs__(self):
        """|x| element-wise, same shape and dtype; dL/dx = g * sign(x)."""
        return rules_elementwise.Abs.apply(self)

    abs = __abs__

    def exp(self):
        """e^x element-wise, same shape; dL/dx = g * e^x. Integer input becomes float32."""
        return rules_elementwise.Exp.apply(_floating(self))

    def log(self):
        """Natural log element-wise, same shape; dL/dx = g / x. Integer input becomes float32."""
        return rules_elementwise.Log.apply(_floating(self))

    def sqrt(self):
        """Square root element-wise, same shape; dL/dx = g / (2 sqrt(x)). Integer input becomes float32."""
        return rules_elementwise.Sqrt.apply(_floating(self))

    def rsqrt(self):
        """1 / sqrt(x) element-wise; dL/dx = -g / (2 x^1.5). Integer input becomes float32."""
        return rules_elementwise.Rsqrt.apply(_floating(self))

    def log2(self):
        """log base 2 element-wise; dL/dx = g / (x log 2). Integer input becomes float32."""
        return rules_elementwise.Log2.apply(_floating(self))

    def exp2(self):
        """2 ** x element-wise; dL/dx = g 2^x log 2. Integer input becomes float32."""
        return rules_elementwise.Exp2.apply(_floating(self))

    def sin(self):
        """sin element-wise (radians); dL/dx = g cos(x). Integer input becomes float32."""
        return rules_elementwise.Sin.apply(_floating(self))

    def cos(self):
        """cos element-wise (radians); dL/dx = -g sin(x). Integer input becomes float32."""
        return rules_elementwise.Cos.apply(_floating(self))

    def tan(self):
        """tan element-wise (radians); dL/dx = g (1 + tan(x)^2). Integer input becomes float32."""
        return rules_elementwise.Tan.apply(_floating(self))

    def sinh(self):
        """sinh element-wise; dL/dx = g cosh(x). Integer input becomes float32."""
        return rules_elementwise.Sinh.apply(_floating(self))

    def cosh(self):
        """cosh element-wise; dL/dx = g sinh(x). Integer input becomes float32."""
        return rules_elementwise.Cosh.apply(_floating(self))

    def asinh(self):
        """The inverse of sinh element-wise; dL/dx = g / sqrt(x^2 + 1). Integer input becomes float32."""
        return rules_elementwise.Asinh.apply(_floating(self))

    def acosh(self):
        """The inverse of cosh element-wise (NaN below 1); dL/dx = g / sqrt(x^2 - 1). Integers become float32."""
        return rules_elementwise.Acosh.apply(_floating(self))

    def atanh(self):
        """The inverse of tanh element-wise (NaN outside [-1, 1]); dL/dx = g / (1 - x^2). Integers become float32."""
        return rules_elementwise.Atanh.apply(_floating(self))

    def floor(self):
        """The largest whole number <= x, same dtype; zero gradient."""
        return _step(self, np.floor)

    def ceil(self):
        """The smallest whole number >= x, same dtype; zero gradient."""
        return _step(self, np.ceil)

    def trunc(self):
        """x with its fraction dropped (towards 0), same dtype; zero gradient."""
        return _step(self, np.trunc)

    def round(self, decimals=0):
        """x rounded to `decimals` places, halves to the even neighbour (PyTorch's and numpy's
        round: 0.5 -> 0, 1.5 -> 2); zero gradient."""
        if not isinstance(decimals, numbers.Integral):
            raise TypeError(f"round: decimals must be an int, got {decimals!r}")
        return _step(self, np.round if decimals == 0 else lambda a: np.round(a, int(decimals)))

    def sign(self):
        """-1, 0 or 1 as x is negative, zero or positive (0 at NaN, as PyTorch), same dtype; zero gradient.
        A bool tensor is its own sign, as PyTorch's."""
        return wrap(self.data.copy()) if self.data.dtype == np.bool_ else _step(self, rules_elementwise.sign_zero_at_nan)

    def lerp(self, end, weight):
        """self + weight * (end - self) element-wise (weight a number or a tensor; all broadcast);
        gradients to self, end and a tensor weight."""
        if not isinstance(end, Tensor):
            raise TypeError(f"lerp: end must be a Tensor, got {type(end).__name__}")
        require_float("lerp", input=self.data, end=end.data)
        if isinstance(weight, Tensor):
            require_float("lerp", weight=weight.data)
        elif not isinstance(weight, numbers.Real):
            raise TypeError(f"lerp: weight must be a number or a Tensor, got {type(weight).__name__}")
        return rules_elementwise.Lerp.apply(self, end, weight)

    # Comparisons give bool tensors that carry no gradient.
    def __lt__(self, other):
        return wrap(self.data < _raw(other))

    def __le__(self, other):
        return wrap(self.data <= _raw(other))

    def __gt__(self, other):
        return wrap(self.data > _raw(other))

    def __ge__(self, other):
        return wrap(self.data >= _raw(other))

    def __eq__(self, other):
        return wrap(self.data == _raw(other))

    def __ne__(self, other):
        return wrap(self.data != _raw(other))

    # Logic on masks: bool results, no gradient (any nonzero entry counts as True, as PyTorch's).
    def __invert__(self):
        """~x: logical not of a bool tensor (flips a mask's polarity), bitwise not of an integer
        one (~5 == -6), as PyTorch; a float tensor is a TypeError (use x == 0 or ta.logical_not)."""
        if self.data.dtype.kind not in "biu":
            raise TypeError(f"~ (invert) takes a bool or integer tensor, got {self.data.dtype}; for the places "
                            "where a float tensor is 0 write x == 0 (or ta.logical_not(x))")
        return wrap(~self.data)

    @dim_or_axis
    def any(self, dim=None, keepdim=False):
        """True where some element along `dim` (None: all of them) is nonzero: bool, no gradient."""
        return wrap(np.any(self.data, axis=None if dim is None else axes(dim, self.ndim, "any"), keepdims=keepdim))

    @dim_or_axis
    def all(self, dim=None, keepdim=False):
        """True where every element along `dim` (None: all of them) is nonzero: bool, no gradient."""
        return wrap(np.all(self.data, axis=None if dim is None else axes(dim, self.ndim, "all"), keepdims=keepdim))

    def __and__(self, other):
        """mask & mask (logical and of bool tensors, bitwise and of integer ones), as PyTorch; no gradient."""
        return wrap(_bitwise("&", self, other, np.bitwise_and))

    def __or__(self, other):
        """mask | mask: logical or of bool tensors, bitwise or of integer ones; no gradient."""
        return wrap(_bitwise("|", self, other, np.bitwise_or))

    def __xor__(self, other):
        """mask ^ mask: logical xor of bool tensors, bitwise xor of integer ones; no gradient."""
        return wrap(_bitwise("^", self, other, np.bitwise_xor))

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def logical_not(self):
        """True where self is 0 (or False): bool, self's shape."""
        return wrap(np.logical_not(self.data))

    def logical_and(self, other):
        """True where both are nonzero: bool, broadcast."""
        return wrap(np.logical_and(self.data, _both_broadcast(self, other, "logical_and")))

    def logical_or(self, other):
        """True where either is nonzero: bool, broadcast."""
        return wrap(np.logical_or(self.data, _both_broadcast(self, other, "logical_or")))


    # ---- what a tensor offers besides backpropagation ---------------------------------------------
    # Its size, printing, conversions to numpy, Python and other dtypes, and PyTorch's spellings of
    # them (size(), numel(), dim(), long(), bool(), to(), type(), new_zeros(), clone(), detach(), t(),
    # mT, view()).

    def size(self, dim=None):
        """The shape as a tuple, or one axis's length: PyTorch's x.size() and x.size(0)."""
        return self.data.shape if dim is None else self.data.shape[one_axis(dim, self.ndim, "size")]

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
        if self.data.size != 1:
            raise RuntimeError(f"bool() of a tensor of shape {self.data.shape}: with {self.data.size} elements its "
                               "truth is ambiguous (PyTorch's rule too); write (x > 0).any() or .all()")
        return bool(self.data)

    def __int__(self):
        return int(self.item())

    def __index__(self):
        """An integer tensor of one element as an index or a count (list[t], range(t)), as PyTorch's."""
        if self.data.dtype.kind not in "iub" or self.data.size != 1:
            raise TypeError(f"only an integer tensor of one element can be an index, got {self.data.dtype} "
                            f"of shape {self.data.shape}")
        return int(self.data.item())

    def __contains__(self, value):
        """`value in x`: whether any element equals value, as PyTorch's."""
        return bool(np.any(self.data == _raw(value)))

    @dim_or_axis
    def argmax(self, axis=None, keepdims=False):
        """Indices of the largest values (int64, no gradient); over the flattened tensor if axis is None."""
        return wrap(np.argmax(self.data, axis=one_axis(axis, self.ndim, "argmax"), keepdims=keepdims))

    @dim_or_axis
    def argmin(self, axis=None, keepdims=False):
        """Indices of the smallest values (int64, no gradient); over the flattened tensor if axis is None."""
        return wrap(np.argmin(self.data, axis=one_axis(axis, self.ndim, "argmin"), keepdims=keepdims))

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
        """This tensor in float64 (PyTorch's x.double()): x.to(ta.float64)."""
        return self.to(np.float64)

    def float(self):
        """This tensor in float32 (PyTorch's x.float()): x.to(ta.float32)."""
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
        dtype = target_dtype("to", args, device, dtype)
        if dtype is None or dtype == self.data.dtype:
            return self
        if dtype.kind == "f" and self.data.dtype.kind == "f":
            return rules_elementwise.Cast.apply(self, dtype)
        return wrap(self.data.astype(dtype))

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
        return self.new_full(creation._shape(size, "new_zeros"), 0, dtype=dtype, device=device,
                             requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        """ta.ones(*size) in self's dtype unless `dtype` says otherwise (PyTorch's new_ones)."""
        return self.new_full(creation._shape(size, "new_ones"), 1, dtype=dtype, device=device,
                             requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        """ta.full(size, fill_value) in self's dtype unless `dtype` says otherwise (PyTorch's new_full)."""
        on_the_cpu(device, "new_full")
        return creation.full(size, fill_value, dtype=self.data.dtype if dtype is None else dtype,
                                      requires_grad=requires_grad)

    def clone(self):
        """A copy of the data that stays on the graph (the gradient passes through unchanged)."""
        if self.data.dtype.kind != "f":
            return wrap(self.data.copy())
        return rules_elementwise.Cast.apply(self, self.data.dtype)  # astype copies; Cast's backward is the identity

    def detach(self):
        """The same data as a new leaf with no history, leaving the graph: gradients stop here."""
        return inplace.share_with_view(wrap(self.data), self)



def wrap(array):
    """A Tensor around `array` as it is (no copy, no dtype rules): how ops return results."""
    tensor = Tensor.__new__(Tensor)  # not Tensor(array): __init__ copies and applies the dtype rules
    tensor.data = np.asarray(array)
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
    return tuple(_raw(part) for part in index) if isinstance(index, tuple) else _raw(index)


def _bool_mask(mask, op):
    mask = np.asarray(_raw(mask))
    if mask.dtype != np.bool_:
        raise TypeError(f"{op}: the mask must be bool (True = fill), got {mask.dtype}")
    return mask


# ---- helpers of the element-wise methods ------------------------------------------------------

def _both_broadcast(x, other, op):
    """other's array, once its shape is known to broadcast against x's (a ShapeError naming both if not)."""
    other = np.asarray(_raw(other))
    try:
        np.broadcast_shapes(x.shape, other.shape)
    except ValueError:
        raise ShapeError(f"{op}: shapes {x.shape} and {other.shape} do not broadcast together") from None
    return other


def _bitwise(symbol, x, other, function):
    """function(x, other) for bool or integer operands (a float is a TypeError, as PyTorch's), broadcast."""
    other = _both_broadcast(x, other, symbol)
    if x.data.dtype.kind not in "biu" or other.dtype.kind not in "biu":
        raise TypeError(f"{symbol} takes bool or integer tensors, got {x.data.dtype} and {other.dtype}; for masks "
                        "of float values compare first (x > 0)")
    return function(x.data, other)


def _pow_tensors(base, exponent):
    """base ** exponent with at least one a tensor (or array): PowTensor, broadcast; integers
    stay integers and carry no gradient, as PyTorch's."""
    base, exponent = pair(base, exponent)
    if base.data.dtype.kind == "f":
        return rules_elementwise.PowTensor.apply(base, exponent)
    if (exponent.data < 0).any():
        raise ValueError("pow: integers to negative integer powers are not allowed (PyTorch's rule too); "
                         "convert the base with .float() first")
    return wrap(np.power(base.data, exponent.data))


def _step(x, step):
    """floor, ceil, round, trunc or sign of x: the Step node for floats (zero gradient), a plain
    copy of integers (numpy would make them float64; PyTorch keeps the dtype)."""
    if x.data.dtype.kind != "f":
        return wrap(np.sign(x.data) if step is rules_elementwise.sign_zero_at_nan else x.data.copy())
    return rules_elementwise.Step.apply(x, step)


# ---- helpers of the conversions: PyTorch's type and device names ------------------------------

# PyTorch's type names (x.type()) for the dtypes tinyattn has.
_TYPE_NAMES = {np.dtype(np.float16): "HalfTensor", np.dtype(np.float32): "FloatTensor",
               np.dtype(np.float64): "DoubleTensor", np.dtype(np.int32): "IntTensor",
               np.dtype(np.int64): "LongTensor", np.dtype(np.bool_): "BoolTensor"}

# PyTorch's device names ("cuda", "cuda:0", "mps", ...): what .to() reads as a device, not a dtype.
_DEVICE = re.compile(r"(cpu|cuda|mps|xpu|xla|hip|hpu|meta|mtia|ipu|vulkan|lazy)(:\d+)?")


def _is_device(arg):
    return _DEVICE.fullmatch(str(arg)) is not None and not isinstance(arg, np.dtype)


def target_dtype(op, args, device=None, dtype=None):
    """The numpy dtype that PyTorch's .to(...) arguments ask for (None: keep it): a device and/or a
    dtype, positional or by keyword, or a tensor whose dtype to take; a device other than the CPU is
    refused (on_the_cpu). Tensor.to and Module.to read their arguments here."""
    if len(args) > 2:
        raise TypeError(f"{op}: takes a device and/or a dtype, got {len(args)} arguments {args}")
    for arg in args:
        if isinstance(arg, Tensor):
            dtype = arg.dtype
        elif _is_device(arg):
            device = arg
        else:
            dtype = arg
    on_the_cpu(device, op)
    if dtype is None:
        return None
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{op}: {dtype!r} is not a dtype or a device; use ta.float32, ta.float64, ta.int64, "
                        "ta.bool or 'cpu'") from None


def on_the_cpu(device, op):
    """Refuse a device other than the CPU (None and "cpu" pass), saying that tinyattn runs on the CPU."""
    if device is not None and str(device).partition(":")[0] != "cpu":
        raise RuntimeError(f"{op}: tinyattn runs on the CPU only, there is no {str(device)!r} device; leave the "
                           "tensor where it is (x.to('cpu') is x) and set device = 'cpu' where the script picks one")


# --------------------------------------------------------------------------------------------------
# The dtype rules of operands, as PyTorch's (the top of tensor.py states them):
#
#     to_array(data, dtype)   what a new tensor holds: float lists -> float32, int lists -> int64,
#                             an ndarray keeps its dtype
#     pair(a, b)              both operands of a binary op as Tensors of one dtype
#     one_dtype(op, tensors)  the tensors ta.cat / ta.stack join, in one dtype
# --------------------------------------------------------------------------------------------------

def to_array(data, dtype):
    if isinstance(data, Tensor):
        data = data.data
    if isinstance(data, (np.ndarray, np.generic)):
        array = np.array(data, dtype=dtype, copy=True)  # keeps the layout (order="K")
    else:
        try:
            array = np.array(data, dtype=dtype)
        except ValueError:  # numpy's message speaks of "an inhomogeneous shape after 1 dimensions"
            raise ValueError(f"tensor: the nested lists have rows of different lengths ({_row_lengths(data)}); "
                             "a tensor is a box: pad the rows to one length, or keep them as separate tensors") from None
        if dtype is None:
            if array.dtype.kind == "f":
                array = array.astype(np.float32)
            elif array.dtype.kind in "iu":
                array = array.astype(np.int64)
    if array.dtype.kind not in "fiub":
        raise TypeError(f"tensor: cannot hold data of dtype {array.dtype} (numbers or bools only)")
    return array


def _row_lengths(data):
    """The lengths of the first level of a ragged nested list, for the error message."""
    lengths = [len(row) if isinstance(row, (list, tuple)) else 1 for row in data]
    return ", ".join(map(str, lengths[:6])) + (", ..." if len(lengths) > 6 else "")


def pair(a, b, true_divide=False):
    """Both operands of a binary op as Tensors of one dtype, by PyTorch's rules.

    A number takes the tensor's dtype (float32 * 2.5 stays float32: Python numbers are
    "weak", NEP 50); an integer or bool tensor or array meeting a float one takes the float's
    dtype; integers meeting a Python float, or divided, become float32. float32 meeting
    float64 is left for Function.apply to refuse with a message naming both.
    """
    a, b = _tensor_or_number(a), _tensor_or_number(b)
    if not isinstance(a, Tensor):
        a = _number_like(a, b)
    elif not isinstance(b, Tensor):
        b = _number_like(b, a)
    kind_a, kind_b = a.data.dtype.kind, b.data.dtype.kind
    if kind_a == "f" and kind_b != "f":
        b = wrap(b.data.astype(a.data.dtype))
    elif kind_b == "f" and kind_a != "f":
        a = wrap(a.data.astype(b.data.dtype))
    if true_divide and a.data.dtype.kind != "f":
        a, b = wrap(a.data.astype(np.float32)), wrap(b.data.astype(np.float32))
    return a, b


def _tensor_or_number(value):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray) and value.ndim:
        return wrap(value)
    if isinstance(value, (np.ndarray, np.generic)):
        return value.item()  # a numpy scalar is as weak as a Python one
    if isinstance(value, (bool, int, float)):
        return value
    raise TypeError(f"cannot combine a Tensor with {type(value).__name__}")


def _number_like(number, tensor_):
    dtype = tensor_.data.dtype
    if dtype.kind != "f" and isinstance(number, float):
        dtype = np.dtype(np.float32)  # int tensor * 2.5 -> float32, PyTorch's default float
    else:
        dtype = np.result_type(dtype, number)
    return wrap(np.asarray(number, dtype=dtype))


def one_dtype(op, tensors):
    """The tensors, integer and bool ones converted to the float dtype among them (PyTorch's
    promotion: float32 with int64 is float32). Two float dtypes are left for apply to refuse."""
    tensors = list(tensors)
    for position, tensor in enumerate(tensors):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"{op}: expected a sequence of Tensors, got {type(tensor).__name__} at position "
                            f"{position} (make it one with ta.tensor(...))")
    floats = [t.dtype for t in tensors if t.dtype.kind == "f"]
    if floats:
        return [t if t.dtype.kind == "f" else wrap(t.data.astype(floats[0])) for t in tensors]
    kinds = {t.dtype for t in tensors}
    if len(kinds) > 1:  # integers and bools: numpy's promotion is PyTorch's here (bool + int64 -> int64)
        common = np.result_type(*kinds)
        return [wrap(t.data.astype(common, copy=False)) for t in tensors]
    return tensors


# --------------------------------------------------------------------------------------------------
# PyTorch's order for an index that mixes integers and arrays (Tensor.__getitem__ asks here).
# --------------------------------------------------------------------------------------------------

def integers_first(index):
    """PyTorch's order for an index mixing integers and arrays: (the integers, the rest), or None.

    PyTorch picks with the integers first and then with the arrays; numpy counts an integer beside
    an array as one more array, and when a slice stands between them moves the picked axis to the
    front: for t of shape (B, T, D), t[0, :, idx] is (T, len(idx)) in PyTorch, (len(idx), T) in
    numpy. Split this way, numpy gives PyTorch's answer."""
    if not isinstance(index, tuple):
        return None
    for part in index:
        if isinstance(part, (list, tuple)) or isinstance(part, np.ndarray) and part.ndim > 0:
            break
    else:
        return None  # no array: integers and slices pick in the same order in numpy and PyTorch
    is_int = [isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_))
              or isinstance(p, np.ndarray) and p.ndim == 0 and p.dtype.kind in "iu"  # ta.tensor(2) as an index
              for p in index]
    if not any(is_int):
        return None
    integers, rest = [], []
    for part, integer in zip(index, is_int):
        if integer:
            integers.append(int(part))
        elif part is Ellipsis:
            integers.append(part)
            rest.append(part)
        elif part is None:
            rest.append(part)  # a new axis: it takes none of the integers' axes
        else:  # a slice or an array, kept for the second pick; a bool array spans ndim axes
            integers.extend([slice(None)] * (np.ndim(part) if np.asarray(part).dtype == bool else 1))
            rest.append(part)
    return tuple(integers), tuple(rest)
