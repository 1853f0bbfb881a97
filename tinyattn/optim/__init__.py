"""Optimisers and learning-rate schedules."""
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .schedules import LambdaLR, LinearWarmup, StepLR, WarmupCosine
from .sgd import SGD
