"""Ops that move, pick or join elements without arithmetic: reshape, permute, getitem, cat,
stack, split and chunk, squeeze and flatten, flip, tril/triu, expand, repeat, pad, gather,
topk and cumsum.

Their backward puts each gradient element back where its value came from: reshape back,
permute back, scatter into zeros (getitem, gather), split (cat, stack), join (split), keep the
unfilled places (masked_fill).
"""
import math
from collections import namedtuple

import numpy as np

from . import inplace, rules_elementwise
from . import tensor as _tensor
from .dtypes import AxisError, ShapeError, axes, dim_or_axis, one_axis, unbroadcast, whole_number
from .function import Function


class Reshape(Function):
    """y = x viewed with another shape;  dL/dx = g reshaped to x's shape."""

    @staticmethod
    def forward(ctx, x, shape):
        ctx.shape = x.shape
        try:
            return x.reshape(shape)
        except ValueError:
            raise ShapeError(
                f"reshape: cannot view {x.shape} ({x.size} elements) as {tuple(shape)}"
            ) from None

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.shape), None


class Permute(Function):
    """y = x with its axes in `order`;  dL/dx = g with the inverse order."""

    @staticmethod
    def forward(ctx, x, order):
        if sorted(order) != list(range(x.ndim)):
            raise ShapeError(f"permute: {tuple(order)} is not an order of the {x.ndim} axes of {x.shape}")
        ctx.order = order
        return np.transpose(x, order)

    @staticmethod
    def backward(ctx, g):
        return np.transpose(g, np.argsort(ctx.order)), None


def _numpy_index(index):
    """(index with lists made arrays, True if it picks by arrays): numpy's "advanced" indexing,
    where one element may be picked twice. A plain loop: this runs on every slice of a tensor."""
    if isinstance(index, list):
        return np.asarray(index), True
    if not isinstance(index, tuple):
        return index, isinstance(index, np.ndarray)
    advanced = False
    for part in index:
        if isinstance(part, (np.ndarray, list, tuple)):  # x[:, (1, 1, 2)] picks like a list
            advanced = True
    if advanced:
        index = tuple(np.asarray(part) if isinstance(part, (list, tuple)) else part for part in index)
    return index, advanced


class GetItem(Function):
    """y = x[index] (one element: a 0-d view, as PyTorch's);  dL/dx = zeros with g added at the picked places.

    Integer-array indices may pick one element several times (an embedding lookup of a
    repeated word): np.add.at adds every copy's gradient, where plain assignment keeps one.
    """

    @staticmethod
    def forward(ctx, x, index):
        index, advanced = _numpy_index(index)
        ctx.meta = x.shape, index, advanced
        try:
            y = x[index]
        except IndexError as error:
            raise IndexError(f"getitem on a tensor of shape {x.shape}: {error}") from None
        # one element: numpy copies it out (a scalar, or a 0-d array under ta.compile); PyTorch's is a view
        return y if advanced or y.ndim or np.may_share_memory(y, x) else x[index + (...,) if isinstance(index, tuple) else (index, ...)]

    @staticmethod
    def backward(ctx, g):
        shape, index, advanced = ctx.meta
        grad = np.zeros(shape, g.dtype)
        if advanced:
            np.add.at(grad, index, g)
        else:
            grad[index] = g
        return grad, None


class Cat(Function):
    """y = tensors joined along an existing axis;  dL/d(tensor i) = its slice of g."""

    @staticmethod
    def forward(ctx, axis, *arrays):
        try:
            y = np.ascontiguousarray(np.concatenate(arrays, axis=axis))  # in order, as PyTorch's
        except ValueError:
            _check_same_shapes("cat", arrays, skip_axis=axis)  # says which tensor does not fit
            raise
        ctx.axis = axis
        ctx.sizes = [a.shape[axis] for a in arrays]
        return y

    @staticmethod
    def backward(ctx, g):
        before = (slice(None),) * ctx.axis  # the axes before the joined one, whole
        grads, start = [None], 0
        for size in ctx.sizes:  # views of g, no copies (the walk never writes into them)
            grads.append(g[before + (slice(start, start + size),)])
            start += size
        return tuple(grads)


class Stack(Function):
    """y = tensors stacked along a new axis;  dL/d(tensor i) = g taken at index i of that axis."""

    @staticmethod
    def forward(ctx, axis, *arrays):
        try:
            y = np.ascontiguousarray(np.stack(arrays, axis=axis))  # in order, as PyTorch's
        except ValueError:
            _check_same_shapes("stack", arrays, skip_axis=None)  # says which tensor does not fit
            raise
        ctx.axis = axis
        return y

    @staticmethod
    def backward(ctx, g):
        return (None, *np.moveaxis(g, ctx.axis, 0))  # views of g, no copies (the walk never writes into them)


