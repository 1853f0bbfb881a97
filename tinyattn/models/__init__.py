"""Whole models built from tinyattn.nn."""
from .classifiers import SequenceClassifier
from .pointer import PointerEncoder
from .seq2seq import Decoder, Encoder, Seq2Seq
from .taggers import AttentionTagger, TokenTagger
