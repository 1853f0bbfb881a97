"""The errors tinyattn raises on purpose, so a caller can catch them by name."""


class ShapeError(ValueError):
    """Operand shapes that do not fit the op; the message names the op and both shapes."""


class AxisError(ShapeError, IndexError):
    """A dim out of range for the tensor: an IndexError, as PyTorch's (and a ShapeError, as before)."""


def require_float(op, **arrays):
    """Refuse integer and bool arrays where an op is only defined on real numbers (softmax, attention)."""
    for name, array in arrays.items():
        if array.dtype.kind != "f":
            raise TypeError(f"{op}: {name} is {array.dtype}, but {op} needs a floating tensor; "
                            f"convert it with .float() (or build it from floats)")
