"""PyTorch's shape spellings: split and chunk as one node (Split, below); squeeze, flatten,
unflatten, repeat, repeat_interleave and flip composed from reshape, getitem and expand (so their
gradients are those ops', already checked); tril and triu are in triangles.py.
"""
import math

import numpy as np

from .axes import axes, dim_or_axis, one_axis, whole_number
from .errors import ShapeError
from .function import Function
from .ops_shape import GetItem
from .versions import share_with_view


class Split(Function):
    """(y_0, ..., y_{n-1}) = consecutive pieces of x along `axis`, of the given sizes;
    dL/dx = the pieces' gradients joined along the axis.

    One node for all the pieces, as Unbind (ops_shape.py): n getitems would each scatter a
    gradient the size of x, and the walk would add the n of them up.
    """

    @staticmethod
    def forward(ctx, x, axis, sizes):
        ctx.axis = axis
        return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=axis))

    @staticmethod
    def backward(ctx, *grads):
        return np.concatenate(grads, axis=ctx.axis), None, None


@dim_or_axis
def split(x, split_size_or_sections, dim=0):
    """Pieces of x along `dim` (PyTorch's split): an int gives pieces of that size (the last may be
    smaller), a list gives pieces of those sizes (they must add up to the length)."""
    dim = one_axis(dim, x.ndim, "split")
    length = x.shape[dim]
    if not isinstance(split_size_or_sections, (tuple, list)):
        size = whole_number(split_size_or_sections, "split", "the piece size", low=1 if length else 0)
        sizes = [min(size, length - start) for start in range(0, length, size)] if length else [0]
    else:
        sizes = [whole_number(s, "split", "each size") for s in split_size_or_sections]
        if sum(sizes) != length or any(s < 0 for s in sizes):
            raise ValueError(f"split: sizes {sizes} must be >= 0 and add up to {length}, the length of dim {dim} of {x.shape}")
    return tuple(share_with_view(piece, x) for piece in Split.apply(x, dim, sizes))  # views: one version counter


@dim_or_axis
def chunk(x, chunks, dim=0):
    """x cut into `chunks` pieces along `dim` of ceil(length / chunks) each, as PyTorch's chunk (so
    there may be fewer pieces than asked for, and the last may be smaller); an empty dim gives
    `chunks` empty pieces, as PyTorch's."""
    chunks = whole_number(chunks, "chunk", "chunks", low=1)
    length = x.shape[one_axis(dim, x.ndim, "chunk")]
    return split(x, [0] * chunks if length == 0 else math.ceil(length / chunks), dim)


@dim_or_axis
def squeeze(x, dim=None):
    """x without its size-1 dims (dim=None) or without the ones among `dim` (an int or a tuple);
    a named dim whose size is not 1 stays, as in PyTorch."""
    dims = axes(dim, x.ndim, "squeeze")  # a 0-d tensor takes dim 0 or -1 only, as PyTorch's
    return x.reshape(tuple(s for d, s in enumerate(x.shape) if not (d in dims and s == 1)))


def flatten(x, start_dim=0, end_dim=-1):
    """Dims start_dim..end_dim (inclusive) merged into one; a 0-d tensor becomes shape (1,)."""
    if x.ndim == 0:
        return x.reshape(1)
    start, end = axes((start_dim,), x.ndim, "flatten")[0], axes((end_dim,), x.ndim, "flatten")[0]
    if start > end:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} in {x.shape}")
    return x.reshape(x.shape[:start] + (math.prod(x.shape[start:end + 1]),) + x.shape[end + 1:])


@dim_or_axis
def unflatten(x, dim, sizes):
    """Dim `dim` split into `sizes` (one -1 allowed), PyTorch's unflatten."""
    dim = one_axis(dim, x.ndim, "unflatten")
    sizes = tuple(whole_number(s, "unflatten", "each size", low=-1) for s in sizes)
    known = math.prod(s for s in sizes if s != -1)
    if sizes.count(-1) > 1 or (-1 not in sizes and known != x.shape[dim]) or (known and x.shape[dim] % known):
        raise ShapeError(f"unflatten: dim {dim} of {x.shape} has {x.shape[dim]} entries, which sizes {sizes} do not fit")
    return x.reshape(x.shape[:dim] + sizes + x.shape[dim + 1:])


