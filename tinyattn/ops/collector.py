"""Python's cycle collector, set for a training step's thousands of short-lived graph nodes.

A training step makes a few objects per op (a Tensor, its node and the node's attributes), freed
by reference counting when backward releases the node: no cycles, nothing for the cycle
collector to find. CPython still runs it every 700 new objects (its first-generation threshold
up to Python 3.12), and every tenth run looks over everything the graph holds. On the composed
GRU + attention model of benchmarks/outside_models.py that was 5 % of a step (5.52 ms against
5.22 with the collector off), on the Transformer classifier 3 %; with the threshold at 2,000
(Python 3.13's own default), 5,000 or 20,000 the step took what it took with the collector off
(benchmarks/RESULTS.md, "The cycle collector").

So on import tinyattn raises the first threshold to 5,000 when it is lower, for the whole process:

    TINYATTN_GC_THRESHOLD=5000 (default) | N | python     read on import; python leaves it alone
    gc.set_threshold(...)                                  yours, after the import, wins

Garbage in cycles is still collected, a little later: memory held by cycles (rare in numpy
code) waits up to 5,000 new objects instead of 700.
"""
import gc
import os

DEFAULT_THRESHOLD = 5000


def apply_default():
    """Raise the collector's first threshold to TINYATTN_GC_THRESHOLD (5,000) if it is lower."""
    setting = os.environ.get("TINYATTN_GC_THRESHOLD", str(DEFAULT_THRESHOLD)).strip().lower()
    if setting == "python":
        return
    try:
        wanted = int(setting)
    except ValueError:
        raise ValueError(f"TINYATTN_GC_THRESHOLD={setting!r}: give a whole number of objects "
                         f"(e.g. {DEFAULT_THRESHOLD}) or 'python' to keep Python's own") from None
    first, *rest = gc.get_threshold()
    if first < wanted:
        gc.set_threshold(wanted, *rest)
