"""The one door between the engine and the fast path: every array function the op rules and
the fused nodes call, each running its numpy reference or, where allowed, a compiled kernel.

    TABLE[name] = (reference function, kernel module in tinyattn/ops/kernels/, needs contiguous,
                   worth: which calls the kernel wins at, from the benchmarks, or None for all)

A call runs the kernel `name` of tinyattn/ops/kernels/<module>.py when `worth` says the
benchmarks found it faster for such arguments and `kernel_takes` (backend.py, the one rule:
backend "numba", every float array float32 or float64 of one dtype, contiguous if the kernel
needs it) allows it; the reference otherwise. A kernel module is imported, and so Numba
loaded, on the first call that runs one of its kernels, never on import. benchmarks/RESULTS.md
gives each kernel's figure.
"""
import importlib

from . import reference, reference_blocks
from .backend import kernel_takes

def _outer_product(a, b):
    """BLAS wins every product but an inner size of 1 (an outer product per batch entry)."""
    return a.ndim >= 2 and b.ndim >= 2 and a.shape[-1] == 1 and b.shape[-2] == 1


def _broadcast(a, b):
    """numpy's own product wins when nothing is broadcast (the usual case)."""
    return a.shape != b.shape


def _some_axes(x, axes, keepdims=False):
    """numpy's pairwise sum stays for a sum over every axis (a loss)."""
    return axes is not None


TABLE = {
    "matmul": (reference.matmul, "matmul", False, _outer_product),
    "softmax": (reference.softmax, "softmax", False, None),
    "softmax_backward": (reference.softmax_backward, "softmax", False, None),
    "log_softmax": (reference.log_softmax, "softmax", False, None),
    "log_softmax_backward": (reference.log_softmax_backward, "softmax", False, None),
    "sum_over": (reference.sum_over, "sums", True, _some_axes),
    "multiply": (reference.multiply, "broadcast_products", False, _broadcast),
    "sigmoid": (reference.sigmoid, "sigmoid", False, None),
    "scatter_rows": (reference.scatter_rows, "scatter_rows", False, None),
    "adam_update": (reference.adam_update, "adam", True, None),
    "gru_gates": (reference_blocks.gru_gates, "recurrent_gates", False, None),
    "gru_gates_backward": (reference_blocks.gru_gates_backward, "recurrent_gates", False, None),
    "lstm_gates": (reference_blocks.lstm_gates, "recurrent_gates", False, None),
    "lstm_gates_backward": (reference_blocks.lstm_gates_backward, "recurrent_gates", False, None),
    "through_pair_tanh": (reference_blocks.through_pair_tanh, "additive_attention", False, None),
}


def kernel(name):
    """The compiled kernel `name` (importing its module, and Numba, on first use)."""
    module = importlib.import_module(f"{__name__.rsplit('.', 1)[0]}.kernels.{TABLE[name][1]}")
    return getattr(module, name)


def _door(name):
    reference_function, _, contiguous, worth = TABLE[name]
    compiled = None

    def door(*args):
        nonlocal compiled
        if (worth is None or worth(*args)) and kernel_takes(*args, contiguous=contiguous):
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
