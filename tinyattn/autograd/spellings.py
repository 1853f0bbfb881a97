"""What a missing name says: an AttributeError naming the PyTorch spelling that is missing and the
nearest tinyattn (or numpy) one, instead of a bare "object has no attribute".

Used by Tensor (its KNOWN names only: see `explain_missing_names`), the tinyattn package,
tinyattn.nn and tinyattn.nn.functional (a module's __getattr__, PEP 562, costs a found name nothing).
"""
import difflib

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
    found or not (three reads of a Tensor's attributes: 50 ns against 13; benchmarks/RESULTS.md,
    "Other measured facts"). A misspelling
    (x.sofmax) gets Python's own "Did you mean: 'softmax'?" where Python prints the traceback
    (python itself; from Python 3.12 also IPython, Jupyter and pytest); dir() leaves the stand-ins out."""
    for name in KNOWN:
        if not hasattr(cls, name):
            setattr(cls, name, _Missing(cls.__name__, name))

    def __dir__(self):  # the stand-ins are not attributes: not for Tab completion nor Python's suggestion
        return [name for name in object.__dir__(self) if not isinstance(vars(cls).get(name), _Missing)]

    cls.__dir__ = __dir__
