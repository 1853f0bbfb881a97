"""help() on any public name gives its docstring: every public function, class and method of the
modules a learner imports has one of its own (not only one inherited from a base class)."""
import inspect

import numpy as np

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F

MODULES = {"ta": ta, "ta.nn": nn, "F": F, "ta.optim": ta.optim, "ta.train": ta.train, "ta.viz": ta.viz,
           "nn.init": nn.init, "ta.models": ta.models, "ta.autograd": ta.autograd}
# A Module's forward and a Function's forward/backward are described in their class's docstring.
DESCRIBED_BY_THE_CLASS = {"forward", "backward", "extra_repr"}


def _public(module):
    names = getattr(module, "__all__", None) or [name for name in dir(module) if not name.startswith("_")]
    for name in names:
        value = getattr(module, name)
        if inspect.ismodule(value) or not callable(value) or (isinstance(value, type) and issubclass(value, np.generic)):
            continue
        yield name, value


def test_every_public_name_and_method_has_its_own_docstring():
    missing = []
    for label, module in MODULES.items():
        for name, value in _public(module):
            own = value.__dict__.get("__doc__") if isinstance(value, type) else value.__doc__
            if not own:
                missing.append(f"{label}.{name}")
            if isinstance(value, type):
                missing += [f"{label}.{name}.{method}" for method, function in vars(value).items()
                            if not method.startswith("_") and method not in DESCRIBED_BY_THE_CLASS
                            and inspect.isfunction(function) and not function.__doc__]
    assert not missing, "no docstring: " + ", ".join(sorted(set(missing)))


def test_the_scan_sees_the_names_it_should():
    seen = {name for _, module in MODULES.items() for name, _ in _public(module)}
    assert {"tensor", "MultiheadAttention", "scaled_dot_product_attention", "AdamW", "fit", "xavier_uniform_"} <= seen
