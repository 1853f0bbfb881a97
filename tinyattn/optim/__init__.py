"""Optimisers and learning-rate schedules."""
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .schedules import LambdaLR, LinearWarmup, StepLR
from .sgd import SGD
