"""Element-wise math a tensor offers beyond + - * / @ and the activations: powers (x ** p,
p ** x, x ** tensor), abs, exp, log, sqrt, rsqrt, log2, exp2, sin ... atanh, lerp and the steps
(floor, ceil, round, trunc, sign), whose rules are in ops_math.py; and the comparisons and the logic on masks (~,
logical_not/and/or), which give bool tensors that carry no gradient. Tensor inherits them (tensor.py's class line); the functions
at the end are their torch.NAME(x, ...) spellings, ta.NAME.
"""
import numbers

import numpy as np

from .errors import ShapeError, require_float


class TensorMath:
    __slots__ = ()  # a base of Tensor, whose instances keep their fixed slots

    def __pow__(self, exponent):
        if isinstance(exponent, (_tensor.Tensor, np.ndarray)):
            return _pow_tensors(self, exponent)
        if not isinstance(exponent, numbers.Real):
            raise TypeError(f"pow: the exponent must be a number or a tensor, got {type(exponent).__name__}")
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
        if isinstance(base, np.ndarray):
            return _pow_tensors(base, self)
        if not isinstance(base, numbers.Real):
            raise TypeError(f"pow: {type(base).__name__} ** tensor needs a number, an array or a tensor as the base")
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

    def rsqrt(self):
        """1 / sqrt(x) element-wise; dL/dx = -g / (2 x^1.5). Integer input becomes float32."""
        return _tensor._ew.Rsqrt.apply(_tensor._floating(self))

    def log2(self):
        """log base 2 element-wise; dL/dx = g / (x log 2). Integer input becomes float32."""
        return _tensor._ew.Log2.apply(_tensor._floating(self))

    def exp2(self):
        """2 ** x element-wise; dL/dx = g 2^x log 2. Integer input becomes float32."""
        return _tensor._ew.Exp2.apply(_tensor._floating(self))

    def sin(self):
        """sin element-wise (radians); dL/dx = g cos(x). Integer input becomes float32."""
        return _tensor._ew.Sin.apply(_tensor._floating(self))

    def cos(self):
        """cos element-wise (radians); dL/dx = -g sin(x). Integer input becomes float32."""
        return _tensor._ew.Cos.apply(_tensor._floating(self))

    def tan(self):
        """tan element-wise (radians); dL/dx = g (1 + tan(x)^2). Integer input becomes float32."""
        return _tensor._ew.Tan.apply(_tensor._floating(self))

    def sinh(self):
        """sinh element-wise; dL/dx = g cosh(x). Integer input becomes float32."""
        return _tensor._ew.Sinh.apply(_tensor._floating(self))

    def cosh(self):
        """cosh element-wise; dL/dx = g sinh(x). Integer input becomes float32."""
        return _tensor._ew.Cosh.apply(_tensor._floating(self))

    def asinh(self):
        """The inverse of sinh element-wise; dL/dx = g / sqrt(x^2 + 1). Integer input becomes float32."""
        return _tensor._ew.Asinh.apply(_tensor._floating(self))

    def acosh(self):
        """The inverse of cosh element-wise (NaN below 1); dL/dx = g / sqrt(x^2 - 1). Integers become float32."""
        return _tensor._ew.Acosh.apply(_tensor._floating(self))

    def atanh(self):
        """The inverse of tanh element-wise (NaN outside [-1, 1]); dL/dx = g / (1 - x^2). Integers become float32."""
        return _tensor._ew.Atanh.apply(_tensor._floating(self))

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
        """-1, 0 or 1 as x is negative, zero or positive (0 at NaN, as PyTorch), same dtype; zero gradient."""
        return _step(self, _sign)

    def lerp(self, end, weight):
        """self + weight * (end - self) element-wise (weight a number or a tensor; all broadcast);
        gradients to self, end and a tensor weight."""
        return lerp(self, end, weight)

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


def _pow_tensors(base, exponent):
    """base ** exponent with at least one a tensor (or array): PowTensor, broadcast; integers
    stay integers and carry no gradient, as PyTorch's."""
    base, exponent = _tensor._pair(base, exponent)
    if base.data.dtype.kind == "f":
        return _tensor._ew.PowTensor.apply(base, exponent)
    if (exponent.data < 0).any():
        raise ValueError("pow: integers to negative integer powers are not allowed (PyTorch's rule too); "
                         "convert the base with .float() first")
    return _tensor.wrap(np.power(base.data, exponent.data))


