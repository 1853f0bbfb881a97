"""How many threads numpy's BLAS may use for matrix products: a program's choice, never the import's.

tinyattn's models multiply small matrices (64 x 64 weights, batches of 32 x 64 rows), hundreds
of products a training step. OpenBLAS, numpy's BLAS, splits a product over every core and keeps
its worker threads spinning between products; on a busy 2-core machine the workers and the
Python thread fight for the same cores, and a training step runs slower with numpy's default
than with one thread; with a core free, one thread costs the small models' steps little and big
products most (benchmarks/bench_blas_threads.py measures both: benchmarks/RESULTS.md, "BLAS threads").

The count holds for the whole process, so `import tinyattn` leaves it alone; a program sets it:

    ta.set_blas_threads(n)                n threads from then on; `with ta.set_blas_threads(n):` for a block
    ta.blas_threads()                     the current count, None if numpy's BLAS is not OpenBLAS
    ta.train.fit(..., blas_threads=1)     one thread while it trains (the default), the count before after;
                                          None leaves it as it is. The demos call ta.set_blas_threads(1)

OPENBLAS_NUM_THREADS would not do: OpenBLAS reads it once, when numpy loads, and a script usually
imports numpy first. So set_blas_threads finds the OpenBLAS library numpy has already loaded and
calls its own `openblas_set_num_threads` (ctypes), which takes effect at once. A numpy built on
another BLAS (MKL, Apple's Accelerate) is left alone (set_blas_threads does nothing there, so a
demo runs anywhere); set its own variable (MKL_NUM_THREADS=1) before numpy is imported.
"""
import ctypes
import glob
import os

import numpy as np

# numpy 2.x wheels bundle scipy-openblas (64-bit ints: the "64_" names); older wheels and system
# builds use the plain names. Tried in this order.
_NAMES = [("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
          ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
          ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
          ("openblas_get_num_threads", "openblas_set_num_threads")]


def _loaded_openblas_paths():
    """Paths of the OpenBLAS libraries this process may have loaded, numpy's own first (scipy or
    another package may bring a copy of its own): from /proc/self/maps (Linux), else the libraries
    bundled beside numpy (macOS's numpy/.dylibs, Windows' numpy.libs)."""
    here = os.path.dirname(np.__file__)
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split(maxsplit=5)[-1].strip() for line in maps}
        paths = [p for p in paths if "openblas" in os.path.basename(p).lower()]
    except OSError:  # no /proc: not Linux
        paths = glob.glob(os.path.join(here, ".dylibs", "*openblas*")) + glob.glob(here + ".libs/*openblas*")
    return sorted(paths, key=lambda path: (not path.startswith(here), path))  # here + ".libs" starts with here


def _find_openblas():
    """(get, set) C functions of the OpenBLAS numpy uses, or None. RTLD_NOLOAD: a library that is
    not loaded already is not loaded now (a second copy would have its own, unused, threads)."""
    mode = getattr(os, "RTLD_NOLOAD", 0) | ctypes.RTLD_LOCAL
    for path in _loaded_openblas_paths():
        try:
            library = ctypes.CDLL(path, mode=mode)
        except OSError:
            continue
        for get_name, set_name in _NAMES:
            if hasattr(library, get_name) and hasattr(library, set_name):
                get, set_ = getattr(library, get_name), getattr(library, set_name)
                get.restype, get.argtypes = ctypes.c_int, []
                set_.restype, set_.argtypes = None, [ctypes.c_int]
                return get, set_
    return None


_OPENBLAS = _find_openblas()


def blas_threads():
    """How many threads numpy's BLAS may use now; None when it is not an OpenBLAS tinyattn can reach."""
    return None if _OPENBLAS is None else int(_OPENBLAS[0]())


class set_blas_threads:
    """`ta.set_blas_threads(n)` lets numpy's BLAS (OpenBLAS) use n threads from now on, in the
    whole process; `with ta.set_blas_threads(n):` only inside the block, then the count before.
    Where numpy's BLAS is not OpenBLAS it does nothing (ta.blas_threads() is None there)."""

    def __init__(self, n):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"ta.set_blas_threads: n must be a whole number >= 1, got {n!r}")
        self._previous = blas_threads()
        if _OPENBLAS is not None:  # another BLAS: nothing to set (see the module's docstring)
            _OPENBLAS[1](int(n))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if _OPENBLAS is not None:
            _OPENBLAS[1](self._previous)
        return False

