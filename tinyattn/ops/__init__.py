"""Array functions: functions from numpy arrays to numpy arrays, no Tensor here.

reference.py (and reference_blocks.py) hold the plain numpy versions, the ones to read;
kernels/ holds compiled versions of some of them; arrays.py is the one door the engine calls,
which picks between the two (see backend.kernel_takes). memory.keep_freed_memory() is an
opt-in speed setting for training loops.
"""
from .backend import get_backend, set_backend, use_backend
from .memory import keep_freed_memory
