"""Ops that pick, spread or pad elements, the ones PyTorch tutorials reach for: gather, cumsum,
constant padding and expand; and CopySlices, an in-place change through a view as its base sees it.

Each backward routes every gradient element back to the input element it came from (or adds up
the elements that came from one input element).
"""
import math
from collections import namedtuple

import numpy as np

from .axes import axes, dim_or_axis, one_axis as _one_axis, whole_number
from .broadcast import unbroadcast
from .errors import ShapeError
from .function import Function
from .versions import share_with_view


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


class CopySlices(Function):
    """y = base with the elements at flat (row-major) `positions` replaced by `value`: an in-place
    change through a view, as the view's base sees it (PyTorch's CopySlices, inplace.py);
    dL/dbase = g with those elements 0 (they were overwritten), dL/dvalue = g at those elements."""

    @staticmethod
    def forward(ctx, base, value, positions):
        ctx.positions = positions
        y = base.copy()  # row-major, so reshape(-1) is a view of it
        y.reshape(-1)[positions] = value
        return y

    @staticmethod
    def backward(ctx, g):
        g_base = g.copy()
        g_base.reshape(-1)[ctx.positions] = 0
        return g_base, np.asarray(g.reshape(-1)[ctx.positions]), None


# --- the user-facing spellings (PyTorch's names and arguments) -----------------------------------

@dim_or_axis
def gather(x, dim, index):
    """out[i][j][k] = x[i][index[i][j][k]][k] for dim=1 (PyTorch's torch.gather): `index` is an
    integer tensor with x's number of dims; out has index's shape."""
    index = np.asarray(_tensor._raw(index))
    if index.dtype.kind not in "iu":
        raise TypeError(f"gather: index must be an integer tensor, got {index.dtype}")
    return Gather.apply(x, _one_axis(dim, x.ndim, "gather"), index)


@dim_or_axis
def cumsum(x, dim):
    """Running sums along `dim`, same shape (integers and bools sum as int64, as PyTorch)."""
    if x.ndim == 0:  # one entry: its running sum is itself, 0-d as PyTorch keeps it
        axes(dim, 0, "cumsum")
        return Cumsum.apply(x.reshape(1), 0).reshape(())
    return Cumsum.apply(x, _one_axis(dim, x.ndim, "cumsum"))


@dim_or_axis
def topk(x, k, dim=-1, largest=True, sorted=True):
    """(values, indices) of the k largest (or smallest) entries along `dim`, largest first when
    sorted (PyTorch's topk); the values carry the gradient back to the entries they came from."""
    if x.ndim == 0:  # one entry (dim 0 or -1): k is 0 or 1, and the result keeps the 0-d shape when k is 1
        axes(dim, 0, "topk")
        k = whole_number(k, "topk", "k")
        values, indices = topk(x.reshape(1), k, 0, largest, sorted)
        return TopK(values.reshape(()), indices.reshape(())) if k == 1 else TopK(values, indices)
    dim = _one_axis(dim, x.ndim, "topk")
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
    return share_with_view(Expand.apply(x, shape), x)  # a view: one version counter


TopK = namedtuple("topk", ["values", "indices"])  # as torch.return_types.topk

from . import tensor as _tensor  # noqa: E402  (tensor.py imports the op modules first)
