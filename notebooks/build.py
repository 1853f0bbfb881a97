"""Write the notebooks of this folder from the cells below, run them, and store their outputs.

    python notebooks/build.py            # every notebook; or name some: build.py 01_backprop_to_softmax

Each notebook is stored with its outputs and pictures, so it reads as it is on a code host.
The cells are written here (not edited in Jupyter) so that a change is one diff a reviewer can
read; tests/test_notebooks.py runs the stored notebooks again from a fresh folder.
Needs the test extra: pip install -e ".[test]" (nbformat, nbclient, ipykernel).
"""
import os
import sys

import gpt_from_the_engine_up  # notebook 04's cells, in a file of their own (this one holds 01 to 03)

HERE = os.path.dirname(os.path.abspath(__file__))

SETUP = """import numpy as np
import matplotlib.pyplot as plt
import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F
np.set_printoptions(precision=4, suppress=True)
%matplotlib inline
# load the compiled kernels once (Numba caches them on disk), so the timings below are the ops' own
(ta.randn(2, 2, requires_grad=True) @ ta.randn(2, 2)).softmax(-1).sum().backward()"""

NOTEBOOKS = {
    "01_backprop_to_softmax": [
        ("md", """# Backpropagation, from one tensor to a softmax

A tensor in tinyattn is a numpy array that remembers the op that made it. `backward()` walks
those ops in reverse and applies each one's vector-Jacobian product. We start with one op, check
each gradient by hand, and end with the softmax at the heart of attention, checked three ways:
by hand, by `ta.gradcheck` (central differences) and by the engine. The softmax's backward is
yours to derive: this notebook asks for it and does not print it."""),
        ("code", SETUP),
        ("md", """## One multiplication

For y = a * b summed to a number L, dL/da = b and dL/db = a: each input's gradient is the other input."""),
        ("code", """a = ta.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = ta.tensor([4.0, 5.0, 6.0], requires_grad=True)
L = (a * b).sum()
L.backward()
print("dL/da =", a.grad, "  by hand:", b.data)
print("dL/db =", b.grad, "  by hand:", a.data)"""),
        ("md", """## A chain: the gradient flows back op by op

L = sum(tanh(w * x)), element by element. The engine records three nodes: Mul, Tanh, Sum.
`ta.autograd.trace()` prints the walk: newest node first, each with the size of the gradient it
received and of those it handed on."""),
        ("code", """ta.manual_seed(0)
w = ta.randn(4, dtype=np.float64, requires_grad=True)
x = ta.randn(4, dtype=np.float64)
h = (w * x).tanh()
L = h.sum()
with ta.autograd.trace() as tape:
    L.backward()
print(tape)
# by hand, one op at a time from the end: dL/dh = 1, d tanh(u)/du = 1 - tanh(u)^2, du/dw = x
by_hand = 1.0 * (1 - h.data ** 2) * x.data
print("largest gap to the hand-derived dL/dw:", np.abs(w.grad - by_hand).max())"""),
        ("md", """## The softmax

y = softmax(s): y_i = exp(s_i) / sum_j exp(s_j). Every y_i depends on every s_j, through the sum
below the line. Given an upstream gradient g = dL/dy, what is dL/ds?

Derive it yourself before reading on: it is exercise 3 of `python -m tinyattn.exercises`, after
`broadcast` and `matmul` (the two steps above are their warm-up). `start softmax` copies it to
`./exercises/`, `hint softmax` gives one step at a time, `check softmax` names the usual
mistakes. Then paste your `backward` over the one below and run the cell again. Until you do,
it calls the exercise's worked solution, which this notebook does not print."""),
        ("code", """from tinyattn.exercises.solutions import softmax as worked

def backward(grad, cache):
    \"\"\"The exercise's signature: grad = dL/dy, cache = (y,); returns dL/ds. Paste yours here.\"\"\"
    return worked.backward(grad, cache)

s = ta.tensor(np.array([2.0, 1.0, 0.1]), requires_grad=True)
y = s.softmax(-1)
g = np.array([1.0, -2.0, 0.5])          # some upstream gradient
y.backward(g)
print("engine       :", s.grad)
print("your backward:", backward(g, (y.data,)), " (the worked solution until you paste yours)")
print("largest gap:", np.abs(s.grad - backward(g, (y.data,))).max())"""),
        ("code", """# central differences on the whole Jacobian, in float64, with a random upstream gradient
print(ta.gradcheck(lambda s: s.softmax(-1), (s,)))"""),
        ("md", """## Where the gradient goes: a picture

The whole Jacobian dy_i/ds_j, read off the engine one row at a time: an upstream gradient that is
1 at y_i and 0 elsewhere brings back row i. Here for a flat and for a peaked softmax. A peaked
softmax (large scores) has a nearly zero Jacobian: the gradient cannot get through. That is why
attention divides its scores by sqrt(d_k) (the next notebook)."""),
        ("code", """def jacobian(scores):
    rows = []
    for i in range(len(scores)):
        s = ta.tensor(np.array(scores), requires_grad=True)
        s.softmax(-1).backward(np.eye(len(scores))[i])   # upstream gradient: 1 at y_i
        rows.append(s.grad)
    return np.stack(rows)

fig, axes = plt.subplots(1, 2, figsize=(7, 3))
for ax, (title, scores) in zip(axes, [("flat: scores (0.2, 0.1, 0)", [0.2, 0.1, 0.0]),
                                      ("peaked: scores (8, 1, 0)", [8.0, 1.0, 0.0])]):
    im = ax.imshow(jacobian(np.array(scores)), cmap=ta.viz.SIGNED_CMAP, vmin=-0.25, vmax=0.25)  # red > 0 > blue
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("score j"); ax.set_ylabel("weight i")
fig.colorbar(im, ax=axes, shrink=0.8)
plt.show()"""),
    ],
    "02_attention_backward": [
        ("md", """# Attention's backward, by the numbers

The worked example of Raimi Karim's article ["Illustrated: Self-Attention"](https://towardsdatascience.com/illustrated-self-attention-2d627e33b20a):
three inputs of size 4, queries, keys and values of size 3. We run it forward, look at every
gradient, see why the scores are divided by sqrt(d_k) (Vaswani et al. 2017, section 3.2.1), and
then open a real `nn.MultiheadAttention` with the fused node switched off to watch its scores."""),
        ("code", SETUP),
        ("code", """X = np.array([[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]], np.float64)
W_K = np.array([[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]], np.float64)
W_Q = np.array([[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]], np.float64)
W_V = np.array([[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]], np.float64)
x = ta.tensor(X)
w_q, w_k, w_v = (ta.tensor(W, requires_grad=True) for W in (W_Q, W_K, W_V))
Q, K, V = x @ w_q, x @ w_k, x @ w_v
scores = Q @ K.T                 # the article leaves out the 1/sqrt(d_k) scale
weights = scores.softmax(-1)
out = weights @ V
for t in (scores, weights):
    t.retain_grad()
print("outputs (the article rounds the first to [2.0, 7.0, 1.5]):")
print(out.data)"""),
        ("md", """## Every gradient of one step

This part uses the backward rules of the exercises `matmul`, `softmax` and `attention`
(`python -m tinyattn.exercises`): derive them there first, and read on to see them at work.

Take L = sum(out). Backward through out = W V gives dL/dW = g V^T and dL/dV = W^T g; through the
softmax, dL/dscores = W * (dL/dW - sum(dL/dW * W)); through scores = Q K^T, dL/dQ = dL/dscores K
and dL/dK = dL/dscores^T Q."""),
        ("code", """out.sum().backward()
g = np.ones_like(out.data)
d_weights = g @ V.data.T
d_scores = weights.data * (d_weights - (d_weights * weights.data).sum(-1, keepdims=True))
print("dL/dweights (engine):\\n", weights.grad)
print("dL/dscores  (engine):\\n", scores.grad)
print("gap to the hand-derived dL/dscores:", np.abs(scores.grad - d_scores).max())
print("dL/dW_q:\\n", w_q.grad)
print("gradcheck of the whole step:",
      ta.gradcheck(lambda a, b, c: ((x @ a) @ (x @ b).T).softmax(-1) @ (x @ c), (w_q, w_k, w_v)))"""),
        ("md", """The second input's weights are almost one-hot (its scores are 4, 16, 12), so little
gradient reaches its scores. How much less than the first input's, row by row:"""),
        ("code", """print("weights of input 2:", weights.data[1])
sizes = np.linalg.norm(scores.grad, axis=1)   # the length of each row of dL/dscores
print("size of each row of dL/dscores:", sizes)
print(f"row 2 is {sizes[0] / sizes[1]:.0f} times smaller than row 1")"""),
        ("md", """With bigger vectors the scores grow, and this gets worse."""),
        ("md", """## Why divide by sqrt(d_k)

q.k of random unit-variance vectors has variance d_k, so without the scale the scores grow with
d_k, the softmax saturates, and dL/dscores vanishes. Measured on random queries and keys:"""),
        ("code", """rng = np.random.default_rng(0)
dims = [4, 16, 64, 256, 1024]
with_scale, without = [], []
for d in dims:
    q = ta.tensor(rng.standard_normal((32, d)), requires_grad=True)
    k = ta.tensor(rng.standard_normal((16, d)))
    for scale, store in ((1 / np.sqrt(d), with_scale), (1.0, without)):
        q.grad = None
        s = (q @ k.T) * scale
        s.softmax(-1).backward(rng.standard_normal((32, 16)))
        store.append(np.median(np.linalg.norm(q.grad, axis=1)))
plt.figure(figsize=(5, 3))
plt.loglog(dims, with_scale, "o-", label="scores / sqrt(d_k)")
plt.loglog(dims, without, "s-", label="scores unscaled")
plt.xlabel("d_k"); plt.ylabel("median |dL/dq|"); plt.legend(); plt.title("gradient reaching the queries")
plt.show()"""),
        ("md", """## Inside a real MultiheadAttention

By default attention runs as one fused graph node: fast, but its scores are hidden. Inside
`with ta.fused(False):` every layer builds its graph from primitive ops, so the scores and the
softmax are tensors a hook or `retain_grad()` can see. With `keep_weights` on, the module keeps
them in `last_tensors`. The outputs and gradients are the same either way."""),
        ("code", """ta.manual_seed(0)
mha = nn.MultiheadAttention(8, num_heads=2, batch_first=True).double()
mha.keep_weights = True
tokens = ta.tensor(np.random.default_rng(1).standard_normal((1, 5, 8)))
with ta.fused(False):
    out, _ = mha(tokens, tokens, tokens, attn_mask=~nn.causal_mask(5))   # PyTorch's polarity: True = hidden
    scores, weights = mha.last_tensors
    scores.retain_grad(); weights.retain_grad()
    (out * out).sum().backward()
fig, axes = plt.subplots(2, 2, figsize=(6, 5))
for h in range(2):
    axes[0, h].imshow(weights.data[0, h], cmap="viridis"); axes[0, h].set_title(f"head {h}: weights", fontsize=9)
    limit = np.abs(scores.grad[0]).max()
    axes[1, h].imshow(scores.grad[0, h], cmap=ta.viz.SIGNED_CMAP, vmin=-limit, vmax=limit)  # as ta.viz draws gradients
    axes[1, h].set_title(f"head {h}: dL/dscores (blue < 0 < red)", fontsize=9)
plt.tight_layout(); plt.show()
fused_out, _ = mha(tokens, tokens, tokens, attn_mask=~nn.causal_mask(5))
print("largest gap between the fused node and the composed graph:", np.abs(fused_out.data - out.data).max())"""),
    ],
    "03_train_a_transformer": [
        ("md", """# Train a small Transformer and watch it learn where to look

A two-layer Transformer encoder (Vaswani et al. 2017, ["Attention Is All You Need"](https://arxiv.org/abs/1706.03762))
learns to answer "what does *it* refer to?" in made-up sentences: it must point from the word
"it" to the noun it stands for. We keep the attention weights of the last layer and the size of
the gradient reaching its attention parameters as it trains."""),
        ("code", SETUP),
        ("code", """from tinyattn.data.toy_translation import PAD
from tinyattn.data.what_is_it import WhatIsIt
from tinyattn.models import PointerEncoder
ta.manual_seed(0)
data = WhatIsIt(seed=0)
model = PointerEncoder(len(data.vocab), pad_id=PAD, d_model=32, nhead=2, num_layers=2, dim_feedforward=64)
attention = nn.keep_attention_weights(model)
optimizer = ta.optim.Adam(model.parameters(), lr=3e-3)
sentence = data.sentence()
probe, words = data.encode([sentence]), sentence[0]
print(" ".join(words), "   ('it' refers to:", words[sentence[2]] + ")")"""),
        ("code", """snapshots, grad_norms, losses = {}, [], []
last = sorted(attention)[-1]
for step in range(1, 201):
    tokens, lengths, it_at, noun_at = data.batch(32)
    loss = F.cross_entropy(model(tokens, lengths, it_at), noun_at)
    optimizer.zero_grad(); loss.backward()
    params = [p for name, p in model.named_parameters() if name.startswith(last.rsplit(".", 1)[0]) and "self_attn" in name]
    grad_norms.append(float(np.sqrt(sum((p.grad ** 2).sum() for p in params))))
    optimizer.step(); losses.append(loss.item())
    if step in (1, 50, 200):
        with ta.no_grad():
            model(*probe[:3])
        snapshots[step] = attention[last].last_weights[0].mean(0)
print(f"loss {losses[0]:.3f} -> {np.mean(losses[-20:]):.3f}")"""),
        ("code", """fig, axes = plt.subplots(1, 4, figsize=(14, 3.4))
for ax, (step, w) in zip(axes, snapshots.items()):
    ax.imshow(w, cmap="viridis", vmin=0)
    ax.set_title(f"last layer, step {step}", fontsize=9)
    ax.set_xticks(range(len(words))); ax.set_xticklabels(words, rotation=90, fontsize=7)
    ax.set_yticks(range(len(words))); ax.set_yticklabels(words, fontsize=7)
axes[3].plot(grad_norms, lw=0.8); axes[3].set_title("|dL/d(attention parameters)|", fontsize=9)
axes[3].set_xlabel("step")
plt.tight_layout(); plt.show()"""),
        ("md", """The gradient reaching the attention parameters is largest while the weights are still
moving toward their places, and falls once attention has found them."""),
    ],
    "04_gpt_from_the_engine_up": gpt_from_the_engine_up.cells(SETUP),
}


def build(name, run=True):
    import nbformat
    from nbclient import NotebookClient

    cells = [nbformat.v4.new_markdown_cell(text) if kind == "md" else nbformat.v4.new_code_cell(text)
             for kind, text in NOTEBOOKS[name]]
    notebook = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    if run:
        NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": HERE}}).execute()
    path = os.path.join(HERE, f"{name}.ipynb")
    nbformat.write(notebook, path)
    return path


if __name__ == "__main__":
    for name in sys.argv[1:] or NOTEBOOKS:
        print("wrote", build(name))
