"""tinyattn: a small, readable, gradient-checked autograd engine for learning attention.

    import tinyattn as ta
    x = ta.tensor([[1.0, 2.0]], requires_grad=True)
    (x * x).sum().backward();  x.grad   # -> [[2., 4.]]
"""
from . import autograd, ops
from .autograd import (
    Function,
    GradcheckError,
    ShapeError,
    Tensor,
    arange,
    backward,
    cat,
    chunk,
    clamp,
    cross_entropy,
    cumsum,
    einsum,
    enable_grad,
    eye,
    flatten,
    flip,
    full,
    full_like,
    gather,
    get_rng_state,
    gradcheck,
    is_grad_enabled,
    logsumexp,
    manual_seed,
    matmul,
    maximum,
    minimum,
    multinomial,
    no_grad,
    ones,
    ones_like,
    rand,
    randint,
    randn,
    set_rng_state,
    split,
    squeeze,
    stack,
    std,
    tensor,
    topk,
    tril,
    triu,
    unbind,
    unflatten,
    var,
    where,
    zeros,
    zeros_like,
    repeat_interleave,
    std_mean,
)
from .autograd.spellings import (  # noqa: A004  (torch.max, torch.sum, torch.round, ...: PyTorch's names)
    abs, acosh, add, all, any, argmax, argmin, asinh, atanh, ceil, cos, cosh, div, exp, exp2, floor, lerp, log, log2,
    log_softmax, logical_and, logical_not, logical_or, masked_fill, max, mean, min, mul, neg, norm, permute, pow, relu,
    reshape, round, rsqrt, sigmoid, sign, sin, sinh, softmax, sqrt, sub, sum, tan, tanh, transpose, trunc, unsqueeze,
)
from .autograd.dtypes import bool, float16, float32, float64, int32, int64  # noqa: A004  (torch.bool's name)
from .autograd.spellings import module_getattr
from . import data, metrics, models, nn, optim, viz  # after the engine they build on
from .ops.blocks import fused, is_fused  # the one switch of the blocks table (ops/blocks.py)
from .train.checkpoint import CheckpointError, load, save
from .compile import compile  # noqa: A004  (torch.compile's name; the engine never imports it)
from .ops.blas_threads import blas_threads, set_blas_threads  # a program's choice; importing sets nothing

clip = clamp  # numpy's and PyTorch's other name
__version__ = "0.1.0"
__getattr__ = module_getattr(__name__, globals())
