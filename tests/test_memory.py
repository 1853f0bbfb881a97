"""ops/memory.py: on glibc, importing tinyattn makes malloc reuse freed memory (fewer page faults)."""
import platform
import subprocess
import sys

import pytest

from tinyattn.ops.memory import keep_freed_memory

# A step's worth of arrays (256 KB to 4 MB), made and freed 20 times: the page faults of the loop.
_FAULTS = """
import resource, numpy as np, tinyattn
def step():
    return [np.ones(n, np.float32) for n in (2 ** 16, 2 ** 17, 2 ** 18, 2 ** 19, 2 ** 20)]
step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    arrays = step()
    del arrays
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _page_faults(malloc_setting):
    env = {"TINYATTN_MALLOC": malloc_setting, "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-c", _FAULTS], capture_output=True, text=True, env=env, check=True)
    return int(run.stdout.strip())


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_importing_tinyattn_keeps_freed_arrays_for_reuse():
    kept, system = _page_faults(""), _page_faults("system")
    # system malloc hands some of the pages back after each round and faults them in again
    assert system > 200 and kept * 5 < system, (kept, system)


def test_tinyattn_malloc_system_leaves_malloc_alone(monkeypatch):
    monkeypatch.setenv("TINYATTN_MALLOC", "system")
    assert keep_freed_memory() is False
