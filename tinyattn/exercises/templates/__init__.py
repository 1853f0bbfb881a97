"""The blank exercises, in the order of the path (catalog.py). `python -m tinyattn.exercises start
NAME` copies one into ./exercises/; each gives the forward, the shapes and what backward returns,
and leaves the derivation to the learner."""