def repeat(x, *reps):
    """x copied reps[i] times along dim i (PyTorch's repeat, numpy's tile); more reps than dims
    add leading dims. The gradient adds up the copies."""
    reps = tuple(reps[0]) if len(reps) == 1 and isinstance(reps[0], (tuple, list)) else tuple(reps)
    reps = tuple(whole_number(r, "repeat", "each number of copies") for r in reps)
    if len(reps) < x.ndim:
        raise ShapeError(f"repeat: {len(reps)} repeats for a tensor of {x.ndim} dims {x.shape}; give one per dim")
    shape = (1,) * (len(reps) - x.ndim) + x.shape
    # (r0, s0, r1, s1, ...): each dim gets a copies axis before it, then the pairs merge
    spread = x.reshape(tuple(v for s in shape for v in (1, s)))
    copies = _expand(spread, *(v for r, s in zip(reps, shape) for v in (r, s)))
    # clone: its own writable memory, as PyTorch's repeat (the expand is a view of x)
    return copies.clone().reshape(tuple(r * s for r, s in zip(reps, shape)))


@dim_or_axis
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each entry of `input` along `dim` repeated `repeats` times in place (PyTorch's
    repeat_interleave, numpy's repeat): [a, b] with 2 -> [a, a, b, b]. repeats: an int, or an int
    tensor with one count per entry (or one count for all); dim=None works on the flattened input.
    One getitem, so the gradient adds up each entry's copies. repeat_interleave(counts) alone gives
    0, 1, ... each repeated its count, as PyTorch."""
    if repeats is None:  # torch.repeat_interleave(counts): the index each count makes
        counts = np.asarray(input.data)
        return _tensor.wrap(np.repeat(np.arange(counts.size), _counts(counts, counts.size, output_size)))
    if dim is None or input.ndim == 0:  # PyTorch flattens, and a 0-d input has one entry
        input, dim = input.reshape(-1), 0
    dim = one_axis(dim, input.ndim, "repeat_interleave")
    length = input.shape[dim]
    index = np.repeat(np.arange(length), _counts(getattr(repeats, "data", repeats), length, output_size))
    return input[(slice(None),) * dim + (index,)]


def _counts(repeats, length, output_size):
    """repeat_interleave's counts as `length` non-negative ints, checked against output_size."""
    counts = np.asarray(repeats)
    if counts.dtype.kind not in "iu" or counts.ndim > 1:
        raise TypeError(f"repeat_interleave: repeats must be an int or a 1-D int tensor, got {counts.dtype} of shape "
                        f"{counts.shape}")
    if counts.ndim == 1 and counts.size not in (1, length):
        raise ShapeError(f"repeat_interleave: {counts.size} repeats for {length} entries along dim; give one per "
                         "entry or one for all")
    if (counts < 0).any():
        raise ValueError(f"repeat_interleave: repeats must be >= 0, got {counts.min()}")
    counts = np.broadcast_to(counts.reshape(-1), (length,))
    if output_size is not None and output_size != counts.sum():
        raise ValueError(f"repeat_interleave: output_size={output_size}, but the repeats add up to {counts.sum()}")
    return counts


@dim_or_axis
def flip(x, dims):
    """x with the order of entries reversed along each of `dims` (PyTorch's flip)."""
    dims = axes(dims, x.ndim, "flip")
    reversed_view = GetItem.apply(x, tuple(slice(None, None, -1) if d in dims else slice(None) for d in range(x.ndim)))
    # A copy, as PyTorch's flip, laid out as x (in order when x is): a reversed view would change x
    # when changed in place, and its negative strides refuse .view(). (GetItem, not x[...]: the
    # reversed view is only a step, so x gets no view sharing its version counter.)
    return reversed_view.clone()


from . import tensor as _tensor  # noqa: E402  (tensor.py imports this module before it defines Tensor)
from .ops_select import expand as _expand  # noqa: E402