def _step(x, step):
    """floor, ceil, round, trunc or sign of x: the Step node for floats (zero gradient), a plain
    copy of integers (numpy would make them float64; PyTorch keeps the dtype)."""
    if x.data.dtype.kind != "f":
        return _tensor.wrap(np.sign(x.data) if step is _sign else x.data.copy())
    return _tensor._ew.Step.apply(x, step)


def _sign(a):
    """numpy's sign, but 0 at NaN, as PyTorch's."""
    return np.where(np.isnan(a), 0, np.sign(a))


def _tensor_input(op, input):
    if not isinstance(input, _tensor.Tensor):
        raise TypeError(f"{op}: expected a Tensor as input, got {type(input).__name__} (make one with ta.tensor(...))")
    return input


# torch.NAME(input, ...) for each method above: ta.NAME
def lerp(input, end, weight):
    """input + weight * (end - input), PyTorch's lerp: input and end tensors, weight a number or a
    tensor (all broadcast, one float dtype); gradients to all three."""
    _tensor_input("lerp", input)
    if not isinstance(end, _tensor.Tensor):
        raise TypeError(f"lerp: end must be a Tensor, got {type(end).__name__}")
    require_float("lerp", input=input.data, end=end.data)
    if isinstance(weight, _tensor.Tensor):
        require_float("lerp", weight=weight.data)
    elif not isinstance(weight, numbers.Real):
        raise TypeError(f"lerp: weight must be a number or a Tensor, got {type(weight).__name__}")
    return _tensor._ew.Lerp.apply(input, end, weight)


def rsqrt(input):
    """1 / sqrt(input) element-wise (torch.rsqrt)."""
    return _tensor_input("rsqrt", input).rsqrt()


def log2(input):
    """log base 2 element-wise (torch.log2)."""
    return _tensor_input("log2", input).log2()


def exp2(input):
    """2 ** input element-wise (torch.exp2)."""
    return _tensor_input("exp2", input).exp2()


def sin(input):
    """sin element-wise, radians (torch.sin)."""
    return _tensor_input("sin", input).sin()


def cos(input):
    """cos element-wise, radians (torch.cos)."""
    return _tensor_input("cos", input).cos()


def tan(input):
    """tan element-wise, radians (torch.tan)."""
    return _tensor_input("tan", input).tan()


def sinh(input):
    """sinh element-wise (torch.sinh)."""
    return _tensor_input("sinh", input).sinh()


def cosh(input):
    """cosh element-wise (torch.cosh)."""
    return _tensor_input("cosh", input).cosh()


def asinh(input):
    """The inverse of sinh element-wise (torch.asinh)."""
    return _tensor_input("asinh", input).asinh()


def acosh(input):
    """The inverse of cosh element-wise, NaN below 1 (torch.acosh)."""
    return _tensor_input("acosh", input).acosh()


def atanh(input):
    """The inverse of tanh element-wise, NaN outside [-1, 1] (torch.atanh)."""
    return _tensor_input("atanh", input).atanh()


def floor(input):
    """The largest whole number <= input; zero gradient (torch.floor)."""
    return _tensor_input("floor", input).floor()


def ceil(input):
    """The smallest whole number >= input; zero gradient (torch.ceil)."""
    return _tensor_input("ceil", input).ceil()


def trunc(input):
    """input with its fraction dropped; zero gradient (torch.trunc)."""
    return _tensor_input("trunc", input).trunc()


def round(input, *, decimals=0):  # noqa: A001  (torch.round's name)
    """input rounded to `decimals` places, halves to even; zero gradient (torch.round)."""
    return _tensor_input("round", input).round(decimals)


def sign(input):
    """-1, 0 or 1 by the sign of input; zero gradient (torch.sign)."""
    return _tensor_input("sign", input).sign()


from . import tensor as _tensor  # noqa: E402  (tensor.py imports this module before it defines Tensor; its _ew holds the rules of ops_math.py)
