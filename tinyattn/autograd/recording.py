"""The trace's on/off switch: which trace (tracing.py) the backward walk records into, if any.

The walk asks `recording()` once per call; outside a `with ta.autograd.trace()` block it is None
and the walk records nothing. Kept apart from tracing.py so that only those who watch the walk
read how the watching is done.
"""
_recording = None  # the trace being filled; set and restored by tracing.trace's `with` block


def recording():
    """The trace being recorded into, or None (the usual case)."""
    return _recording


def start(tape):
    """Record into `tape` from now on; returns the trace that was recording before (or None)."""
    global _recording
    outer, _recording = _recording, tape
    return outer


def stop(outer):
    """Go back to recording into `outer`, the trace start() returned."""
    global _recording
    _recording = outer
