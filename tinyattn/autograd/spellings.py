"""PyTorch's names: torch.NAME(x, ...) as ta.NAME, and what a missing name says.

ta.NAME for a tensor method is that method called on its first argument, so the two spellings
cannot drift apart. A PyTorch (or numpy) name tinyattn spells another way, or does not have, is
an AttributeError naming the spelling to write instead, not a bare "object has no attribute".
Used by Tensor (its KNOWN names only: see `explain_missing_names`), the tinyattn package,
tinyattn.nn and tinyattn.nn.functional (a module's __getattr__, PEP 562, costs a found name nothing).
"""
import difflib
import inspect

from .tensor import Tensor


# PyTorch (or numpy) names tinyattn spells another way, or does not have: what to write instead.
KNOWN = {
    "amax": "x.max(axis=dims, keepdims=...) (the values over one or several dims)",
    "amin": "x.min(axis=dims, keepdims=...)",
    "mm": "a @ b (or ta.matmul)",
    "bmm": "a @ b (batched matmul)",
    "matmul": "a @ b (or ta.matmul(a, b))",
    "square": "x * x (or x ** 2)",
    "log1p": "(1 + x).log()",
    "expm1": "x.exp() - 1",
    "concat": "ta.cat(tensors, dim)",
    "concatenate": "ta.cat(tensors, dim)",
    "hstack": "ta.cat(tensors, dim=-1)",
    "vstack": "ta.cat(tensors, dim=0)",
    "swapaxes": "x.transpose(dim0, dim1)",
    "moveaxis": "x.permute(order)",
    "movedim": "x.permute(order)",
    "expand_as": "x.expand(other.shape)",
    "view_as": "x.view(other.shape)",
    "reshape_as": "x.reshape(other.shape)",
    "type_as": "x.to(other.dtype)",
    "cuda": "nothing: tinyattn runs on the CPU only (x.to('cpu') is x)",
    "device": "nothing: tinyattn runs on the CPU only",
    "sort": "ta.topk(x, k=x.shape[dim], dim=dim) (values, indices), or np.sort(x.data) without a gradient",
    "argsort": "np.argsort(x.data, axis=dim) (indices carry no gradient)",
    "prod": "x.log().sum(dim).exp() for positive x, or np.prod(x.data) without a gradient",
    "nll_loss": "F.cross_entropy(logits, target) (it takes the logits and does the log_softmax itself)",
    "kl_div": "(p * (p.log() - log_q)).sum() composed",
    "silu": "x * x.sigmoid()",
    "swish": "x * x.sigmoid()",
}


def missing(owner, name, available):
    """The AttributeError for `owner.name`, with the nearest spellings that exist."""
    if name in KNOWN:
        hint = f"; write {KNOWN[name]}"
    else:
        near = difflib.get_close_matches(name, [n for n in available if not n.startswith("_")], n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(near)}?" if near else ""
    return AttributeError(f"{owner} has no attribute {name!r} (tinyattn does not have this PyTorch/numpy name){hint} "
                          "(docs/API.md lists what exists)")


def module_getattr(module_name, namespace):
    """A module-level __getattr__ (PEP 562) that raises `missing` for a name the module lacks."""
    def __getattr__(name):
        if name.startswith("__"):  # import machinery probing (__path__, __wrapped__, ...): the plain error
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        raise missing(f"module {module_name!r}", name, list(namespace))
    return __getattr__


class _Missing:
    """A class attribute standing for a KNOWN name the class lacks: reading it raises `missing`
    (an AttributeError, so hasattr() and getattr(x, name, default) still see a plain miss)."""

    def __init__(self, owner, name):
        self.owner, self.name = owner, name

    def __get__(self, instance, owner=None):
        raise missing(self.owner, self.name, ())


def explain_missing_names(cls):
    """Give `cls` a `_Missing` for each KNOWN name it does not have.

    Not a __getattr__: a class with one takes CPython's slow path for every attribute it reads,
    found or not (benchmarks/RESULTS.md, "three Tensor attribute reads, a subclass with a __getattr__"). A misspelling
    (x.sofmax) gets Python's own "Did you mean: 'softmax'?" where Python prints the traceback
    (python itself; from Python 3.12 also IPython, Jupyter and pytest); dir() leaves the stand-ins out."""
    for name in KNOWN:
        if not hasattr(cls, name):
            setattr(cls, name, _Missing(cls.__name__, name))

    def __dir__(self):  # the stand-ins are not attributes: not for Tab completion nor Python's suggestion
        return [name for name in object.__dir__(self) if not isinstance(vars(cls).get(name), _Missing)]

    cls.__dir__ = __dir__


# --------------------------------------------------------------------------------------------------
# ta.NAME(x, ...) for the tensor methods PyTorch also offers as torch.NAME(x, ...): ta.max(x, 1)
# is x.max(1), ta.exp(x) is x.exp(). Each is the method itself, called on its first argument (so
# the two spellings cannot drift apart); add, sub, mul, div and pow take a number first too, as
# torch.add(2, x) does. Ops with a function of their own (ta.var, ta.topk, ta.cat, ...) live beside
# their rules; a method PyTorch has only as a method (x.expand, x.repeat, x.view) has no ta.NAME.
# --------------------------------------------------------------------------------------------------

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
any = _method_as_function("any")  # noqa: A001
all = _method_as_function("all")  # noqa: A001
lerp = _method_as_function("lerp")
rsqrt = _method_as_function("rsqrt")
log2 = _method_as_function("log2")
exp2 = _method_as_function("exp2")
sin = _method_as_function("sin")
cos = _method_as_function("cos")
tan = _method_as_function("tan")
sinh = _method_as_function("sinh")
cosh = _method_as_function("cosh")
asinh = _method_as_function("asinh")
acosh = _method_as_function("acosh")
atanh = _method_as_function("atanh")
floor = _method_as_function("floor")
ceil = _method_as_function("ceil")
trunc = _method_as_function("trunc")
sign = _method_as_function("sign")
round = _method_as_function("round")  # noqa: A001


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


def matmul(a, b):
    """a @ b, PyTorch's torch.matmul: (..., n, k) @ (..., k, m) -> (..., n, m), batch axes broadcast."""
    return a @ b if isinstance(a, Tensor) else Tensor.__rmatmul__(b, a)
