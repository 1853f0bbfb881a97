"""ops/memory.py: on glibc, keep_freed_memory() (which ta.train.fit calls) makes malloc reuse freed
memory (fewer page faults); importing tinyattn alone changes nothing in the process."""
import platform
import subprocess
import sys

import pytest

from tinyattn.ops.memory import keep_freed_memory

# A step's worth of arrays (256 KB to 4 MB), made and freed 20 times: the page faults of the loop.
_FAULTS = """
import resource, sys, numpy as np, tinyattn
if sys.argv[1] == "call":
    tinyattn.ops.keep_freed_memory()
def step():
    return [np.ones(n, np.float32) for n in (2 ** 16, 2 ** 17, 2 ** 18, 2 ** 19, 2 ** 20)]
step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    arrays = step()
    del arrays
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _page_faults(malloc_setting, call):
    env = {"TINYATTN_MALLOC": malloc_setting, "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-c", _FAULTS, "call" if call else "import only"], capture_output=True,
                         text=True, env=env, check=True)
    return int(run.stdout.strip())


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_keep_freed_memory_keeps_freed_arrays_for_reuse_and_importing_does_not():
    kept, imported, system = _page_faults("", True), _page_faults("", False), _page_faults("system", True)
    # system malloc hands some of the pages back after each round and faults them in again
    assert system > 200 and kept * 5 < system, (kept, system)
    assert imported > 200 and kept * 5 < imported, (kept, imported)  # no side effect on import


def test_tinyattn_malloc_system_leaves_malloc_alone(monkeypatch):
    monkeypatch.setenv("TINYATTN_MALLOC", "system")
    assert keep_freed_memory() is False