class Unbind(Function):
    """(y_0, ..., y_{n-1}) = the slices of x along `axis`;  dL/dx = the slice gradients stacked.

    One node for all n slices: a recurrent layer takes each time step's input this way, where
    n separate getitems would each scatter a full-size gradient (O(n^2) work in backward).
    """

    @staticmethod
    def forward(ctx, x, axis):
        ctx.axis = axis
        moved = np.moveaxis(x, axis, 0)
        return tuple(moved[i, ...] for i in range(len(moved)))  # views, 0-d ones too (iterating gives scalars)

    @staticmethod
    def backward(ctx, *grads):
        return np.stack(grads, axis=ctx.axis), None


def _check_same_shapes(op, arrays, skip_axis):
    if not arrays:
        raise ValueError(f"{op}: needs at least one tensor")
    first = arrays[0].shape
    for i, array in enumerate(arrays[1:], start=1):
        a, b = list(first), list(array.shape)
        if skip_axis is not None and len(a) == len(b) and skip_axis < len(a):
            a[skip_axis] = b[skip_axis] = None
        if a != b:
            what = f"all sizes but axis {skip_axis}" if skip_axis is not None else "all shapes"
            raise ShapeError(f"{op}: tensor {i} has shape {array.shape}, tensor 0 has {first}; {what} must match")


class MaskedFill(Function):
    """y = value where mask else x;  dL/dx = g where not mask else 0 (the filled places are constants)."""

    @staticmethod
    def forward(ctx, x, mask, value):
        try:
            full_mask = np.broadcast_to(mask, x.shape)
        except ValueError:
            raise ShapeError(f"masked_fill: mask {mask.shape} does not broadcast to the tensor's {x.shape}") from None
        ctx.save_for_backward(full_mask)
        return np.where(full_mask, x.dtype.type(value), x)

    @staticmethod
    def backward(ctx, g):
        (mask,) = ctx.saved_arrays
        return rules_elementwise.grad_where(~mask, g), None, None


# --- the user-facing spellings: ta.cat, ta.stack, ta.unbind -------------------------------------

@dim_or_axis
def cat(tensors, axis=0):
    """Join tensors along an existing axis (PyTorch's dim= works too)."""
    tensors = _tensor.one_dtype("cat", tensors)
    for position, tensor in enumerate(tensors):
        if tensor.ndim == 0:
            raise ShapeError(f"cat: zero-dimensional tensor (at position {position}) cannot be concatenated; "
                             "ta.stack(tensors) makes a 1-d tensor of 0-d ones")
    return Cat.apply(_axis(axis, tensors[0].ndim if tensors else 1, "cat"), *tensors)


@dim_or_axis
def stack(tensors, axis=0):
    """Stack tensors of one shape along a new axis (PyTorch's dim= works too)."""
    tensors = _tensor.one_dtype("stack", tensors)
    return Stack.apply(_axis(axis, (tensors[0].ndim if tensors else 0) + 1, "stack"), *tensors)


@dim_or_axis
def unbind(tensor, axis=0):
    """The slices of a tensor along an axis, as a tuple of tensors (one graph node)."""
    slices = Unbind.apply(tensor, _axis(axis, tensor.ndim, "unbind"))
    return tuple(inplace.share_with_view(piece, tensor) for piece in slices)  # views: one version counter


def _axis(axis, ndim, op):
    if ndim == 0:  # axes() takes 0 or -1 for a 0-d tensor, but there is no dim to pick along
        raise AxisError(f"{op}: a 0-d tensor has no dim {axis} to work along; reshape it to (1,) first")
    return axes(axis, ndim, op)[0]


# --------------------------------------------------------------------------------------------------
# PyTorch's shape spellings: split and chunk as one node (Split, below); squeeze, flatten,
# unflatten, repeat, repeat_interleave and flip composed from reshape, getitem and expand (so their
# gradients are those ops', already checked); tril and triu are below.
# --------------------------------------------------------------------------------------------------

