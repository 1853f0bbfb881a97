"""The one door between the engine and the fast path: every array function the op rules and
the fused nodes call, each running its numpy reference or, where allowed, a compiled kernel.

    TABLE[name] = (reference function, kernel module in tinyattn/ops/kernels/, needs contiguous)

A call runs the kernel `name` of tinyattn/ops/kernels/<module>.py when `kernel_takes` (backend.py,
the one rule: backend "numba", every float array float32 or float64 of one dtype, contiguous if
the kernel needs it) says so, and the reference otherwise. A kernel module is imported, and so
Numba loaded, on the first call that runs one of its kernels, never on import. Each kernel is
in the table because a benchmark found it faster (benchmarks/RESULTS.md names each figure);
within a kernel module, the shapes where numpy or BLAS is faster still go to them.
"""
import importlib

from . import reference, reference_blocks
from .backend import kernel_takes

TABLE = {
    "matmul": (reference.matmul, "matmul", False),
    "softmax": (reference.softmax, "softmax", False),
    "softmax_backward": (reference.softmax_backward, "softmax", False),
    "log_softmax": (reference.log_softmax, "softmax", False),
    "log_softmax_backward": (reference.log_softmax_backward, "softmax", False),
    "sum_over": (reference.sum_over, "sums", True),
    "multiply": (reference.multiply, "broadcast_products", False),
    "sigmoid": (reference.sigmoid, "sigmoid", False),
    "scatter_rows": (reference.scatter_rows, "scatter_rows", False),
    "adam_update": (reference.adam_update, "adam", True),
    "gru_gates": (reference_blocks.gru_gates, "recurrent_gates", False),
    "gru_gates_backward": (reference_blocks.gru_gates_backward, "recurrent_gates", False),
    "lstm_gates": (reference_blocks.lstm_gates, "recurrent_gates", False),
    "lstm_gates_backward": (reference_blocks.lstm_gates_backward, "recurrent_gates", False),
    "through_pair_tanh": (reference_blocks.through_pair_tanh, "additive_attention", False),
}


def kernel(name):
    """The compiled kernel `name` (importing its module, and Numba, on first use)."""
    module = importlib.import_module(f"{__name__.rsplit('.', 1)[0]}.kernels.{TABLE[name][1]}")
    return getattr(module, name)


def _door(name):
    reference_function, _, contiguous = TABLE[name]
    compiled = None

    def door(*args):
        nonlocal compiled
        if kernel_takes(*args, contiguous=contiguous):
            if compiled is None:
                compiled = kernel(name)
            return compiled(*args)
        return reference_function(*args)

    door.__name__ = door.__qualname__ = name
    door.__doc__ = reference_function.__doc__
    door.reference = reference_function
    return door


matmul = _door("matmul")
softmax = _door("softmax")
softmax_backward = _door("softmax_backward")
log_softmax = _door("log_softmax")
log_softmax_backward = _door("log_softmax_backward")
sum_over = _door("sum_over")
multiply = _door("multiply")
sigmoid = _door("sigmoid")
scatter_rows = _door("scatter_rows")
adam_update = _door("adam_update")
gru_gates = _door("gru_gates")
gru_gates_backward = _door("gru_gates_backward")
lstm_gates = _door("lstm_gates")
lstm_gates_backward = _door("lstm_gates_backward")
through_pair_tanh = _door("through_pair_tanh")
