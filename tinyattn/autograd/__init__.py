"""The engine: Tensor, Function, the backward walk, no_grad, gradcheck, hooks and trace."""
from .tensor import Tensor, tensor  # first: the op modules need Tensor defined
from .spellings import explain_missing_names
from .tensor_conveniences import matmul
from .creation import full, full_like, ones, ones_like, zeros, zeros_like
from .ranges import arange, eye
from .rng import get_rng_state, manual_seed, set_rng_state
from .sampling import multinomial, rand, randint, randn
from .engine import backward
from .errors import ShapeError
from .function import Context, Function
from .grad_mode import enable_grad, is_grad_enabled, no_grad
from .gradcheck import GradcheckError, gradcheck
from .hooks import RemovableHandle
from .ops_nn import cross_entropy
from .ops_shape import cat, stack, unbind
from .ops_where import where
from .tracing import NodeRecord, trace
from .walk_order import reverse_topological_order
from .compare import clamp, maximum, minimum
from .ops_einsum import einsum
from .ops_select import cumsum, gather, topk
from .shaping import chunk, flatten, flip, repeat_interleave, split, squeeze, unflatten
from .triangles import tril, triu
from .statistics import logsumexp, std, std_mean, var
from .functions import (abs, add, argmax, argmin, div, exp, log, log_softmax, logical_and,  # noqa: A004
                        logical_not, logical_or, masked_fill, max, mean, min, mul, neg, norm, permute, pow,
                        relu, reshape, sigmoid, softmax, sqrt, sub, sum, tanh, transpose, unsqueeze)
from .tensor_math import (acosh, asinh, atanh, ceil, cos, cosh, exp2, floor, lerp, log2, round, rsqrt,  # noqa: A004
                          sign, sin, sinh, tan, trunc)

explain_missing_names(Tensor)  # x.amax says what to write instead (spellings.py)
