"""Whole models built from tinyattn.nn."""
from .classifiers import SequenceClassifier
from .gpt import GPT
from .pointer import PointerEncoder
from .decoding import Hypothesis, beam_search, greedy
from .luong import LuongDecoder, LuongSeq2Seq
from .seq2seq import Decoder, Encoder, Seq2Seq
from .transformer_seq2seq import TransformerSeq2Seq
from .translator import Translator
from .taggers import AttentionTagger, TokenTagger
