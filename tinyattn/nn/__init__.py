"""Layers: Module, Parameter, Linear, Embedding, LayerNorm, Dropout, ... (names as in PyTorch)."""
from . import functional, utils
from .layers import Dropout, ReLU, Sigmoid, Tanh
from .linear import Embedding, EmbeddingFunction, LayerNormFunction, LayerNorm, Linear, LinearFunction
from .module import Module, Parameter, Sequential
