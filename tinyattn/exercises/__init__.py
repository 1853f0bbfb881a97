"""Backprop by hand: derive the backward of softmax, attention, an LSTM step ..., and check it.

    python -m tinyattn.exercises                   the path of exercises, with each one's status
    python -m tinyattn.exercises start NAME        copy the exercise into ./exercises/NAME.py
    python -m tinyattn.exercises check NAME        check the backward written there
    python -m tinyattn.exercises hint NAME         one more step of the derivation (--reset: start over)
    python -m tinyattn.exercises solution NAME     the worked backward

Each exercise (templates/) gives a forward, the shapes and what backward returns; the derivation
is the learner's. Hints, worked solutions and the classic mistakes the checker recognises live in
solutions/, out of the learner's file. How many hints of each exercise were shown is kept in
./exercises/.hints.json. The checker (checker.py) compares the learner's gradients with finite
differences and, when they differ, with tinyattn's own answer, to give one hint that fits the
mistake (diagnose.py).
"""
from .catalog import EXERCISES, PATH
from .checker import Verdict, check, judge
