"""The fast path: compiled kernels swapped in for the array functions the op rules call.

ops/arrays.py names every array function the engine calls; each starts as its plain numpy
reference. `install()` (backend.py calls it when the backend is "numba", the default) replaces
each name there with a door that runs the compiled kernel where the benchmarks found it faster,
and `remove()` puts the references back: with TINYATTN_BACKEND=numpy, nothing in this file runs.

    TABLE[name] = (kernel module in tinyattn/ops/kernels/, needs contiguous,
                   worth: which calls the kernel wins at, from the benchmarks, or None for all)

The reference each door falls back to is arrays.py's own (`reference(name)`): not listed twice.

A door runs the kernel `name` of tinyattn/ops/kernels/<module>.py when `worth` says the
benchmarks found it faster for such arguments and `kernel_takes` (the one rule: every float
array float32 or float64 of one dtype, contiguous if the kernel needs it) allows it; the
reference otherwise. A kernel module is imported, and so Numba loaded, on the first call that
runs one of its kernels, never on import. benchmarks/RESULTS.md, "Kernels against PyTorch's own ops"
and "Fused kernels against their numpy references", gives the kernels' figures.
"""
import importlib
import math

import numpy as np

from . import arrays

KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))  # what the compiled kernels take


def kernel_takes(*args, contiguous=False):
    """The one rule that lets a compiled kernel run: every floating array among `args` is
    float32 or float64, all of one dtype (and C-contiguous where the kernel reads memory in
    order), with at least one. Otherwise the numpy reference runs: float16, an integer input or a
    mixed call never reaches Numba. Other arguments (numbers, None) and non-float arrays
    (indices, bool masks) do not vote: each kernel converts them itself."""
    dtype = None
    for array in args:
        if array.__class__ is not np.ndarray:
            continue
        this = array.dtype
        if this.kind == "f":
            if dtype is None:
                if this not in KERNEL_DTYPES:
                    return False
                dtype = this
            elif this is not dtype and this != dtype:
                return False
        if contiguous and not array.flags.c_contiguous:
            return False
    return dtype is not None


def _outer_product(a, b):
    """BLAS wins every product but an inner size of 1 (an outer product per batch entry)."""
    return a.ndim >= 2 and b.ndim >= 2 and a.shape[-1] == 1 and b.shape[-2] == 1


def _broadcast(a, b):
    """numpy's own product wins when nothing is broadcast (the usual case)."""
    return a.shape != b.shape


_FEW_ROWS = 128


def _some_axes(x, axes, keepdims=False):
    """numpy's pairwise sum stays for a sum over every axis (a loss), and over the first axes when
    they hold 128 rows or fewer (a Linear's bias gradient, (64, 192) over 0): numpy adds whole rows
    there, and the product's fixed cost (~1.5 us) is more than it saves (x.sum takes 0.65x the
    product's time at 64 x 192, ties at 128 rows; the product is 1.3-4x faster from 256 rows:
    benchmarks/bench_first_axis_sums.py). "The first axes" are exactly (0, 1, ..., k - 1): a sum
    over (0, 2), as unbroadcast asks for, is not a sum of whole rows."""
    if axes is None:
        return False
    first_axes = tuple(axes) == tuple(range(len(axes)))
    return not first_axes or math.prod(x.shape[:len(axes)]) > _FEW_ROWS


def _not_float64_tanh(x, approximate):
    """numpy's float64 tanh is its own SIMD code, which math.tanh differs from by an ulp: where
    1 + tanh(u) cancels (x << 0) that ulp is the whole answer, so float64 keeps the reference."""
    return approximate != "tanh" or x.dtype != np.float64


def _not_float64(*args):
    """The float64 gate forwards stay numpy's: LLVM leaves fast_tanh's float64 loop scalar there
    (too big to inline), and numpy's own SIMD tanh won (benchmarks/bench_kernels_vs_torch.py)."""
    return args[0].dtype != np.float64


TABLE = {
    "matmul": ("matmul", False, _outer_product),
    "softmax": ("softmax", False, None),
    "softmax_backward": ("softmax", False, None),
    "log_softmax": ("softmax", False, None),
    "log_softmax_backward": ("softmax", False, None),
    "layer_norm": ("layer_norm", False, None),
    "layer_norm_backward": ("layer_norm", False, None),
    "sum_over": ("sums", True, _some_axes),
    "multiply": ("broadcast_products", False, _broadcast),
    "sigmoid": ("sigmoid", False, None),
    "gelu": ("gelu", False, _not_float64_tanh),
    "gelu_backward": ("gelu", False, None),
    "scatter_rows": ("scatter_rows", False, None),
    "adam_update": ("adam", True, None),
    "gru_gates": ("recurrent_gates", False, _not_float64),
    "gru_gates_backward": ("recurrent_gates", False, None),
    "lstm_gates": ("recurrent_gates", False, _not_float64),
    "lstm_gates_backward": ("recurrent_gates", False, None),
    "through_pair_tanh": ("pair_tanh", False, None),
}


def kernel(name):
    """The compiled kernel `name` (importing its module, and Numba, on first use)."""
    module = importlib.import_module(f"{__name__.rsplit('.', 1)[0]}.kernels.{TABLE[name][0]}")
    return getattr(module, name)


def reference(name):
    """The numpy reference of array function `name`: ops/arrays.py's, whether or not a door is in."""
    function = getattr(arrays, name)
    return getattr(function, "reference", function)


def _door(name):
    reference_function, (_, contiguous, worth) = reference(name), TABLE[name]
    compiled = None

    def compiled_kernel():
        nonlocal compiled
        if compiled is None:
            compiled = kernel(name)
        return compiled

    def choose(*args, contiguous=contiguous):
        """The function the door runs for `args`, the kernel or the reference (contiguous=False:
        as if every array were C-contiguous). ta.compile binds a replay's call to it where the
        choice cannot change between replays (compile/plan.py)."""
        if (worth is None or worth(*args)) and kernel_takes(*args, contiguous=contiguous):
            return compiled_kernel()
        return reference_function

    def door(*args):
        # choose()'s test written out again: every array call of eager tinyattn passes here, and a
        # call to choose() cost 60-80 ns more a call (measured on (4, 4) arrays: 500 against 560 ns)
        if (worth is None or worth(*args)) and kernel_takes(*args, contiguous=contiguous):
            return (compiled or compiled_kernel())(*args)
        return reference_function(*args)

    door.__name__ = door.__qualname__ = name
    door.__doc__ = reference_function.__doc__
    door.reference, door.choose = reference_function, choose
    return door


def install():
    """Swap a door in for every array function of TABLE (ops/arrays.py's names)."""
    for name in TABLE:
        setattr(arrays, name, _door(name))


def remove():
    """Put every array function's numpy reference back."""
    for name in TABLE:
        setattr(arrays, name, reference(name))
