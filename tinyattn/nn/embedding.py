"""Embedding: a lookup table of word vectors, one graph node with its backward written by hand."""
import numpy as np

from ..autograd.creation import generator
from ..autograd.function import Function
from ..ops import arrays
from .module import Module, Parameter
from .sizes import check_sizes


class EmbeddingFunction(Function):
    """y = W[indices];  dL/dW = zeros with each g row added at its index (a repeated word adds up).

    The padding row gets no gradient, so it stays as it was (zeros from init) while training.
    """

    @staticmethod
    def forward(ctx, weight, indices, padding_idx):
        ctx.save_for_backward(indices)
        ctx.meta = weight.shape, padding_idx
        return weight[indices]

    @staticmethod
    def backward(ctx, g):
        (indices,) = ctx.saved_tensors
        shape, padding_idx = ctx.meta
        grad = arrays.scatter_rows(indices.reshape(-1), g.reshape(-1, shape[1]), shape[0])
        if padding_idx is not None:
            grad[padding_idx] = 0
        return grad, None, None


class Embedding(Module):
    """A table of num_embeddings vectors, looked up by integer index; PyTorch's init N(0, 1)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        check_sizes("Embedding", num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        if padding_idx is not None and not -num_embeddings <= padding_idx < num_embeddings:
            raise ValueError(f"Embedding: padding_idx {padding_idx} is not a row of the table; it must lie in "
                             f"[{-num_embeddings}, {num_embeddings - 1}] (num_embeddings = {num_embeddings})")
        if padding_idx is not None and padding_idx < 0:
            padding_idx += num_embeddings
        self.padding_idx = padding_idx
        table = generator().standard_normal((num_embeddings, embedding_dim)).astype(np.float32)
        if padding_idx is not None:
            table[padding_idx] = 0
        self.weight = Parameter(table)

    def forward(self, indices):
        indices = np.asarray(getattr(indices, "data", indices))
        if indices.dtype.kind not in "iu":
            raise TypeError(f"Embedding: indices must be integers, got {indices.dtype}")
        if indices.size and (indices.min() < 0 or indices.max() >= self.num_embeddings):
            bad = indices[(indices < 0) | (indices >= self.num_embeddings)].flat[0]
            raise IndexError(f"Embedding: index {bad} is out of range for {self.num_embeddings} embeddings")
        return EmbeddingFunction.apply(self.weight, indices, self.padding_idx)

    def extra_repr(self):
        pad = f", padding_idx={self.padding_idx}" if self.padding_idx is not None else ""
        return f"{self.num_embeddings}, {self.embedding_dim}{pad}"
