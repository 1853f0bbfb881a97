"""The array functions the op rules and the fused nodes call, by name: arrays.matmul(a, b), ...

Each name here is its plain numpy reference (reference.py, reference_blocks.py), so the reading
path runs those and nothing else. When the fast path is on (TINYATTN_BACKEND=numba, the default),
ops/fast_path.py swaps in, for each name, a door that runs a compiled kernel where the benchmarks
found it faster; ta.ops.use_backend("numpy") puts the references back. Callers look the name up
here at each call (arrays.multiply, not an imported multiply), so the swap reaches them.
"""
from .gelu import gelu, gelu_backward  # noqa: F401
from .reference import (adam_update, layer_norm, layer_norm_backward, log_softmax, log_softmax_backward,  # noqa: F401
                        matmul, multiply, scatter_rows, sigmoid, softmax, softmax_backward, sum_over)
from .reference_blocks import (gru_gates, gru_gates_backward, lstm_gates, lstm_gates_backward,  # noqa: F401
                               through_pair_tanh)
