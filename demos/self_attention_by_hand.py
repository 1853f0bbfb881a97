"""Self-attention step by step, with the numbers of a well-known worked example (runs in seconds).

The example is the one in Raimi Karim's article "Illustrated: Self-Attention" (2019,
https://towardsdatascience.com/illustrated-self-attention-2d627e33b20a): three inputs of size 4, and weight matrices
that turn each into a key, a query and a value of size 3. We print every stage, then
backpropagate a simple loss and check each weight gradient against finite differences.
The article leaves out the 1/sqrt(d_k) scale and takes the softmax of input 1's scores [2, 4, 4]
as [0.0, 0.5, 0.5] (exactly [0.063, 0.468, 0.468]); weighting the values by those gives its
output 1, [2.0, 7.0, 1.5]; with the exact weights it is [1.937, 6.683, 1.595].

    python demos/self_attention_by_hand.py [--out demo_out/self_attention_weights.png]
"""
import argparse
import os

import numpy as np

import tinyattn as ta
import tinyattn.nn as nn

X = np.array([[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]], np.float64)
W_K = np.array([[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]], np.float64)
W_Q = np.array([[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]], np.float64)
W_V = np.array([[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]], np.float64)
# The article's softmax of input 1's scores [2, 4, 4]: exactly [0.063, 0.468, 0.468], and not a
# rounding to one decimal (that gives 0.1 first); its output 1, [2.0, 7.0, 1.5], is these weights'.
ARTICLE_WEIGHTS = np.array([0.0, 0.5, 0.5])


def show(name, tensor):
    rows = np.atleast_2d(tensor.data if hasattr(tensor, "data") else tensor)
    print(f"{name}:")
    for row in rows:
        print("   [" + ", ".join(f"{v:8.3f}" for v in row) + "]")


def build(scale):
    """SelfAttention with the article's matrices. As Linear layers: weight = W^T, bias = 0."""
    attn = nn.SelfAttention(4, key_dim=3, value_dim=3, bias=True, scale=scale).double()
    for layer, W in ((attn.W_q, W_Q), (attn.W_k, W_K), (attn.W_v, W_V)):
        layer.weight.data[:] = W.T
        layer.bias.data[:] = 0.0
    return attn


def walk_through(scale):
    attn = build(scale)
    x = ta.tensor(X)
    Q, K, V = attn.W_q(x), attn.W_k(x), attn.W_v(x)
    print(f"\n=== {'with' if scale else 'without'} the 1/sqrt(d_k) scale ===")
    show("keys K = X W_k", K)
    show("queries Q = X W_q", Q)
    show("values V = X W_v", V)
    scores = Q @ K.T * (1 / np.sqrt(3) if scale else 1.0)
    show("scores Q K^T" + (" / sqrt(3)" if scale else ""), scores)
    weights = scores.softmax(-1)
    show("softmax over each row (attention weights)", weights)
    show("input 1: each value times its weight (rows add up to output 1)", weights.data[0][:, None] * V.data)
    outputs, _ = attn(x[None])
    show("outputs = weights @ V (one row per input)", outputs[0])
    if not scale:
        article = ", ".join(f"{v:.1f}" for v in ARTICLE_WEIGHTS @ V.data)
        print(f"   (the article takes these weights of input 1 as [0.0, 0.5, 0.5]: output 1 = [{article}])")
    return outputs.data[0]


def check_gradients(attn):
    """d loss / d W for loss = sum of squares of the outputs, analytic vs finite differences."""
    x = ta.tensor(X[None])
    loss = (attn(x)[0] ** 2).sum()
    attn.zero_grad()
    loss.backward()
    print(f"\nloss = sum(outputs^2) = {loss.item():.4f}; its gradient for each weight matrix:")
    for name in ("W_q", "W_k", "W_v"):
        show(f"d loss / d {name} (as the article's W, i.e. weight^T)", getattr(attn, name).weight.grad.T)
    params = tuple(attn.parameters())
    ta.gradcheck(lambda *p: (attn(x)[0] ** 2).sum(), params)
    print("every gradient above agrees with central finite differences (ta.gradcheck)")


def main(out="demo_out/self_attention_weights.png"):
    ta.set_blas_threads(1)      # small products: one BLAS thread is faster (benchmarks/RESULTS.md, "BLAS threads")
    ta.ops.keep_freed_memory()  # the same arrays every step: malloc reuses them (tinyattn/ops/memory.py)
    show("inputs X (three inputs of size 4)", X)
    for name, W in (("W_q", W_Q), ("W_k", W_K), ("W_v", W_V)):
        show(f"{name} (4 x 3)", W)
    walk_through(scale=False)
    walk_through(scale=True)
    check_gradients(build(scale=False))
    labels = ["input 1", "input 2", "input 3"]
    if os.path.dirname(out):
        os.makedirs(os.path.dirname(out), exist_ok=True)
    ta.viz.attention_heatmap(build(False)(ta.tensor(X[None]))[1][0], labels, labels, path=out,
                             title='"Illustrated: Self-Attention" example: weights (unscaled)')
    print(f"\nheatmap of the weights written to {out}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="demo_out/self_attention_weights.png", help="where to write the heatmap PNG")
    main(parser.parse_args().out)
