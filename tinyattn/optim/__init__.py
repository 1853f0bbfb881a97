"""Optimisers and learning-rate schedules."""
from .optimizer import SGD, Adam, Optimizer
from .schedules import LinearWarmup, StepLR
