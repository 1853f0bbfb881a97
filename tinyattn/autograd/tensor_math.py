"""Element-wise math a tensor offers beyond + - * / @ and the activations: powers (x ** p,
p ** x), abs, exp, log and sqrt, whose rules are in ops_math.py; and the comparisons and the logic
on masks (~, logical_not/and/or), which give bool tensors that carry no gradient. Tensor
inherits them (tensor.py's class line).
"""
import numbers

import numpy as np

from .errors import ShapeError


class TensorMath:
    __slots__ = ()  # a base of Tensor, whose instances keep their fixed slots

    def __pow__(self, exponent):
        if not isinstance(exponent, numbers.Real):
            raise TypeError(
                f"pow: the exponent must be a number, got {type(exponent).__name__}; "
                "for a tensor exponent write exp(b * log(a))"
            )
        if self.data.dtype.kind != "f":  # integers: as PyTorch, int ** int stays int, int ** float is float32
            if isinstance(exponent, numbers.Integral):
                if exponent < 0:
                    raise ValueError(f"pow: an integer tensor to the negative power {exponent}; "
                                     "convert it first with .float()")
                return _tensor.wrap(self.data.astype(np.int64) ** int(exponent))  # integers carry no gradient
            return _tensor._ew.Pow.apply(_tensor.wrap(self.data.astype(np.float32)), float(exponent))
        return _tensor._ew.Pow.apply(self, float(exponent))

    def __rpow__(self, base):
        """number ** tensor, element-wise (a float result, as exp(tensor * log(number)))."""
        if not isinstance(base, numbers.Real):
            raise TypeError(f"pow: {type(base).__name__} ** tensor needs a number as the base")
        if self.data.dtype.kind in "iu" and isinstance(base, numbers.Integral):  # int ** int stays int, as PyTorch
            if (self.data < 0).any():
                raise ValueError(f"pow: {base} ** an integer tensor with negative entries; convert it first with .float()")
            return _tensor.wrap(np.power(np.int64(base), self.data.astype(np.int64)))
        return _tensor._ew.PowOfNumber.apply(_tensor._floating(self), float(base))

    def __abs__(self):
        """|x| element-wise, same shape and dtype; dL/dx = g * sign(x)."""
        return _tensor._ew.Abs.apply(self)

    abs = __abs__

    def exp(self):
        """e^x element-wise, same shape; dL/dx = g * e^x. Integer input becomes float32."""
        return _tensor._ew.Exp.apply(_tensor._floating(self))

    def log(self):
        """Natural log element-wise, same shape; dL/dx = g / x. Integer input becomes float32."""
        return _tensor._ew.Log.apply(_tensor._floating(self))

    def sqrt(self):
        """Square root element-wise, same shape; dL/dx = g / (2 sqrt(x)). Integer input becomes float32."""
        return _tensor._ew.Sqrt.apply(_tensor._floating(self))

    # Comparisons give bool tensors that carry no gradient.
    def __lt__(self, other):
        return _tensor.wrap(self.data < _tensor._raw(other))

    def __le__(self, other):
        return _tensor.wrap(self.data <= _tensor._raw(other))

    def __gt__(self, other):
        return _tensor.wrap(self.data > _tensor._raw(other))

    def __ge__(self, other):
        return _tensor.wrap(self.data >= _tensor._raw(other))

    def __eq__(self, other):
        return _tensor.wrap(self.data == _tensor._raw(other))

    def __ne__(self, other):
        return _tensor.wrap(self.data != _tensor._raw(other))

    # Logic on masks: bool results, no gradient (any nonzero entry counts as True, as PyTorch's).
    def __invert__(self):
        """~x: logical not of a bool tensor (flips a mask's polarity), bitwise not of an integer
        one (~5 == -6), as PyTorch; a float tensor is a TypeError (use x == 0 or ta.logical_not)."""
        if self.data.dtype.kind not in "biu":
            raise TypeError(f"~ (invert) takes a bool or integer tensor, got {self.data.dtype}; for the places "
                            "where a float tensor is 0 write x == 0 (or ta.logical_not(x))")
        return _tensor.wrap(~self.data)

    def logical_not(self):
        """True where self is 0 (or False): bool, self's shape."""
        return _tensor.wrap(np.logical_not(self.data))

    def logical_and(self, other):
        """True where both are nonzero: bool, broadcast."""
        return _tensor.wrap(np.logical_and(self.data, _both_broadcast(self, other, "logical_and")))

    def logical_or(self, other):
        """True where either is nonzero: bool, broadcast."""
        return _tensor.wrap(np.logical_or(self.data, _both_broadcast(self, other, "logical_or")))


def _both_broadcast(x, other, op):
    """other's array, once its shape is known to broadcast against x's (a ShapeError naming both if not)."""
    other = np.asarray(_tensor._raw(other))
    try:
        np.broadcast_shapes(x.shape, other.shape)
    except ValueError:
        raise ShapeError(f"{op}: shapes {x.shape} and {other.shape} do not broadcast together") from None
    return other


from . import tensor as _tensor  # noqa: E402  (tensor.py imports this module before it defines Tensor; its _ew holds the rules of ops_math.py)
