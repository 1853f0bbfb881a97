"""The dtype rules of operands, as PyTorch's (the top of tensor.py states them):

    to_array(data, dtype)   what a new tensor holds: float lists -> float32, int lists -> int64,
                            an ndarray keeps its dtype
    pair(a, b)              both operands of a binary op as Tensors of one dtype
    one_dtype(op, tensors)  the tensors ta.cat / ta.stack join, in one dtype
"""
import numpy as np

from .tensor import Tensor, wrap


def to_array(data, dtype):
    if isinstance(data, Tensor):
        data = data.data
    if isinstance(data, (np.ndarray, np.generic)):
        array = np.array(data, dtype=dtype, copy=True)  # keeps the layout (order="K")
    else:
        try:
            array = np.array(data, dtype=dtype)
        except ValueError:  # numpy's message speaks of "an inhomogeneous shape after 1 dimensions"
            raise ValueError(f"tensor: the nested lists have rows of different lengths ({_row_lengths(data)}); "
                             "a tensor is a box: pad the rows to one length, or keep them as separate tensors") from None
        if dtype is None:
            if array.dtype.kind == "f":
                array = array.astype(np.float32)
            elif array.dtype.kind in "iu":
                array = array.astype(np.int64)
    if array.dtype.kind not in "fiub":
        raise TypeError(f"tensor: cannot hold data of dtype {array.dtype} (numbers or bools only)")
    return array


def _row_lengths(data):
    """The lengths of the first level of a ragged nested list, for the error message."""
    lengths = [len(row) if isinstance(row, (list, tuple)) else 1 for row in data]
    return ", ".join(map(str, lengths[:6])) + (", ..." if len(lengths) > 6 else "")


def pair(a, b, true_divide=False):
    """Both operands of a binary op as Tensors of one dtype, by PyTorch's rules.

    A number takes the tensor's dtype (float32 * 2.5 stays float32: Python numbers are
    "weak", NEP 50); an integer or bool tensor or array meeting a float one takes the float's
    dtype; integers meeting a Python float, or divided, become float32. float32 meeting
    float64 is left for Function.apply to refuse with a message naming both.
    """
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.data.dtype is b.data.dtype and a.data.dtype.kind == "f":
        return a, b  # the usual case, two float tensors of one dtype, decided at once
    a, b = _tensor_or_number(a), _tensor_or_number(b)
    if not isinstance(a, Tensor):
        a = _number_like(a, b)
    elif not isinstance(b, Tensor):
        b = _number_like(b, a)
    kind_a, kind_b = a.data.dtype.kind, b.data.dtype.kind
    if kind_a == "f" and kind_b != "f":
        b = wrap(b.data.astype(a.data.dtype))
    elif kind_b == "f" and kind_a != "f":
        a = wrap(a.data.astype(b.data.dtype))
    if true_divide and a.data.dtype.kind != "f":
        a, b = wrap(a.data.astype(np.float32)), wrap(b.data.astype(np.float32))
    return a, b


def _tensor_or_number(value):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray) and value.ndim:
        return wrap(value)
    if isinstance(value, (np.ndarray, np.generic)):
        return value.item()  # a numpy scalar is as weak as a Python one
    if isinstance(value, (bool, int, float)):
        return value
    raise TypeError(f"cannot combine a Tensor with {type(value).__name__}")


def _number_like(number, tensor_):
    dtype = tensor_.data.dtype
    if dtype.kind != "f" and isinstance(number, float):
        dtype = np.dtype(np.float32)  # int tensor * 2.5 -> float32, PyTorch's default float
    else:
        dtype = np.result_type(dtype, number)
    return wrap(np.asarray(number, dtype=dtype))


def one_dtype(op, tensors):
    """The tensors, integer and bool ones converted to the float dtype among them (PyTorch's
    promotion: float32 with int64 is float32). Two float dtypes are left for apply to refuse."""
    tensors = list(tensors)
    for position, tensor in enumerate(tensors):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"{op}: expected a sequence of Tensors, got {type(tensor).__name__} at position "
                            f"{position} (make it one with ta.tensor(...))")
    floats = [t.dtype for t in tensors if t.dtype.kind == "f"]
    if floats:
        return [t if t.dtype.kind == "f" else wrap(t.data.astype(floats[0])) for t in tensors]
    kinds = {t.dtype for t in tensors}
    if len(kinds) > 1:  # integers and bools: numpy's promotion is PyTorch's here (bool + int64 -> int64)
        common = np.result_type(*kinds)
        return [wrap(t.data.astype(common, copy=False)) for t in tensors]
    return tensors
