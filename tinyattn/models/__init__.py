"""Whole models built from tinyattn.nn."""
from .seq2seq import Decoder, Encoder, Seq2Seq
from .taggers import AttentionTagger, TokenTagger
