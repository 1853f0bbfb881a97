"""Toy data made on the fly (numpy only): nothing is downloaded."""
from .toy_translation import BOS, EOS, PAD, TOKEN_IDS, ToyTranslation, Vocabulary, pad_batch, translate_words
from .reordering import Reordering, ReorderingSplits
from .batching import BucketedStream, bucket_batches
