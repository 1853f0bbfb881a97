"""New tensors whose values follow their index: arange (start, start + step, ...) and eye (ones
where the row index equals the column index). Constant ones are in creation.py.
"""
import numbers

import numpy as np

from .creation import _leaf, _shape


def arange(start, end=None, step=1, dtype=None, requires_grad=False):
    """start, start + step, ... below end (PyTorch's torch.arange): int64 from integers, else float32."""
    if end is None:
        start, end = 0, start
    for name, value in (("start", start), ("end", end), ("step", step)):
        if not isinstance(value, (numbers.Real, np.number)) or isinstance(value, bool):
            raise TypeError(f"arange: {name} must be a number, got {value!r}")
    if step == 0:
        raise ValueError("arange: step must be nonzero (start, start + step, ... never reaches end)")
    if (end - start) * step < 0:
        raise ValueError(f"arange: upper bound and larger bound inconsistent with step sign: from {start} "
                         f"to {end} by {step} (as PyTorch; a negative step counts down: arange(5, 0, -1))")
    if dtype is None:
        integral = all(float(v).is_integer() and not isinstance(v, float) for v in (start, end, step))
        dtype = np.int64 if integral else np.float32
    return _leaf(np.arange(start, end, step, dtype=dtype), requires_grad)


def eye(n, m=None, dtype=np.float32, requires_grad=False):
    """The n x m (m defaults to n) identity matrix: ones on the diagonal (PyTorch's torch.eye)."""
    n, m = _shape((n, n if m is None else m), "eye")
    return _leaf(np.eye(n, m, dtype=dtype), requires_grad)
