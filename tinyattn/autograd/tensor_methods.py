"""PyTorch's method spellings that tutorials reach for: x.add/sub/mul/div/neg/pow, max/min with
PyTorch's meaning, clamp, var/std, logsumexp, norm, cumsum, gather, topk, the shape methods
(split, chunk, squeeze, flatten, unflatten, expand, repeat, flip, tril, triu), contiguous, and an
AttributeError that names the nearest spelling for one tinyattn lacks. Tensor inherits them;
each calls the function that composes it (compare.py, statistics.py, shaping.py, ops_select.py).
"""
import numbers

import numpy as np

from .spellings import missing


class TensorMethods:
    __slots__ = ()  # a base of Tensor, whose instances keep their fixed slots

    def __getattr__(self, name):
        # Only called when normal lookup fails, so it costs nothing on the names that exist.
        if name.startswith("__") or name in _SLOTS:  # protocols probed by copy/pickle/numpy, unset slots
            raise AttributeError(f"'Tensor' object has no attribute {name!r}")
        raise missing("Tensor", name, dir(type(self)))

    # --- arithmetic as methods (PyTorch's spellings of the operators) --------------------------
    def add(self, other, *, alpha=1):
        """self + alpha * other (PyTorch's add)."""
        return self + (other if alpha == 1 else other * alpha)

    def sub(self, other, *, alpha=1):
        """self - alpha * other (PyTorch's sub)."""
        return self - (other if alpha == 1 else other * alpha)

    def mul(self, other):
        return self * other

    def div(self, other, *, rounding_mode=None):
        """self / other; rounding_mode "trunc" or "floor" rounds the quotient (no gradient then, as
        its slope is 0 almost everywhere)."""
        if rounding_mode is None:
            return self / other
        if rounding_mode not in ("trunc", "floor"):
            raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
        quotient = (self / other).data
        rounded = np.trunc(quotient) if rounding_mode == "trunc" else np.floor(quotient)
        both_int = self.data.dtype.kind in "iu" and np.asarray(getattr(other, "data", other)).dtype.kind in "iu"
        return _tensor.wrap(rounded.astype(np.int64) if both_int else rounded)

    def neg(self):
        return -self

    def pow(self, exponent):
        """self ** exponent (a number)."""
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
        return _tensor._compare.maximum(self, other)

    def minimum(self, other):
        return _tensor._compare.minimum(self, other)

    def clamp(self, min=None, max=None):
        return _tensor._compare.clamp(self, min, max)

    clip = clamp

    # --- statistics (statistics.py) --------------------------------------------------------------
    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return _tensor._statistics.var(self, dim, unbiased, keepdim, correction=correction)

    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return _tensor._statistics.std(self, dim, unbiased, keepdim, correction=correction)

    def logsumexp(self, dim, keepdim=False):
        return _tensor._statistics.logsumexp(self, dim, keepdim)

    def norm(self, p="fro", dim=None, keepdim=False):
        return _tensor._statistics.norm(self, p, dim, keepdim)

    # --- picking (ops_select.py) -------------------------------------------------------------------
    def cumsum(self, dim):
        return _tensor._select.cumsum(self, dim)

    def gather(self, dim, index):
        return _tensor._select.gather(self, dim, index)

    def topk(self, k, dim=-1, largest=True, sorted=True):
        return _tensor._select.topk(self, k, dim, largest, sorted)

    def expand(self, *sizes):
        return _tensor._select.expand(self, *sizes)

    # --- shapes (shaping.py) -------------------------------------------------------------------------
    def split(self, split_size_or_sections, dim=0):
        return _tensor._shaping.split(self, split_size_or_sections, dim)

    def chunk(self, chunks, dim=0):
        return _tensor._shaping.chunk(self, chunks, dim)

    def squeeze(self, dim=None):
        return _tensor._shaping.squeeze(self, dim)

    def flatten(self, start_dim=0, end_dim=-1):
        return _tensor._shaping.flatten(self, start_dim, end_dim)

    def unflatten(self, dim, sizes):
        return _tensor._shaping.unflatten(self, dim, sizes)

    def repeat(self, *reps):
        return _tensor._shaping.repeat(self, *reps)

    def flip(self, dims):
        return _tensor._shaping.flip(self, dims if not isinstance(dims, numbers.Integral) else (dims,))

    def tril(self, diagonal=0):
        return _tensor._shaping.tril(self, diagonal)

    def triu(self, diagonal=0):
        return _tensor._shaping.triu(self, diagonal)

    def contiguous(self):
        """self if its elements are laid out in row-major order already, else a row-major copy
        that stays on the graph (PyTorch's contiguous)."""
        if self.data.flags.c_contiguous:
            return self
        return self.reshape(-1).reshape(self.shape)  # flattening a strided array copies it into order


_SLOTS = ("data", "grad", "requires_grad", "_ctx", "_out_index", "_hooks")

from . import tensor as _tensor  # noqa: E402  (tensor.py imports this module before it defines Tensor)
