"""Element-wise ops, one idea per file; this module names them all in one place (Tensor's
operators call them through it):

    ops_arithmetic.py    Add, Sub, Mul, Div, Neg       (broadcasting, undone by unbroadcast)
    ops_activations.py   Tanh, Sigmoid, Relu, Hardtanh, Hardswish, Mish
    ops_math.py          Pow, PowTensor, PowOfNumber, Abs, Exp, Log, Sqrt, Rsqrt, Log2, Exp2,
                         Sin, Cos, Tan, Sinh, Cosh, Asinh, Acosh, Atanh, Step, Lerp
    ops_cast.py          Cast                          (a change of float dtype)
"""
from .ops_activations import Hardswish, Hardtanh, Mish, Relu, Sigmoid, Tanh  # noqa: F401
from .ops_arithmetic import Add, Div, Mul, Neg, Sub  # noqa: F401
from .ops_cast import Cast  # noqa: F401
from .ops_math import (Abs, Acosh, Asinh, Atanh, Cos, Cosh, Exp, Exp2, Lerp, Log, Log2, Pow, PowOfNumber, RoundedDiv,  # noqa: F401
                      PowTensor, Rsqrt, Sin, Sinh, Sqrt, Step, Tan)
