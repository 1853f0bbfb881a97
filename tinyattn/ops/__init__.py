"""Array kernels: functions from numpy arrays to numpy arrays, no Tensor here.

Each kernel has a plain numpy reference (the one to read, and the test oracle) and a Numba
version; the public name dispatches between them by backend and, where the benchmarks say so,
by shape (see benchmarks/RESULTS.md).
"""
from .backend import get_backend, set_backend, use_backend
from .memory import keep_freed_memory

keep_freed_memory()  # once, on import: see memory.py (TINYATTN_MALLOC=system leaves malloc alone)
