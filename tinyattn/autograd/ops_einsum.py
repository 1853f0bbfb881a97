"""ta.einsum: products and sums written with index letters, as numpy's and PyTorch's einsum.

    ta.einsum("bij,bjk->bik", a, b)      batched matmul
    ta.einsum("bhqd,bhkd->bhqk", q, k)   attention scores
    ta.einsum("i,j->ij", u, v)           outer product
    ta.einsum("ii->", a), ("ij->j", a)   trace, column sums

One node; the gradient of each operand is again an einsum: the upstream gradient times every
other operand, summed over what the operand does not carry (see Einsum.backward).
"""
import numpy as np

from .errors import ShapeError
from .function import Function
from .promotion import one_dtype


def _parse(equation, n_operands):
    """(input subscripts, output subscripts) of an equation like "bij,bjk->bik"."""
    equation = equation.replace(" ", "")
    if "." in equation:
        raise NotImplementedError(f"einsum: '...' is not implemented ({equation!r}); name every dim with a letter")
    inputs, arrow, output = equation.partition("->")
    inputs = inputs.split(",")
    if len(inputs) != n_operands:
        raise ValueError(f"einsum: {equation!r} has {len(inputs)} operand(s), {n_operands} tensor(s) were given")
    if not arrow:  # implicit output: the letters used once, in alphabetical order (numpy's and PyTorch's rule)
        letters = "".join(inputs)
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    for term in inputs + [output]:
        if not term.isalpha() and term:
            raise ValueError(f"einsum: {equation!r}: subscripts must be letters")
    if len(set(output)) != len(output) or not set(output) <= set("".join(inputs)):
        raise ValueError(f"einsum: {equation!r}: each output letter must appear once, and in an input")
    return inputs, output


def _check_sizes(inputs, arrays, equation):
    sizes = {}
    for term, array in zip(inputs, arrays):
        if len(term) != array.ndim:
            raise ShapeError(f"einsum: {term!r} names {len(term)} dims, but that operand has shape {array.shape}")
        for letter, size in zip(term, array.shape):
            if sizes.setdefault(letter, size) != size:
                raise ShapeError(f"einsum: {equation!r}: dim {letter!r} is {sizes[letter]} in one place and {size} in another")
    return sizes


class Einsum(Function):
    """y = einsum(equation, x_1, ..., x_n).

    y is linear in each operand, so dL/dx_i = einsum(out, others -> x_i's letters)(g, others): the
    upstream times the other operands, summed over every letter x_i lacks. A letter only x_i has
    (summed away in forward) gets g copied along it; a repeated letter (a trace, "ii") writes the
    result onto that diagonal of zeros.
    """

    @staticmethod
    def forward(ctx, equation, *arrays):
        inputs, output = _parse(equation, len(arrays))
        ctx.meta = inputs, output, _check_sizes(inputs, arrays, equation)
        ctx.save_for_backward(*arrays)
        return np.einsum(",".join(inputs) + "->" + output, *arrays, optimize=len(arrays) > 2)

    @staticmethod
    def backward(ctx, g):
        arrays = ctx.saved_tensors
        inputs, output, sizes = ctx.meta
        grads = [None]
        for i, (term, array) in enumerate(zip(inputs, arrays)):
            if not ctx.needs_input_grad[i + 1]:
                grads.append(None)
                continue
            others = [(t, a) for j, (t, a) in enumerate(zip(inputs, arrays)) if j != i]
            letters = "".join(dict.fromkeys(term))  # term without repeats, in order
            reachable = set(output).union(*(t for t, _ in others))
            present = "".join(c for c in letters if c in reachable)
            part = np.einsum(",".join([output] + [t for t, _ in others]) + "->" + present, g, *(a for _, a in others))
            # letters only this operand has: every one of its entries along them got the same g
            full = np.broadcast_to(np.expand_dims(part, tuple(k for k, c in enumerate(letters) if c not in reachable)),
                                   tuple(sizes[c] for c in letters))
            if len(letters) == len(term):
                grads.append(np.array(full, dtype=array.dtype, order="C"))  # (ascontiguousarray makes 0-d 1-d)
            else:
                grad = np.zeros(array.shape, array.dtype)
                np.einsum(term + "->" + letters, grad)[...] = full  # einsum("ii->i", z) is a view of z's diagonal
                grads.append(grad)
        return tuple(grads)


def einsum(equation, *operands):
    """Sums of products over index letters (numpy's and PyTorch's einsum); operands may also come
    as one list, as torch.einsum("ij,jk", [a, b]) allows. One graph node."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum: the first argument is the equation, a string like 'ij,jk->ik', got {type(equation).__name__}")
    return Einsum.apply(equation, *one_dtype("einsum", operands))  # float32 with int64: float32, as PyTorch's rule
