"""Hints, worked solutions and classic mistakes, one module per exercise, kept out of the learner's
files: `hint NAME` prints HINTS one at a time, `solution NAME` prints backward, and the checker
compares a wrong answer with each of `mistakes(grad, cache, inputs)` to name what went wrong."""
from typing import NamedTuple

import numpy as np


class Mistake(NamedTuple):
    """What a classic wrong backward returns for one input, and the hint that names it."""
    input: str
    gradient: np.ndarray
    hint: str
