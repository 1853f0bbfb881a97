"""The blocks table: the second half of the speed seam (ops/arrays.py, the array functions, is the first).

A block is a piece of a model with two forms that give the same outputs and gradients (to 1e-10
in float64, tests/test_fused_switch.py). Its reference is the composed graph of autograd ops,
written where the layer is (the one to read: retain_grad, hooks, ta.autograd.trace and
ta.viz.draw_graph see every scores, softmax and step inside it). Its fused form is one graph node
for the whole block (nn/fused/), fast but opaque:

    block                reference: the composed graph                   fused node (nn/fused/)
    attention            nn/scaled_dot_product_attention.py,             dot_product_attention_node.py
                           attention_composed
    additive_attention   nn/additive_attention.py,                       additive_attention_node.py
                           additive_attention_composed
    recurrent_step       nn/recurrent.py, composed_step                  recurrent_steps.py
    recurrent_sequence   nn/recurrent.py, composed_sequence              gru_sequence.py, lstm_sequence.py
    attentive_decoder    models/seq2seq.py, composed_decoder             attentive_decoder.py
    causal_attention     models/gpt.py, causal_attention_composed        dot_product_attention_node.py

Layers and models call `blocks.attention(q, k, v, ...)` and never ask which form runs: the name
is looked up, at each call, in the table in force in this thread. A reference registers itself
where it is defined (register_reference); a fused node registers itself in nn/fused/
(register_fused), which nn/__init__.py imports; a block with no fused node (the Elman RNN's
step, a decoder without additive attention) runs its reference in both tables, the fused entry
handing it on with `reference(name)`.

    with ta.fused(False):        # the references inside the block; the table before comes back on exit
        out, weights = mha(x, x, x)
    ta.is_fused()                # True (the default) or False
    ta.fused(False)              # a plain call switches for the rest of the thread (as torch.set_grad_enabled)
    TINYATTN_FUSED=0 python ...  # the references for a whole run (read once, on import)

The table is chosen per thread, as PyTorch's grad mode: a block in one thread does not switch the
layers another thread is running, and every new thread starts from TINYATTN_FUSED (default on).
Layers look a block up when they build their graph (forward), not in backward: a graph built
inside `ta.fused(False)` keeps its primitive ops after the block ends. With TINYATTN_BACKEND=numpy
and TINYATTN_FUSED=0 both tables hold references only: nothing that exists for speed runs.
"""
import os
import threading

BLOCKS = ("attention", "additive_attention", "recurrent_step", "recurrent_sequence", "attentive_decoder",
          "causal_attention")
REFERENCE = {}  # block -> its composed graph
FUSED = {}      # block -> its fused node where it has one, else its composed graph

_ON, _OFF = ("1", "true"), ("0", "false")


def _check_name(name, op):
    if name not in BLOCKS:
        raise ValueError(f"{op}: {name!r} is not a block; the blocks are {', '.join(BLOCKS)}")


def register_reference(name, function):
    """`function` is block `name`'s composed graph (and its fused form until a fused node registers)."""
    _check_name(name, "register_reference")
    REFERENCE[name] = function
    FUSED.setdefault(name, function)


def register_fused(name, function):
    """`function` is block `name` as a fused node (it hands on to reference(name) where it has none)."""
    _check_name(name, "register_fused")
    FUSED[name] = function


def reference(name):
    """Block `name`'s composed graph, whichever table is in force."""
    return REFERENCE[name]


def _from_environment():
    value = os.environ.get("TINYATTN_FUSED", "1").strip().lower() or "1"
    if value not in _ON + _OFF:
        raise ValueError(f"TINYATTN_FUSED={value!r}: use 1 (fused nodes, the default) or 0 (every layer "
                         "as its composed graph)")
    return value in _ON


class _InForce(threading.local):
    table = FUSED if _from_environment() else REFERENCE  # each thread starts here; an assignment holds for its own


_in_force = _InForce()


def __getattr__(name):
    """blocks.NAME: block NAME from the table in force in this thread."""
    try:
        return _in_force.table[name]
    except KeyError:
        raise AttributeError(f"tinyattn.ops.blocks has no block {name!r}; the blocks are {', '.join(BLOCKS)}") from None


def is_fused():
    """True when the blocks run as fused nodes (the default); False under `ta.fused(False)` or TINYATTN_FUSED=0."""
    return _in_force.table is FUSED


class fused:
    """`with ta.fused(flag):` runs the block with the fused table (True) or the references (False),
    then restores the table it found; blocks nest. Called alone, the table stays switched (in this thread)."""

    def __init__(self, flag):
        if not isinstance(flag, bool):
            raise TypeError(f"ta.fused: flag must be True or False, got {flag!r}; "
                            "ta.is_fused() tells the current state")
        self._previous, _in_force.table = _in_force.table, FUSED if flag else REFERENCE

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _in_force.table = self._previous
        return False
