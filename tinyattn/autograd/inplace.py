"""In-place ops with PyTorch's meaning: x += y, x.add_(y), x.zero_(), x[0] = 5, ...

    with ta.no_grad():
        p -= lr * p.grad          # changes p's array in place: the hand-written SGD step

Three cases, as in PyTorch:
1. Under no_grad (or when nothing involved needs a gradient) the new values are written into
   the tensor's own array, so every view of it and every holder of it (an optimiser) sees them.
2. A leaf that requires grad, outside no_grad, is refused: its .grad would no longer belong to
   the values it holds.
3. Any other tensor in grad mode gets the change recorded: the out-of-place op runs on a copy of
   the old values (`_earlier`, which keeps the old history), the result is written into the
   array, and the tensor's history becomes the new node. Nodes that used the tensor before the
   change still reach its old history (as_used_by, at the end of this file).
Every change adds one to `x._version` (versions.py): a node that saved the old array for its
backward then raises instead of giving a wrong gradient.
"""
import numbers

import numpy as np

from . import hooks as _hooks, versions
from .grad_mode import is_grad_enabled
from .rng import generator as _tinyattn_generator


class InPlaceOps:
    __slots__ = ()  # a base of Tensor, whose instances keep their fixed slots

    @property
    def _version(self):
        """How many in-place changes this tensor's memory has seen (shared with its views)."""
        return versions.version(self)

    def _change_in_place(self, op, out_of_place, *others):
        """Make self equal out_of_place(self), writing into self's array (module docstring);
        `others` are the operands besides self (a gradient may need to reach them)."""
        if not is_grad_enabled() or not (self.requires_grad or any(getattr(o, "requires_grad", False) for o in others)):
            result = out_of_place(self)  # nothing to record: computed from self's own values
        else:
            if self.requires_grad and self._ctx is None:
                raise RuntimeError(
                    f"{op}: a leaf Variable that requires grad is being used in an in-place operation. "
                    "Change a parameter in place inside `with ta.no_grad():` (an optimiser step), "
                    "or write the change out of place (x = x + ...)")
            earlier = _with_history_of(self)
            result = out_of_place(earlier)
            if result._ctx is not None and self._versions is not None and self._versions.shared:
                raise RuntimeError(
                    f"{op}: this tensor shares its memory with another (it is a view like x[0], x.T, "
                    "x.reshape(...) or x.detach(), or has one), and the change needs a gradient; PyTorch "
                    "rewrites the other's history (CopySlices), tinyattn does not. Write the change out of "
                    "place (ta.where, masked_fill, ta.cat) or make the view a copy first (.clone())")
        if result.shape != self.shape:
            raise RuntimeError(f"{op}: output with shape {list(self.shape)} doesn't match the broadcast "
                               f"shape {list(result.shape)} (an in-place op cannot grow the tensor)")
        if not np.can_cast(result.dtype, self.dtype, casting="same_kind"):
            raise RuntimeError(f"{op}: result type {result.dtype} can't be cast to the desired output type "
                               f"{self.dtype}; convert first (x = x.float())")
        np.copyto(self.data, result.data, casting="same_kind")
        versions.bump(self)
        if result._ctx is not None:  # recorded: self now stands for the node's output
            self._earlier = earlier
            old_node, old_index = self._ctx, self._out_index
            self._ctx, self._out_index, self.requires_grad = result._ctx, result._out_index, True
            _hooks.follow_in_place_change(self, old_node, old_index)
        return self

    # --- arithmetic ---------------------------------------------------------------------------
    def add_(self, other, *, alpha=1):
        """self += alpha * other, in place (PyTorch's add_)."""
        return self._change_in_place("add_", lambda x: x + scaled("add_", other, alpha), other)

    def sub_(self, other, *, alpha=1):
        """self -= alpha * other, in place (PyTorch's sub_)."""
        return self._change_in_place("sub_", lambda x: x - scaled("sub_", other, alpha), other)

    def mul_(self, other):
        """self *= other, in place."""
        return self._change_in_place("mul_", lambda x: x * other, other)

    def div_(self, other):
        """self /= other, in place."""
        return self._change_in_place("div_", lambda x: x / other, other)

    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    def clamp_(self, min=None, max=None):  # noqa: A002  (PyTorch's argument names)
        """self = self clamped to [min, max], in place (PyTorch's clamp_)."""
        return self._change_in_place("clamp_", lambda x: x.clamp(min, max), min, max)

    # --- new values: the old ones get no gradient ------------------------------------------------
    def fill_(self, value):
        """Every element set to `value` (a number, or a 0-d tensor whose gradient is the sum of g)."""
        return self._change_in_place("fill_", lambda x: _replaced(x, value), value)

    def zero_(self):
        """Every element set to 0."""
        return self.fill_(0)

    def copy_(self, src):
        """src's values (broadcast to self's shape, cast to self's dtype); the gradient flows to src.
        src may also be a numpy array or a number (PyTorch wants a Tensor; the values are the same)."""
        if not isinstance(src, _tensor.Tensor):
            src = _tensor.wrap(np.asarray(src))
        if src.dtype != self.dtype:
            src = src.to(self.dtype)
        return self._change_in_place("copy_", lambda x: _replaced(x, src), src)

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        """Fill with draws from N(mean, std^2), from tinyattn's generator (ta.manual_seed) or `generator`."""
        draws = (generator or _tinyattn_generator()).normal(mean, std, self.shape)
        return self.copy_(_tensor.wrap(draws.astype(self.dtype)))

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        """Fill with draws from U(a, b), from tinyattn's generator (ta.manual_seed) or `generator`."""
        draws = (generator or _tinyattn_generator()).uniform(a, b, self.shape)
        return self.copy_(_tensor.wrap(draws.astype(self.dtype)))

    # --- assignment to an index ----------------------------------------------------------------
    def __setitem__(self, index, value):
        """x[index] = value, in place. Allowed where no gradient has to pass through it (under
        no_grad, or when neither x nor value requires grad); in the graph, write it out of place."""
        if is_grad_enabled() and (self.requires_grad or getattr(value, "requires_grad", False)):
            raise RuntimeError(
                "x[index] = value on a tensor in the graph: tinyattn records no gradient through an "
                "index assignment. Inside `with ta.no_grad():` it is allowed; in the graph build the "
                "new tensor out of place (ta.where(mask, value, x), x.masked_fill(mask, value), ta.cat)")
        value = value.data if isinstance(value, _tensor.Tensor) else value
        self.data[_tensor._raw_index(index)] = value
        versions.bump(self)


