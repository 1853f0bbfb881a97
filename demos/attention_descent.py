"""Gradient descent on one attention step, printed as it learns (runs in a few seconds).

A query looks at five keys and takes the softmax-weighted average of their values:

    scores  = (x W_q) . k_j / sqrt(d)        weights = softmax(scores)
    context = sum_j weights_j v_j            loss    = |context - v_target|^2

We train W_q by plain gradient descent until the query attends to the key whose value is
the target, then check the gradients tinyattn computed against finite differences.
"""
import numpy as np

import tinyattn as ta

TOKENS = ["the", "cat", "sat", "on", "mat"]
TARGET = 3  # the query should learn to look at "on"


def attention_loss(w_q, x, keys, values, target):
    d = keys.shape[-1]
    scores = (x @ w_q) @ keys.T / np.sqrt(d)
    weights = scores.softmax(-1)
    context = weights @ values
    return ((context - target) ** 2).sum(), weights


def bar(weights):
    return "  ".join(f"{tok}:{'#' * int(round(w * 20)):<20s}" for tok, w in zip(TOKENS, weights))


def main(steps=60, lr=6.0):
    ta.set_blas_threads(1)      # small products: one BLAS thread is faster (benchmarks/RESULTS.md, "BLAS threads")
    ta.ops.keep_freed_memory()  # the same arrays every step: malloc reuses them (tinyattn/ops/memory.py)
    ta.manual_seed(0)
    x = ta.randn(4)
    keys = ta.randn(5, 4)
    values = ta.tensor(np.eye(5, dtype=np.float32))  # one-hot values: the context is the weights
    target = values[TARGET].detach()
    w_q = ta.tensor(np.eye(4, dtype=np.float32) * 0.1, requires_grad=True)

    print(f"query attends to {len(TOKENS)} keys; target = the value of {TOKENS[TARGET]!r}\n")
    for step in range(steps + 1):
        loss, weights = attention_loss(w_q, x, keys, values, target)
        if step % 10 == 0:
            print(f"step {step:3d}  loss {loss.item():.4f}  {bar(weights.data)}")
        w_q.grad = None
        loss.backward()
        with ta.no_grad():
            w_q.data -= lr * w_q.grad

    best = TOKENS[int(np.argmax(weights.data))]
    print(f"\nafter {steps} steps the query attends most to {best!r} "
          f"(weight {weights.data.max():.2f})")

    # Trust, but verify: the same loss in float64, analytic gradient vs finite differences.
    w64 = ta.tensor(w_q.data.astype(np.float64), requires_grad=True)
    args = [t.double() for t in (x, keys, values, target)]
    ta.gradcheck(lambda w: attention_loss(w, *args)[0], (w64,))
    print("gradcheck of d loss / d W_q against finite differences: OK")
    return weights.data


if __name__ == "__main__":
    main()
