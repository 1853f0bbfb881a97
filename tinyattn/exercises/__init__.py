"""Backprop by hand: write the backward of softmax, attention, a GRU step ..., and check it.

    python -m tinyattn.exercises                     lists the exercises
    python -m tinyattn.exercises check NAME FILE     judges the autograd.Function in FILE

Each exercise is a file in this folder with the forward written and the backward left to the
learner, its derivation hinted in steps. The checker (checker.py) compares the learner's
gradients with finite differences and, when they differ, with tinyattn's own answer, to give
one hint that fits the mistake.
"""
from .catalog import EXERCISES
from .checker import Verdict, check
