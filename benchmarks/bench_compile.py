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
from tinyattn.ops import additive_attention_arrays as aa, arrays as A
for dtype in (np.float32, np.float64):
    x = np.ones((2, 3, 5), dtype); mask = np.ones((2, 1, 5), bool)
    y = A.softmax(x); A.softmax(x, mask); A.softmax_backward(y, x)
    z = A.log_softmax(x); A.log_softmax_backward(z, x)
    q, k, v, values = np.ones((2, 1, 4), dtype), np.ones((2, 3, 4), dtype), np.ones(4, dtype), np.ones((2, 3, 5), dtype)
    c, w, hidden = aa.additive_attention(q, k, v, values, np.ones((2, 1, 3), bool))
    aa.additive_attention_backward(c, w, w, hidden, v, values)
    h = np.ones((2, 4), dtype)
    out = A.gru_gates(np.ones((2, 12), dtype), np.ones((2, 12), dtype), h, None)
    A.gru_gates_backward(h, h, *out[1:], np.ones((2, 12), dtype), None)
    out = A.lstm_gates(np.ones((2, 16), dtype), h, h, None)
    A.lstm_gates_backward(h, h, h, *out[2:], None)
    one = dtype(1)
    A.adam_update(h.copy(), h, h.copy(), h.copy(), (one, one), (one, one), one, one, one, one)
    A.scatter_rows(np.zeros(2, np.int64), h, 3)
    A.sigmoid(h)
    A.matmul(np.ones((2, 3, 1), dtype), np.ones((2, 1, 4), dtype))
    rows, column = np.ones((2, 3), dtype), np.ones(3, dtype)
    A.multiply(rows, np.ones((2, 1), dtype)); A.multiply(rows, column)
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
