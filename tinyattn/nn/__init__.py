"""Layers: Module, Parameter, Linear, Embedding, LayerNorm, Dropout, RNN/GRU/LSTM, attention, Transformer
(names as in PyTorch).

The layers are written as composed graphs; fused/ puts its fast nodes in the blocks table
(ops/blocks.py) when this package imports it (no layer imports it)."""
from ..autograd.spellings import module_getattr
from . import functional, init, utils
from .layers import (GELU, Dropout, Embedding, EmbeddingFunction, LayerNorm, LayerNormFunction, Linear, LinearFunction,
                     ReLU, Sigmoid, Tanh)
from .lstmn import LSTMN
from .containers import ModuleDict, ModuleList, Sequential
from .module import Module, Parameter
from .recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from .attention import Attention, AttentionPooling, PositionalEncoding, SelfAttention
from .masks import causal_mask, lengths_mask, padding_mask
from .kv_cache import KVCache
from .multihead import MultiheadAttention, keep_attention_weights
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                          TransformerEncoderLayer)
from . import fused  # noqa: F401  (its nodes register in the blocks table; no layer imports it)

__getattr__ = module_getattr(__name__, globals())
