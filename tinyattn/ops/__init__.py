"""The speed seam: every choice made for speed goes through one of its two tables.

  arrays.py   the array functions (numpy arrays in, numpy arrays out, no Tensor): each name is its
              plain numpy reference (reference.py, reference_blocks.py) until the fast path
              (fast_path.py, turned on by backend.py: TINYATTN_BACKEND) swaps in a door that runs
              a compiled kernel (kernels/) where the benchmarks found it faster.
  blocks.py   the blocks (attention, a recurrent step or sequence, the attentive decoder): each
              name is its composed graph of autograd ops until nn/fused/ registers a fused node;
              ta.fused(False) (or TINYATTN_FUSED=0) puts the composed graphs back, per thread.

With TINYATTN_BACKEND=numpy and TINYATTN_FUSED=0 both tables hold their references only.
memory.keep_freed_memory() and blas_threads.set_blas_threads(n) are opt-in speed settings for
training loops (ta.train.fit and the demos make them); importing tinyattn makes neither.
"""
from .backend import get_backend, set_backend, use_backend
from .memory import keep_freed_memory
