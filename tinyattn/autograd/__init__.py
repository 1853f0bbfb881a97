"""The engine: Tensor, Function, the backward walk, no_grad, gradcheck, hooks and trace.

Read it in this order: function.py (a differentiable step and its graph node), tensor.py (the
array that remembers its history), engine.py (the walk backward), then the rules by kind
(rules_elementwise.py, rules_reduce.py, rules_shape.py, rules_nn.py); inplace.py, dtypes.py,
creation.py, trace.py, gradcheck.py and spellings.py answer one question each.
"""
from .tensor import Tensor, tensor  # first: the rule modules reach Tensor through it
from .function import Context, Function, enable_grad, is_grad_enabled, no_grad
from .creation import (arange, eye, full, full_like, get_rng_state, manual_seed, multinomial, ones, ones_like,
                       rand, randint, randn, set_rng_state, zeros, zeros_like)
from .dtypes import ShapeError
from .engine import RemovableHandle, backward, reverse_topological_order
from .gradcheck import GradcheckError, gradcheck
from .trace import NodeRecord, trace
from .rules_elementwise import where
from .rules_reduce import clamp, logsumexp, maximum, minimum, std, std_mean, var
from .rules_shape import (cat, chunk, cumsum, flatten, flip, gather, repeat_interleave, split, squeeze, stack,
                          topk, tril, triu, unbind, unflatten)
from .rules_nn import cross_entropy, einsum
from .spellings import (abs, acosh, add, all, any, argmax, argmin, asinh, atanh, ceil, cos, cosh, div, exp, exp2,  # noqa: A004
                        explain_missing_names, floor, lerp, log, log2, log_softmax, logical_and, logical_not,
                        logical_or, masked_fill, matmul, max, mean, min, mul, neg, norm, permute, pow, relu,
                        reshape, round, rsqrt, sigmoid, sign, sin, sinh, softmax, sqrt, sub, sum, tan, tanh,
                        transpose, trunc, unsqueeze)

explain_missing_names(Tensor)  # x.amax says what to write instead (spellings.py)
