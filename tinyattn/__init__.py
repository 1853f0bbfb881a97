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
)
from .autograd.functions import (  # noqa: A004  (torch.max, torch.sum, ...: PyTorch's names)
    abs, add, argmax, argmin, div, exp, log, log_softmax, logical_and, logical_not, logical_or, masked_fill, max,
    mean, min, mul, neg, norm, permute, pow, relu, reshape, sigmoid, softmax, sqrt, sub, sum, tanh, transpose,
    unsqueeze,
)
from .autograd.dtypes import bool, float16, float32, float64, int32, int64  # noqa: A004  (torch.bool's name)
from . import data, metrics, models, nn, optim, viz  # noqa: E402  (after the engine they build on)
from .nn.fused.switch import fused, is_fused  # noqa: E402  (the one switch for every fused node)
from .train.checkpoint import CheckpointError, load, save  # noqa: E402
from .compile import compile  # noqa: E402,A004  (torch.compile's name; the engine never imports it)
from .ops.blas_threads import apply_default as _one_blas_thread, blas_threads, set_blas_threads  # noqa: E402

from .autograd.spellings import module_getattr  # noqa: E402

_one_blas_thread()  # small products run faster on one thread: see ops/blas_threads.py
clip = clamp  # numpy's and PyTorch's other name
__version__ = "0.1.0"
__getattr__ = module_getattr(__name__, globals())