def scaled(op, other, alpha):
    """alpha * other for add/sub(other, alpha=): alpha a number, as PyTorch's (a Tensor is refused there too)."""
    if not isinstance(alpha, numbers.Number):
        raise TypeError(f"{op}: alpha must be a number, got {type(alpha).__name__} (for a tensor factor write "
                        f"x {'-' if op.startswith('sub') else '+'} factor * other)")
    return other if alpha == 1 else other * alpha


def _replaced(x, value):
    """A tensor of x's shape holding `value` everywhere, on the graph: g flows to value, not to x."""
    everywhere = np.ones(x.shape, dtype=bool)
    if isinstance(value, _tensor.Tensor):
        return _tensor._where.Where.apply(everywhere, value, x)
    return x.masked_fill(everywhere, value)


def _with_history_of(tensor):
    """A new tensor holding a copy of `tensor`'s values and its place in the graph."""
    earlier = _tensor.wrap(tensor.data.copy())
    earlier.requires_grad, earlier._ctx, earlier._out_index = tensor.requires_grad, tensor._ctx, tensor._out_index
    # The chain of earlier values is kept only while a graph that may reach them is alive.
    earlier._earlier = tensor._earlier if tensor._ctx is not None and not tensor._ctx.freed else None
    return earlier


def as_used_by(tensor, node):
    """`tensor` as it was when `node` used it: an in-place change made later in grad mode
    gave it a newer history, and keeps the one before in `_earlier` (the walk asks here)."""
    # >=: a node's own output is never its input, so a tensor it made stood for an earlier value
    while tensor._ctx is not None and tensor._ctx._created >= node._created:
        tensor = tensor._earlier
    return tensor


from . import tensor as _tensor  # noqa: E402  (tensor.py imports this module before it defines Tensor)
