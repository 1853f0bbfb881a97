"""A wrong gradient names its own argument; every method an error message suggests exists; the
stand-ins for PyTorch names tinyattn lacks stay out of dir(); nn.init loads on its own."""
import ast
import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
from tinyattn.autograd.function import Context


def test_a_wrong_gradient_names_its_own_argument_even_when_two_arguments_share_one_array():
    """engine.py: the position is found by `[g is grad for g in in_grads].index(True)`, so a
    backward that returns one array for both arguments (the usual learner's slip: forgetting
    to unbroadcast b's gradient) is reported against argument 0, whose gradient was right."""
    class BadAdd(ta.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g, g  # b was broadcast: its gradient should be summed to b's shape

    a, b = ta.randn(2, 3, requires_grad=True), ta.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"shape \(2, 3\) for argument 1, a float32 tensor of shape \(3,\)"):
        BadAdd.apply(a, b).sum().backward()


def test_the_placeholders_for_missing_pytorch_names_are_not_offered_as_attributes():
    """spellings.explain_missing_names puts 31 raising class attributes on Tensor; dir() lists
    them, so Tab completion offers x.cuda / x.prod / x.sort, and CPython's own suggestion points
    a misspelling at a name that does not exist either (x.amx -> "Did you mean: 'amax'?")."""
    x = ta.zeros(2)
    phantom = [name for name in ("amax", "cuda", "device", "prod", "sort") if name in dir(x)]
    assert phantom == [], phantom
    shown = subprocess.run([sys.executable, "-c", "import tinyattn as ta; ta.zeros(2).amx"],
                           capture_output=True, text=True, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"}).stderr
    assert "Did you mean: 'amax'?" not in shown, shown


def test_nn_init_with_he_et_als_initialisers_loads_first_with_the_package_inits_stubbed():
    """nn/init.py holds kaiming_* and calculate_gain itself (they were nn/kaiming.py, in an import
    circle with init.py that failed when kaiming.py was loaded first): loaded first, with the
    package __init__s stubbed (any import order other than today's), it needs nothing else of nn/."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = textwrap.dedent(f"""
        import importlib, os, sys, types
        for pkg in ("tinyattn", "tinyattn.nn"):
            m = types.ModuleType(pkg); m.__path__ = [os.path.join({root!r}, *pkg.split("."))]; sys.modules[pkg] = m
        init = importlib.import_module("tinyattn.nn.init")
        assert init.calculate_gain("relu") == 2 ** 0.5 and callable(init.kaiming_normal_)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr.strip().splitlines()[-1]


# --- every suggestion in an error message works as written ---
RECEIVERS = {"x": "tensor", "t": "tensor", "y": "tensor", "loss": "tensor", "logits": "tensor", "model": "module",
             "module": "module", "ctx": "ctx"}


NOT_NAMES = {("e", "g"), ("", "npz"), ("ctx", "saved_tensors")}  # "e.g.", a file extension, a name refused


def _suggestions():
    """(receiver or "", name) of every `.name` written in a raise or a warning of the package."""
    found = set()
    for path in pathlib.Path(ta.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) or (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "warn"):
                for part in ast.walk(node):
                    if isinstance(part, ast.Constant) and isinstance(part.value, str):
                        found.update(re.findall(r"(?:\b([a-z_]\w*)|(?<=[\s(`'\"]))\.([a-z_]\w*)", part.value))
    return sorted(found - NOT_NAMES)


def test_every_method_an_error_message_suggests_exists():
    suggestions = _suggestions()
    assert ("", "float") in suggestions and ("nn", "padding_mask") in suggestions  # the scan finds them
    things = {"tensor": ta.ones(2), "module": nn.Linear(2, 2), "ta": ta, "nn": nn, "np": np, "sys": sys, "ctx": Context}
    for receiver, name in suggestions:
        if receiver == "tinyattn":  # a module to run: python -m tinyattn.NAME
            assert importlib.util.find_spec(f"tinyattn.{name}"), f"an error message names tinyattn.{name}"
            continue
        target = things[RECEIVERS.get(receiver, receiver or "tensor")]
        assert hasattr(target, name), f"an error message suggests {receiver}.{name}, which does not exist"
