"""`import tinyattn` changes nothing process-wide; programs set BLAS threads themselves
(ta.set_blas_threads), and ta.train.fit and the demos do.

No timing here: the figures are benchmarks/bench_blas_threads.py's (RESULTS.md, "BLAS threads").
"""
import io
import os
import runpy
import subprocess
import sys

import pytest

import tinyattn as ta
from tinyattn.ops import blas_threads as module

needs_openblas = pytest.mark.skipif(ta.blas_threads() is None, reason="numpy's BLAS here is not OpenBLAS")

# A user's script: numpy first. Everything process-wide a library could set, before and after the
# import; OpenBLAS's thread count read through ctypes, as no tinyattn code may run before the import.
_IMPORT_CHANGES_NOTHING = r"""
import ctypes, gc, os, sys, threading, warnings
import numpy as np

def openblas_threads():
    paths = {line.split(maxsplit=5)[-1].strip() for line in open("/proc/self/maps")}
    for path in sorted(p for p in paths if "openblas" in os.path.basename(p).lower()):
        library = ctypes.CDLL(path, mode=os.RTLD_NOLOAD)
        for name in ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
                     "openblas_get_num_threads64_", "openblas_get_num_threads"):
            if hasattr(library, name):
                return getattr(library, name)()
    return None

def state():
    return {"OpenBLAS threads": openblas_threads(), "gc threshold": gc.get_threshold(), "gc on": gc.isenabled(),
            "recursion limit": sys.getrecursionlimit(), "switch interval": sys.getswitchinterval(),
            "np.geterr": np.geterr(), "np.get_printoptions": np.get_printoptions(), "np.getbufsize": np.getbufsize(),
            "warnings.filters": list(warnings.filters), "os.environ": dict(os.environ),
            "sys.excepthook": sys.excepthook, "threads": threading.active_count()}

before = state()
import tinyattn
after = state()
changed = {key: (before[key], after[key]) for key in before if before[key] != after[key]}
print(changed or "nothing changed")
"""


def _run(script, **env_vars):
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    env.update(env_vars)
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads the loaded libraries from /proc (Linux)")
def test_import_changes_nothing_process_wide():
    result = _run(_IMPORT_CHANGES_NOTHING)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "nothing changed"


@needs_openblas
def test_set_blas_threads_holds_or_restores_after_a_block():
    before = ta.blas_threads()
    try:
        with ta.set_blas_threads(before + 1):
            assert ta.blas_threads() == before + 1
        assert ta.blas_threads() == before
        ta.set_blas_threads(before + 2)
        assert ta.blas_threads() == before + 2
    finally:
        ta.set_blas_threads(before)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True, None])
def test_set_blas_threads_names_a_bad_count(bad):
    with pytest.raises(ValueError, match=r"ta.set_blas_threads: n must be a whole number >= 1, got"):
        ta.set_blas_threads(bad)


def test_without_openblas_set_blas_threads_does_nothing(monkeypatch):
    monkeypatch.setattr(module, "_OPENBLAS", None)  # numpy built on MKL or Accelerate
    assert ta.blas_threads() is None
    with ta.set_blas_threads(1):
        assert ta.blas_threads() is None
    ta.set_blas_threads(2)
    assert ta.blas_threads() is None


def _one_step_model():
    model = ta.nn.Linear(3, 1)
    optimizer = ta.optim.SGD(model.parameters(), lr=0.1)
    x = ta.randn(4, 3)
    return model, optimizer, lambda step: (model(x) ** 2).mean()


@needs_openblas
def test_fit_trains_on_one_blas_thread_and_leaves_the_count_as_it_found_it():
    seen = []
    model, optimizer, loss = _one_step_model()
    before = ta.blas_threads()
    try:
        ta.set_blas_threads(2)
        ta.train.fit(model, optimizer, lambda step: (seen.append(ta.blas_threads()), loss(step))[1], 2,
                     stream=io.StringIO())
        assert seen == [1, 1] and ta.blas_threads() == 2
        seen.clear()
        ta.train.fit(model, optimizer, lambda step: (seen.append(ta.blas_threads()), loss(step))[1], 1,
                     stream=io.StringIO(), blas_threads=None)  # None: left as it is
        assert seen == [2]
        ta.train.fit(model, optimizer, lambda step: (seen.append(ta.blas_threads()), loss(step))[1], 1,
                     stream=io.StringIO(), blas_threads=3)
        assert seen == [2, 3] and ta.blas_threads() == 2
    finally:
        ta.set_blas_threads(before)


def test_fit_names_a_bad_thread_count():
    model, optimizer, loss = _one_step_model()
    with pytest.raises(ValueError, match="ta.set_blas_threads: n must be a whole number >= 1, got 0"):
        ta.train.fit(model, optimizer, loss, 1, blas_threads=0)


DEMOS = ["attention_descent", "gpt", "i_saw_a_saw", "induction_heads", "long_reviews", "see_backprop",
         "self_attention_by_hand", "translate", "what_is_it"]


@pytest.mark.parametrize("name", DEMOS)
def test_every_demo_sets_one_blas_thread_and_keeps_freed_memory_in_main(name, monkeypatch):
    """The calls, not their effect (running each demo would take minutes): main() makes them first."""
    demo = runpy.run_path(os.path.join(os.path.dirname(__file__), "..", "demos", name + ".py"))
    calls = []

    class Stop(Exception):
        pass

    def record(what):
        def call(*args):
            calls.append((what, args))
            if len(calls) == 2:
                raise Stop  # both made: the demo itself need not run
        return call

    monkeypatch.setattr(ta, "set_blas_threads", record("set_blas_threads"))
    monkeypatch.setattr(ta.ops, "keep_freed_memory", record("keep_freed_memory"))
    with pytest.raises(Stop):
        demo["main"]()
    assert sorted(calls) == [("keep_freed_memory", ()), ("set_blas_threads", (1,))]
