"""Each fused kernel of the translation model against its numpy reference, at the model's shapes.

Batch 64, hidden 64, 14 source words, float32, one call (or forward + backward where said).
Run: python benchmarks/bench_fused.py   (OPENBLAS_NUM_THREADS=1 for one core). "kernel" is what
the package runs by default (Numba unless said), "reference" the numpy version beside it.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import markdown_table, time_us  # noqa: E402

import tinyattn as ta  # noqa: E402
import tinyattn.nn as nn  # noqa: E402
from tinyattn.nn.additive_attention import additive_attention_composed  # noqa: E402
from tinyattn.nn.fused.additive_attention_node import AdditiveAttention  # noqa: E402
from tinyattn.ops import additive_attention_arrays as aa, reference as R, reference_blocks as RB  # noqa: E402
from tinyattn.ops.kernels import adam, matmul, recurrent_gates as rg, scatter_rows, sigmoid  # noqa: E402
from tinyattn.ops.kernels import pair_tanh as aak  # noqa: E402

B, H, S, E, V = 64, 64, 14, 32, 26


def _attention_step(rng, fused, project_keys_each_step):
    f = np.float32
    leaf = lambda *s: ta.tensor((rng.standard_normal(s) * 0.3).astype(f), requires_grad=True)  # noqa: E731
    query, W, U, v, states = leaf(B, 1, H), leaf(H, H), leaf(H, 2 * H), leaf(1, H), leaf(B, S, 2 * H)
    mask = nn.padding_mask(rng.integers(1, S + 1, B), S)
    projected = ta.tensor(states.data @ U.data.T)

    def step():
        keys = states @ U.T if project_keys_each_step else projected
        attend = AdditiveAttention.apply if fused else additive_attention_composed
        context, _ = attend(query, W, keys, v, states, mask)
        context.sum().backward()

    return step


def run():
    rng = np.random.default_rng(0)
    f = np.float32
    rows = []

    def row(what, fast, slow, fast_name="kernel", slow_name="reference"):
        t_fast, t_slow = time_us(fast), time_us(slow)
        rows.append({"what": what, "fast": f"{fast_name} {t_fast:.1f}", "slow": f"{slow_name} {t_slow:.1f}",
                     "slow / fast": t_slow / t_fast})

    row("additive attention step, fwd+bwd (keys projected once)", _attention_step(rng, True, False),
        _attention_step(rng, False, False), "fused node", "composed ops")
    row("additive attention step, fwd+bwd, fused vs composed with U k every step", _attention_step(rng, True, False),
        _attention_step(rng, False, True), "fused node", "composed + U k")
    wq, uk = rng.standard_normal((B, 1, H)).astype(f), rng.standard_normal((B, S, H)).astype(f)
    hidden, d_score, v = aa.pair_tanh(wq, uk), rng.standard_normal((B, 1, S)).astype(f), rng.standard_normal(H).astype(f)
    row("through_pair_tanh (attention backward pass)", lambda: aak.through_pair_tanh(d_score, v, hidden),
        lambda: RB.through_pair_tanh(d_score, v, hidden))
    gi, gh, h = (rng.standard_normal(s).astype(f) for s in ((B, 3 * H), (B, 3 * H), (B, H)))
    keep = rng.random((B, 1)) < 0.8
    out = RB.gru_gates(gi, gh, h, keep)
    row("GRU gates forward (with a keep mask)", lambda: rg.gru_gates(gi, gh, h, keep),
        lambda: RB.gru_gates(gi, gh, h, keep))
    row("GRU gates backward", lambda: rg.gru_gates_backward(h, h, *out[1:], gh, keep),
        lambda: RB.gru_gates_backward(h, h, *out[1:], gh, keep))
    gates = RB.lstm_gates(rng.standard_normal((B, 4 * H)).astype(f), h, h, keep)
    lstm_in = rng.standard_normal((B, 4 * H)).astype(f)
    row("LSTM gates forward", lambda: rg.lstm_gates(lstm_in, h, h, keep), lambda: RB.lstm_gates(lstm_in, h, h, keep))
    row("LSTM gates backward", lambda: rg.lstm_gates_backward(h, h, h, *gates[2:], keep),
        lambda: RB.lstm_gates_backward(h, h, h, *gates[2:], keep))
    x = rng.standard_normal((B, 3 * H)).astype(f)
    row("sigmoid (64, 192)", lambda: sigmoid.sigmoid(x), lambda: R.sigmoid(x))
    x = rng.standard_normal((512, 512)).astype(f)
    row("sigmoid (512, 512)", lambda: sigmoid.sigmoid(x), lambda: R.sigmoid(x))
    p, g = rng.standard_normal((V, 7 * E)).astype(f), rng.standard_normal((V, 7 * E)).astype(f)
    m, s2 = np.zeros_like(p), np.zeros_like(p)
    scalars = ((f(0.9), f(0.1)), (f(0.999), f(0.001)), f(1e-3), f(0.5), f(1e-8), f(0))
    row("Adam update of the output layer (26, 224)", lambda: adam.adam_update(p, g, m, s2, *scalars),
        lambda: R.adam_update(p, g, m, s2, *scalars))
    indices, grads = rng.integers(0, V, B * 16), rng.standard_normal((B * 16, E)).astype(f)
    row("Embedding backward, 1024 lookups in 26 rows", lambda: scatter_rows.scatter_rows(indices, grads, V),
        lambda: R.scatter_rows(indices, grads, V))
    a, b = rng.standard_normal((B, S, 1)).astype(f), rng.standard_normal((B, 1, 2 * H)).astype(f)
    row("(64, 14, 1) @ (64, 1, 128)", lambda: matmul.matmul(a, b), lambda: np.matmul(a, b),
        "broadcast multiply", "np.matmul")
    print(markdown_table(rows, ["what", "fast", "slow", "slow / fast"]))
    return rows


if __name__ == "__main__":
    run()
