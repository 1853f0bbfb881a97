"""PyTorch's method spellings that tutorials reach for: x.add/sub/mul/div/neg/pow, max/min with
PyTorch's meaning, clamp, var/std, logsumexp, norm, cumsum, gather, topk, the shape methods
(split, chunk, squeeze, flatten, unflatten, expand, repeat, flip, tril, triu) and contiguous
(spellings.py says what to write for a PyTorch name tinyattn lacks). Tensor inherits them;
each calls the function that composes it (compare.py, statistics.py, shaping.py, triangles.py, ops_select.py).
"""
import numbers

import numpy as np

from .axes import dim_or_axis


class TensorMethods:
    __slots__ = ()  # a base of Tensor, whose instances keep their fixed slots

    # --- arithmetic as methods (PyTorch's spellings of the operators) --------------------------
    def add(self, other, *, alpha=1):
        """self + alpha * other (PyTorch's add)."""
        return self + _inplace.scaled("add", other, alpha)

    def sub(self, other, *, alpha=1):
        """self - alpha * other (PyTorch's sub)."""
        return self - _inplace.scaled("sub", other, alpha)

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
        return _tensor._ew.RoundedDiv.apply(*_tensor._pair(self, other), rounding_mode)

    def neg(self):
        """-self (PyTorch's neg)."""
        return -self

    def pow(self, exponent):
        """self ** exponent (a number or a tensor: then the exponent gets its gradient too)."""
        return self ** exponent

    # --- larger and smaller (compare.py) ----------------------------------------------------------
    def max(self, dim=None, keepdim=None, *, axis=None, keepdims=None):
        """PyTorch's meanings: x.max() is the largest entry (0-d; tied entries share the gradient);
        x.max(dim, keepdim=False) is a namedtuple (values, indices), the gradient going to the
        entry `indices` names; x.max(other) is ta.maximum(x, other). numpy's spelling
        x.max(axis=..., keepdims=...) gives the values only (axis may be a tuple)."""
        return _tensor._compare.max_or_min(self, "max", dim, keepdim, axis, keepdims)

    def min(self, dim=None, keepdim=None, *, axis=None, keepdims=None):
        """As max, for the smallest: x.min(), x.min(dim) -> (values, indices), x.min(axis=...) -> values."""
        return _tensor._compare.max_or_min(self, "min", dim, keepdim, axis, keepdims)

    def maximum(self, other):
        """ta.maximum(self, other): the larger element-wise; a tie splits the gradient in half."""
        return _tensor._compare.maximum(self, other)

    def minimum(self, other):
        """ta.minimum(self, other): the smaller element-wise; a tie splits the gradient in half."""
        return _tensor._compare.minimum(self, other)

    def clamp(self, min=None, max=None):
        """self limited to [min, max] element-wise (numbers or tensors); see compare.clamp. Also x.clip."""
        return _tensor._compare.clamp(self, min, max)

    clip = clamp

    # --- statistics (statistics.py) --------------------------------------------------------------
    @dim_or_axis
    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        """The variance over `dim` (None: all), correction=1 by default; x.var(dim, False) is the biased one."""
        return _tensor._statistics.var(self, dim, unbiased, keepdim, correction=correction)

    @dim_or_axis
    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        """The standard deviation: var's square root (same arguments)."""
        return _tensor._statistics.std(self, dim, unbiased, keepdim, correction=correction)

    @dim_or_axis
    def logsumexp(self, dim, keepdim=False):
        """log(sum(exp(self))) over `dim`, without overflow."""
        return _tensor._statistics.logsumexp(self, dim, keepdim)

    @dim_or_axis
    def norm(self, p="fro", dim=None, keepdim=False):
        """The p-norm over `dim` (None: all): p = 'fro'/2 (default), 1, inf, -inf or any p > 0."""
        return _tensor._statistics.norm(self, p, dim, keepdim)

    # --- picking (ops_select.py) -------------------------------------------------------------------
    @dim_or_axis
    def unbind(self, dim=0):
        """The slices along `dim`, as a tuple of tensors (ta.unbind)."""
        return _tensor._shape.unbind(self, dim)

    @dim_or_axis
    def cumsum(self, dim):
        """Running sums along `dim`, same shape."""
        return _tensor._select.cumsum(self, dim)

    @dim_or_axis
    def gather(self, dim, index):
        """Entries picked along `dim` by the integer `index` (PyTorch's gather), index's shape."""
        return _tensor._select.gather(self, dim, index)

    @dim_or_axis
    def topk(self, k, dim=-1, largest=True, sorted=True):
        """(values, indices) of the k largest (largest=False: smallest) along `dim`, in order."""
        return _tensor._select.topk(self, k, dim, largest, sorted)

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        """Category indices drawn in proportion to self's weights, per row (ta.multinomial)."""
        return _tensor._sampling.multinomial(self, num_samples, replacement, generator=generator)

    def expand(self, *sizes):
        """self repeated along its size-1 dims to `sizes` without copying (-1 keeps a size)."""
        return _tensor._select.expand(self, *sizes)

    # --- shapes (shaping.py) -------------------------------------------------------------------------
    @dim_or_axis
    def split(self, split_size_or_sections, dim=0):
        """Pieces along `dim`: of one size (an int; the last may be smaller) or of the sizes listed."""
        return _tensor._shaping.split(self, split_size_or_sections, dim)

    @dim_or_axis
    def chunk(self, chunks, dim=0):
        """`chunks` pieces along `dim` of ceil(length / chunks) each (PyTorch's chunk)."""
        return _tensor._shaping.chunk(self, chunks, dim)

    @dim_or_axis
    def squeeze(self, dim=None):
        """Without its size-1 dims (or those of them among `dim`)."""
        return _tensor._shaping.squeeze(self, dim)

    def flatten(self, start_dim=0, end_dim=-1):
        """Dims start_dim..end_dim merged into one."""
        return _tensor._shaping.flatten(self, start_dim, end_dim)

    @dim_or_axis
    def unflatten(self, dim, sizes):
        """Dim `dim` split into `sizes` (one -1 allowed)."""
        return _tensor._shaping.unflatten(self, dim, sizes)

    def repeat(self, *reps):
        """Copied reps[i] times along dim i (numpy's tile)."""
        return _tensor._shaping.repeat(self, *reps)

    @dim_or_axis
    def repeat_interleave(self, repeats, dim=None, *, output_size=None):
        """Each entry repeated `repeats` times in place along `dim` (None: flattened): [a, a, b, b]."""
        return _tensor._shaping.repeat_interleave(self, repeats, dim, output_size=output_size)

    @dim_or_axis
    def flip(self, dims):
        """Entries in reverse order along each of `dims`."""
        return _tensor._shaping.flip(self, dims if not isinstance(dims, numbers.Integral) else (dims,))

    def tril(self, diagonal=0):
        """Zeros above the `diagonal`-th diagonal of the last two dims."""
        return _triangles.tril(self, diagonal)

    def triu(self, diagonal=0):
        """Zeros below the `diagonal`-th diagonal of the last two dims."""
        return _triangles.triu(self, diagonal)

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


from . import inplace as _inplace, tensor as _tensor, triangles as _triangles  # noqa: E402  (tensor.py imports this module before it defines Tensor)
