"""PyTorch's order for an index that mixes integers and arrays (Tensor.__getitem__ asks here)."""
import numpy as np


def integers_first(index):
    """PyTorch's order for an index mixing integers and arrays: (the integers, the rest), or None.

    PyTorch picks with the integers first and then with the arrays; numpy counts an integer beside
    an array as one more array, and when a slice stands between them moves the picked axis to the
    front: for t of shape (B, T, D), t[0, :, idx] is (T, len(idx)) in PyTorch, (len(idx), T) in
    numpy. Split this way, numpy gives PyTorch's answer."""
    if not isinstance(index, tuple):
        return None
    for part in index:
        if isinstance(part, (list, tuple)) or isinstance(part, np.ndarray) and part.ndim > 0:
            break
    else:
        return None  # no array: integers and slices pick in the same order in numpy and PyTorch
    is_int = [isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_))
              or isinstance(p, np.ndarray) and p.ndim == 0 and p.dtype.kind in "iu"  # ta.tensor(2) as an index
              for p in index]
    if not any(is_int):
        return None
    integers, rest = [], []
    for part, integer in zip(index, is_int):
        if integer:
            integers.append(int(part))
        elif part is Ellipsis:
            integers.append(part)
            rest.append(part)
        elif part is None:
            rest.append(part)  # a new axis: it takes none of the integers' axes
        else:  # a slice or an array, kept for the second pick; a bool array spans ndim axes
            integers.extend([slice(None)] * (np.ndim(part) if np.asarray(part).dtype == bool else 1))
            rest.append(part)
    return tuple(integers), tuple(rest)
