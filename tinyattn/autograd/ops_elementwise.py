"""Element-wise ops, one idea per file; this module names them all in one place (Tensor's
operators call them through it):

    ops_arithmetic.py    Add, Sub, Mul, Div, Neg       (broadcasting, undone by unbroadcast)
    ops_activations.py   Tanh, Sigmoid, Relu
    ops_math.py          Pow, PowOfNumber, Abs, Exp, Log, Sqrt, RoundedDiv
    ops_cast.py          Cast                          (a change of float dtype)
"""
from .ops_activations import Relu, Sigmoid, Tanh  # noqa: F401
from .ops_arithmetic import Add, Div, Mul, Neg, Sub  # noqa: F401
from .ops_cast import Cast  # noqa: F401
from .ops_math import Abs, Exp, Log, Pow, PowOfNumber, RoundedDiv, Sqrt  # noqa: F401
