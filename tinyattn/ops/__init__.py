"""Array functions: functions from numpy arrays to numpy arrays, no Tensor here.

reference.py (and reference_blocks.py) hold the plain numpy versions, the ones to read;
kernels/ holds compiled versions of some of them; arrays.py names the functions the engine calls,
each a reference until the fast path (fast_path.py, turned on by backend.py) swaps in its doors.
memory.keep_freed_memory() is an opt-in speed setting for training loops; blas_threads.py gives
numpy's BLAS one thread when tinyattn is imported.
"""
from .backend import get_backend, set_backend, use_backend
from .memory import keep_freed_memory
