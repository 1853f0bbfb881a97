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
    get_rng_state,
    gradcheck,
    is_grad_enabled,
    manual_seed,
    no_grad,
    ones,
    randn,
    set_rng_state,
    stack,
    tensor,
    unbind,
    where,
    zeros,
)
from . import data, metrics, models, nn, optim, viz  # noqa: E402  (after the engine they build on)
from .train.checkpoint import CheckpointError, load, save  # noqa: E402

__version__ = "0.1.0"
