"""Element-wise ops, one idea per file; this module names them all in one place (Tensor's
operators call them through it):

    ops_arithmetic.py    Add, Sub, Mul, Div, RoundedDiv, Neg  (broadcasting, undone by unbroadcast)
    ops_activations.py   Tanh, Sigmoid, Relu
    ops_math.py          Pow, PowOfNumber, Abs, Exp, Log, Sqrt
    ops_cast.py          Cast                          (a change of float dtype)
"""
from .ops_activations import Relu, Sigmoid, Tanh  # noqa: F401
from .ops_arithmetic import Add, Div, Mul, Neg, RoundedDiv, Sub  # noqa: F401
from .ops_cast import Cast  # noqa: F401
from .ops_math import Abs, Exp, Log, Pow, PowOfNumber, Sqrt  # noqa: F401
