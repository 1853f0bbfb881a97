"""Import + first call of every Numba kernel, with a cold and then a warm on-disk cache.

Each measurement runs in a fresh Python process with NUMBA_CACHE_DIR pointing at a new
temporary folder (cold: every kernel compiles) and then at the same folder again (warm: every
kernel loads from the cache). Run: python benchmarks/bench_compile.py
"""
import os
import subprocess
import sys
import tempfile

FIRST_CALLS = r"""
import time
start = time.perf_counter()
import numpy as np
import tinyattn as ta
from tinyattn.ops import matmul as mm, softmax as sm
for dtype in (np.float32, np.float64):
    a = np.ones((3, 5, 4), dtype); b = np.ones((3, 4, 6), dtype)
    mm.matmul_numba(a, b)
    x = np.ones((2, 3, 5), dtype); mask = np.ones((2, 1, 5), bool)
    y = sm.softmax_numba(x); sm.softmax_numba(x, mask); sm.softmax_backward_numba(y, x)
    z = sm.log_softmax_numba(x); sm.log_softmax_backward_numba(z, x)
print(time.perf_counter() - start)
"""


def _seconds(cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", FIRST_CALLS], env=env, check=True,
                         capture_output=True, text=True).stdout
    return float(out.strip().splitlines()[-1])


def run():
    with tempfile.TemporaryDirectory() as cache_dir:
        cold = _seconds(cache_dir)
        warm = _seconds(cache_dir)
    rows = [{"what": "import + first call of every kernel, cold cache (compile)", "seconds": cold},
            {"what": "the same, warm cache (load)", "seconds": warm}]
    print("| what | seconds |\n|---|---|")
    for row in rows:
        print(f"| {row['what']} | {row['seconds']:.2f} |")
    return rows


if __name__ == "__main__":
    run()
