"""Layers: Module, Parameter, Linear, Embedding, LayerNorm, Dropout, RNN/GRU/LSTM, attention (names as in PyTorch)."""
from . import functional, utils
from .layers import Dropout, ReLU, Sigmoid, Tanh
from .lstmn import LSTMN
from .linear import Embedding, EmbeddingFunction, LayerNorm, LayerNormFunction, Linear, LinearFunction
from .module import Module, Parameter, Sequential
from .recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from .attention import (
    Attention,
    AttentionPooling,
    MultiHeadAttention,
    MultiheadAttention,
    PositionalEncoding,
    SelfAttention,
)
from .masks import causal_mask, lengths_mask, padding_mask
