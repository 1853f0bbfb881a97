"""ta.NAME(x, ...) for the tensor methods PyTorch also offers as torch.NAME(x, ...): ta.max(x, 1)
is x.max(1), ta.exp(x) is x.exp(). Each is the method itself, called on its first argument (so
the two spellings cannot drift apart); add, sub, mul, div and pow take a number first too, as
torch.add(2, x) does. Ops with a function of their own (ta.var, ta.topk, ta.cat, ...) live beside
their rules; a method PyTorch has only as a method (x.expand, x.repeat, x.view) has no ta.NAME.
"""
import inspect

from .tensor import Tensor


def _method_as_function(name):
    """ta.NAME(input, *args, **kwargs) = input.NAME(*args, **kwargs), with the method's signature and doc."""
    method = getattr(Tensor, name)

    def function(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}; "
                            f"wrap it first: ta.{name}(ta.tensor(...), ...)")
        return method(input, *args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__module__ = __name__
    function.__doc__ = f"ta.{name}(x, ...) is x.{name}(...): {method.__doc__ or ''}"
    signature = inspect.signature(method)
    self_param, *rest = signature.parameters.values()
    function.__signature__ = signature.replace(parameters=[self_param.replace(name="input"), *rest])
    return function


max = _method_as_function("max")  # noqa: A001  (torch's names shadow Python's inside this module only)
min = _method_as_function("min")  # noqa: A001
abs = _method_as_function("abs")  # noqa: A001
sum = _method_as_function("sum")  # noqa: A001
neg = _method_as_function("neg")
exp = _method_as_function("exp")
log = _method_as_function("log")
sqrt = _method_as_function("sqrt")
tanh = _method_as_function("tanh")
sigmoid = _method_as_function("sigmoid")
relu = _method_as_function("relu")
mean = _method_as_function("mean")
argmax = _method_as_function("argmax")
argmin = _method_as_function("argmin")
softmax = _method_as_function("softmax")
log_softmax = _method_as_function("log_softmax")
norm = _method_as_function("norm")
unsqueeze = _method_as_function("unsqueeze")
reshape = _method_as_function("reshape")
transpose = _method_as_function("transpose")
permute = _method_as_function("permute")
masked_fill = _method_as_function("masked_fill")
logical_not = _method_as_function("logical_not")
logical_and = _method_as_function("logical_and")
logical_or = _method_as_function("logical_or")


def add(input, other, *, alpha=1):
    """input + alpha * other (torch.add); either may be a number."""
    return input + (other if alpha == 1 else other * alpha)


def sub(input, other, *, alpha=1):
    """input - alpha * other (torch.sub); either may be a number."""
    return input - (other if alpha == 1 else other * alpha)


def mul(input, other):
    """input * other (torch.mul); either may be a number."""
    return input * other


def div(input, other, *, rounding_mode=None):
    """input / other (torch.div); rounding_mode "trunc" or "floor" as x.div's (input a Tensor then)."""
    if rounding_mode is None:
        return input / other
    if not isinstance(input, Tensor):
        raise TypeError(f"div: rounding_mode={rounding_mode!r} needs a Tensor as input, got {type(input).__name__}; "
                        "write ta.div(ta.tensor(n), other, rounding_mode=...)")
    return input.div(other, rounding_mode=rounding_mode)


def pow(input, exponent):  # noqa: A001  (torch.pow)
    """input ** exponent (torch.pow): a tensor to a number's power, or a number to a tensor's."""
    return input ** exponent
