"""Ops that move, pick or join elements without arithmetic.

Their backward puts each gradient element back where its value came from: reshape back,
permute back, scatter into zeros (getitem), split (cat, stack), keep the unfilled places
(masked_fill; ta.where is in ops_where.py).
"""
import numpy as np

from .axes import axes, dim_or_axis
from .errors import AxisError, ShapeError
from .function import Function
from .ops_where import grad_where
from .promotion import one_dtype
from .versions import share_with_view


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
        return y if y.__class__ is np.ndarray or advanced else x[index + (...,) if isinstance(index, tuple) else (index, ...)]

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
        (mask,) = ctx.saved_tensors
        return grad_where(~mask, g), None, None


# --- the user-facing spellings: ta.cat, ta.stack, ta.unbind -------------------------------------

@dim_or_axis
def cat(tensors, axis=0):
    """Join tensors along an existing axis (PyTorch's dim= works too)."""
    tensors = one_dtype("cat", tensors)
    for position, tensor in enumerate(tensors):
        if tensor.ndim == 0:
            raise ShapeError(f"cat: zero-dimensional tensor (at position {position}) cannot be concatenated; "
                             "ta.stack(tensors) makes a 1-d tensor of 0-d ones")
    return Cat.apply(_axis(axis, tensors[0].ndim if tensors else 1, "cat"), *tensors)


@dim_or_axis
def stack(tensors, axis=0):
    """Stack tensors of one shape along a new axis (PyTorch's dim= works too)."""
    tensors = one_dtype("stack", tensors)
    return Stack.apply(_axis(axis, (tensors[0].ndim if tensors else 0) + 1, "stack"), *tensors)


@dim_or_axis
def unbind(tensor, axis=0):
    """The slices of a tensor along an axis, as a tuple of tensors (one graph node)."""
    slices = Unbind.apply(tensor, _axis(axis, tensor.ndim, "unbind"))
    return tuple(share_with_view(piece, tensor) for piece in slices)  # views: one version counter


def _axis(axis, ndim, op):
    if ndim == 0:  # axes() takes 0 or -1 for a 0-d tensor, but there is no dim to pick along
        raise AxisError(f"{op}: a 0-d tensor has no dim {axis} to work along; reshape it to (1,) first")
    return axes(axis, ndim, op)[0]
