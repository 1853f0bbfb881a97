"""One BLAS thread on `import tinyattn`, even when numpy was imported first; the ways to change it.

No timing here: the figures are benchmarks/bench_blas_threads.py's (RESULTS.md, "BLAS threads").
"""
import os
import subprocess
import sys

import pytest

import tinyattn as ta
from tinyattn.ops import blas_threads as module

pytestmark = pytest.mark.skipif(ta.blas_threads() is None, reason="numpy's BLAS here is not OpenBLAS")
SCRIPT = "import numpy; import tinyattn as ta; print(ta.blas_threads())"  # numpy first, as a user's script


def _count_in_subprocess(**env_vars):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "TINYATTN_BLAS_THREADS")}
    env.update(env_vars)
    return subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True)


def _cores():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def test_import_sets_one_thread_though_numpy_loaded_first():
    result = _count_in_subprocess()
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1"


@pytest.mark.skipif(_cores() < 2, reason="OpenBLAS's own default is one thread on one core")
def test_auto_leaves_openblas_its_own_count():
    result = _count_in_subprocess(TINYATTN_BLAS_THREADS="auto")
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) >= 2


def test_a_bad_value_is_named_on_import():
    result = _count_in_subprocess(TINYATTN_BLAS_THREADS="one")
    assert result.returncode != 0 and "TINYATTN_BLAS_THREADS='one'" in result.stderr and "auto" in result.stderr


def test_a_number_or_the_users_openblas_variable_wins(monkeypatch):
    before = ta.blas_threads()
    try:
        monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
        monkeypatch.setenv("TINYATTN_BLAS_THREADS", "3")
        module.apply_default()
        assert ta.blas_threads() == 3
        monkeypatch.delenv("TINYATTN_BLAS_THREADS")
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")  # the user's own setting: tinyattn leaves it
        ta.set_blas_threads(2)
        module.apply_default()
        assert ta.blas_threads() == 2
    finally:
        ta.set_blas_threads(before)


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


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_set_blas_threads_names_a_bad_count(bad):
    with pytest.raises(ValueError, match="ta.set_blas_threads: n must be a whole number >= 1"):
        ta.set_blas_threads(bad)


def test_without_openblas_nothing_is_set_and_set_blas_threads_says_why(monkeypatch):
    monkeypatch.setattr(module, "_OPENBLAS", None)  # numpy built on MKL or Accelerate
    monkeypatch.setenv("TINYATTN_BLAS_THREADS", "1")
    module.apply_default()
    assert ta.blas_threads() is None
    with pytest.raises(RuntimeError, match="not an OpenBLAS.*MKL_NUM_THREADS"):
        ta.set_blas_threads(1)
