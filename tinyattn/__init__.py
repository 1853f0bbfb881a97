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
    cross_entropy,
    enable_grad,
    full,
    get_rng_state,
    gradcheck,
    is_grad_enabled,
    manual_seed,
    matmul,
    no_grad,
    ones,
    ones_like,
    rand,
    randint,
    randn,
    set_rng_state,
    stack,
    tensor,
    unbind,
    where,
    zeros,
    zeros_like,
)
from .autograd.dtypes import bool, float16, float32, float64, int32, int64  # noqa: A004  (torch.bool's name)
from . import data, metrics, models, nn, optim, viz  # noqa: E402  (after the engine they build on)
from .nn.fused.switch import fused, is_fused  # noqa: E402  (the one switch for every fused node)
from .train.checkpoint import CheckpointError, load, save  # noqa: E402

__version__ = "0.1.0"
