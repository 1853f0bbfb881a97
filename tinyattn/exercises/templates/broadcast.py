"""Elementwise ops with broadcasting: a product and a sum whose operands have different shapes.

    y = x * w + b        x (B, N);  w (N,) is used again in every row;  b (B, 1) in every column

numpy broadcasts w and b to x's shape (B, N) before it multiplies and adds.
Write backward: return (dL/dx, dL/dw, dL/db), each with the shape of its input.
    python -m tinyattn.exercises check broadcast
    python -m tinyattn.exercises hint broadcast        (a step at a time, if you are stuck)
"""
import numpy as np


def forward(x, w, b):
    """x (B, N), w (N,), b (B, 1) -> y (B, N), and what backward needs."""
    y = x * w + b
    return y, (x, w)


def backward(grad, cache):
    """grad = dL/dy, shape (B, N). Return (dL/dx, dL/dw, dL/db): shapes (B, N), (N,), (B, 1)."""
    x, w = cache
    raise NotImplementedError("write backward: return (dL/dx, dL/dw, dL/db)")
