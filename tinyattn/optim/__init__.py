"""Optimisers and learning-rate schedules."""
from .optimizer import SGD, Adam, AdamW, Optimizer
from .schedules import LambdaLR, LinearWarmup, StepLR, WarmupCosine