class Split(Function):
    """(y_0, ..., y_{n-1}) = consecutive pieces of x along `axis`, of the given sizes;
    dL/dx = the pieces' gradients joined along the axis.

    One node for all the pieces, as Unbind (above): n getitems would each scatter a
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
    return tuple(inplace.share_with_view(piece, x) for piece in Split.apply(x, dim, sizes))  # views: one version counter


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
    copies = expand(spread, *(v for r, s in zip(reps, shape) for v in (r, s)))
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


# --------------------------------------------------------------------------------------------------
# tril and triu: the lower or upper triangle of a matrix kept, the rest set to 0 (PyTorch's).
#
# Composed from masked_fill, so the gradient is masked_fill's: g where an entry was kept, else 0.
# A causal attention mask is triu(ones(T, T, dtype=bool), diagonal=1): True above the diagonal.
# --------------------------------------------------------------------------------------------------

def tril(x, diagonal=0):
    """x with the entries above the `diagonal`-th diagonal of its last two dims set to 0 (PyTorch's tril)."""
    return _triangle(x, diagonal, "tril")


def triu(x, diagonal=0):
    """x with the entries below the `diagonal`-th diagonal of its last two dims set to 0 (PyTorch's triu)."""
    return _triangle(x, diagonal, "triu")


def _triangle(x, diagonal, op):
    if x.ndim < 2:
        raise ShapeError(f"{op}: needs a matrix (or a batch of them), got shape {x.shape}")
    diagonal = whole_number(diagonal, op, "diagonal", low=-math.inf)
    rows, cols = x.shape[-2:]
    keep = np.tri(rows, cols, diagonal, dtype=bool) if op == "tril" else ~np.tri(rows, cols, diagonal - 1, dtype=bool)
    return x.masked_fill(~keep, 0)


# --------------------------------------------------------------------------------------------------
# Ops that pick, spread or pad elements, the ones PyTorch tutorials reach for: gather, cumsum,
# constant padding and expand; and CopySlices, an in-place change through a view as its base sees it.
#
# Each backward routes every gradient element back to the input element it came from (or adds up
# the elements that came from one input element).
# --------------------------------------------------------------------------------------------------

def _gather_index(index, dim):
    """The full numpy index picking x[i0, .., index[i], .., in] for every position i of `index`."""
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid)


class Gather(Function):
    """y[i] = x[i with its `dim` coordinate replaced by index[i]] (PyTorch's gather);
    dL/dx = zeros with each g[i] added at the element it picked (an element picked twice gets both)."""

    @staticmethod
    def forward(ctx, x, dim, index):
        if index.ndim != x.ndim or any(s > t for d, (s, t) in enumerate(zip(index.shape, x.shape)) if d != dim):
            raise ShapeError(f"gather: index {index.shape} must have the input's {x.ndim} dims and be no larger "
                             f"than the input {x.shape} except along dim {dim}")
        if index.size and (index.min() < 0 or index.max() >= x.shape[dim]):
            raise IndexError(f"gather: index values must lie in [0, {x.shape[dim]}) along dim {dim} of {x.shape}, "
                             f"got {index.min()}..{index.max()}")
        ctx.meta = x.shape, _gather_index(index, dim)
        return x[ctx.meta[1]]

    @staticmethod
    def backward(ctx, g):
        shape, picked = ctx.meta
        grad = np.zeros(shape, g.dtype)
        np.add.at(grad, picked, g)
        return grad, None, None


class Cumsum(Function):
    """y_i = x_0 + ... + x_i along `dim`;  dL/dx_j = sum over i >= j of g_i, a cumsum of g from the end."""

    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        return np.cumsum(x, axis=dim, dtype=x.dtype if x.dtype.kind == "f" else np.int64)

    @staticmethod
    def backward(ctx, g):
        reverse = (slice(None),) * ctx.dim + (slice(None, None, -1),)
        return np.cumsum(g[reverse], axis=ctx.dim)[reverse], None


class Pad(Function):
    """y = x with `widths` ((before, after) per axis) of `value` around it;  dL/dx = g without the border."""

    @staticmethod
    def forward(ctx, x, widths, value):
        ctx.inside = tuple(slice(before, before + size) for (before, _), size in zip(widths, x.shape))
        return np.pad(x, widths, constant_values=value)

    @staticmethod
    def backward(ctx, g):
        return g[ctx.inside], None, None


class Expand(Function):
    """y = x repeated along its size-1 (or new, leading) axes to `shape`, without copying;
    dL/dx = g summed over those axes (each x element was used once per copy)."""

    @staticmethod
    def forward(ctx, x, shape):
        ctx.shape = x.shape
        y = np.broadcast_to(x, shape)
        y.flags.writeable = x.flags.writeable  # as PyTorch's; a write landing on one element twice is refused (inplace.py)
        return y

    @staticmethod
    def backward(ctx, g):
        return unbroadcast(g, ctx.shape), None





# --- the user-facing spellings (PyTorch's names and arguments) -----------------------------------

@dim_or_axis
def gather(x, dim, index):
    """out[i][j][k] = x[i][index[i][j][k]][k] for dim=1 (PyTorch's torch.gather): `index` is an
    integer tensor with x's number of dims; out has index's shape."""
    index = np.asarray(_tensor._raw(index))
    if index.dtype.kind not in "iu":
        raise TypeError(f"gather: index must be an integer tensor, got {index.dtype}")
    return Gather.apply(x, one_axis(dim, x.ndim, "gather"), index)


