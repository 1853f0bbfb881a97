"""Compiled steps: `step = ta.compile(fn)` captures a training step once and replays it.

Reading order (README, "Reading tour 3: how a step is compiled"):
  seams.py    where the recorder plugs into tinyattn while a step is captured
  capture.py  how one eager step is written down as a list of array calls over registers
  traced.py   arrays the capture follows through plain numpy (and values read into Python: guards)
  plan.py     the plan: liveness (the memory plan), replay and its guards
  codegen.py  the plan written out as one straight-line Python function
  step.py     signatures, the two captures, guards failing, when to stay eager, explain()
The engine (tinyattn/autograd, nn, ops) never imports this package.
"""
from .step import CompiledStep, off


def compile(fn=None, *, fuse="exact"):  # noqa: A001  (torch.compile's name)
    """`ta.compile(fn)` or `@ta.compile`: a step that replays its captured array calls (step.py);
    fuse="exact" (bit for bit), "all" (within 1e-6 relative) or False: fuse.py."""
    if fn is None:
        return lambda fn: CompiledStep(fn, fuse)
    return CompiledStep(fn, fuse)


compile.off = off