@dim_or_axis
def cumsum(x, dim):
    """Running sums along `dim`, same shape (integers and bools sum as int64, as PyTorch)."""
    if x.ndim == 0:  # one entry: its running sum is itself, 0-d as PyTorch keeps it
        axes(dim, 0, "cumsum")
        return Cumsum.apply(x.reshape(1), 0).reshape(())
    return Cumsum.apply(x, one_axis(dim, x.ndim, "cumsum"))


@dim_or_axis
def topk(x, k, dim=-1, largest=True, sorted=True):
    """(values, indices) of the k largest (or smallest) entries along `dim`, largest first when
    sorted (PyTorch's topk); the values carry the gradient back to the entries they came from."""
    if x.ndim == 0:  # one entry (dim 0 or -1): k is 0 or 1, and the result keeps the 0-d shape when k is 1
        axes(dim, 0, "topk")
        k = whole_number(k, "topk", "k")
        values, indices = topk(x.reshape(1), k, 0, largest, sorted)
        return TopK(values.reshape(()), indices.reshape(())) if k == 1 else TopK(values, indices)
    dim = one_axis(dim, x.ndim, "topk")
    k = whole_number(k, "topk", "k")
    if not 0 <= k <= x.shape[dim]:
        raise ValueError(f"topk: k={k} is out of range for {x.shape[dim]} entries along dim {dim} of {x.shape}")
    order = largest_first(x.data, dim) if largest else np.argsort(x.data, axis=dim, kind="stable")  # NaN last
    indices = np.take(order, np.arange(k), axis=dim)
    return TopK(gather(x, dim, indices), _tensor.wrap(indices))


def largest_first(data, axis):
    """The indices that sort `data` along `axis` from the largest down, ties in index order, NaN
    first: PyTorch ranks NaN above everything (topk, sort(descending=True)), so it is not hidden."""
    # a key that reverses the order: -x for floats, ~x (= -x - 1, no overflow) for integers
    order = np.argsort(-data if data.dtype.kind == "f" else ~data, axis=axis, kind="stable")
    if data.dtype.kind != "f":
        return order
    # numpy puts NaN last: move them to the front, keeping each group's order
    nan_last = ~np.isnan(np.take_along_axis(data, order, axis=axis))
    return np.take_along_axis(order, np.argsort(nan_last, axis=axis, kind="stable"), axis=axis)


def pad(x, pad, mode="constant", value=0.0):
    """x with `value` around it (PyTorch's F.pad): pad = (last dim before, last dim after,
    second-to-last before, after, ...); negative widths cut elements off instead."""
    if mode != "constant":
        raise NotImplementedError(f"pad: only mode='constant' is implemented, got mode={mode!r}")
    pad = tuple(whole_number(p, "pad", "each width", low=-math.inf) for p in pad)
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise ValueError(f"pad: needs an even number of widths, at most 2 per dim of {x.shape}, got {pad}")
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):  # PyTorch's order: the last dim first
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    for d, ((before, after), size) in enumerate(zip(widths, x.shape)):
        if min(before, 0) + min(after, 0) < -size:
            raise ValueError(f"pad: widths ({before}, {after}) cut {-min(before, 0) - min(after, 0)} entries from "
                             f"dim {d} of {x.shape}, which has {size}; negative widths may cut at most all of it")
    if any(w < 0 for pair in widths for w in pair):  # cut first (a slice), then pad what is left
        x = x[tuple(slice(max(-before, 0), size - max(-after, 0)) for (before, after), size in zip(widths, x.shape))]
        widths = [(max(before, 0), max(after, 0)) for before, after in widths]
    if x.data.dtype.kind != "f" and not float(value).is_integer():
        raise TypeError(f"pad: cannot pad a {x.data.dtype} tensor with {value}")
    return Pad.apply(x, tuple(widths), value)


def expand(x, *sizes):
    """x repeated along its size-1 axes (and new leading ones) to `sizes`, without copying;
    -1 keeps a size (PyTorch's expand). A view of x: writing into it writes x (twice into one element raises)."""
    sizes = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
    sizes = tuple(whole_number(size, "expand", "each size", low=-1) for size in sizes)
    new = len(sizes) - x.ndim
    if new < 0:
        raise ShapeError(f"expand: {x.shape} has more dims than the size {tuple(sizes)}")
    shape = tuple(x.shape[i - new] if size == -1 and i >= new else size for i, size in enumerate(sizes))
    for i, size in enumerate(x.shape):
        if size != 1 and size != shape[new + i]:
            raise ShapeError(f"expand: {x.shape} -> {tuple(sizes)}: dim {i} has size {size}, only a size-1 dim "
                             "can grow (use repeat to copy a longer one)")
    if any(size < 0 for size in shape):
        raise ShapeError(f"expand: {tuple(sizes)}: -1 (keep the size) is not allowed for a new leading dim")
    return inplace.share_with_view(Expand.apply(x, shape), x)  # a view: one version counter


TopK = namedtuple("topk", ["values", "indices"])  # as torch.return_types.topk
