"""Watch backpropagation go through attention: the graph, the walk, and gradients as pictures.

    python demos/see_backprop.py              # 10-60 s on 2 cores; pictures in demo_out/see_backprop/
    python demos/see_backprop.py --quick      # seconds: fewer sizes, short training runs (demo_out/see_backprop_quick/)

1. One attention step on the worked example of "Illustrated: Self-Attention" (three inputs of
   size 4): the graph that computed the loss, drawn; the backward walk, printed node by node;
   the weights, dL/dscores and dL/dweights side by side. Then the same inputs through a real
   nn.MultiheadAttention under `ta.fused(False)`, so that its scores and weights are tensors of
   the graph: each head's weights and dL/dscores, and the same numbers as its fused node.
2. Why divide the scores by sqrt(d_k) (Vaswani et al. 2017, section 3.2.1): the size of the
   gradient that reaches Q and K through the softmax, for d_k from 4 to 512, with and without
   the scale, on random inputs and on small trained models.
3. Attention learning: one sentence of the toy translation task, its attention weights at
   several training steps (small multiples and an animated GIF), beside the size of the
   gradient reaching the attention parameters at those steps.
"""
import argparse
import os

import numpy as np

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn.data import TOKEN_IDS, ToyTranslation
from tinyattn.models import Seq2Seq

ARTICLE = '"Illustrated: Self-Attention" (Raimi Karim, 2019)'
X = np.array([[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]], np.float64)
W_K = np.array([[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]], np.float64)
W_Q = np.array([[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]], np.float64)
W_V = np.array([[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]], np.float64)


# --- 1. one attention step, every gradient on show ---------------------------------------------
def one_step(out_dir):
    """The article's example as separate ops, so that every intermediate has a gradient to show."""
    x = ta.tensor(X)
    w_q, w_k, w_v = (ta.tensor(w, requires_grad=True) for w in (W_Q, W_K, W_V))
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.T / np.sqrt(3.0)
    weights = scores.softmax(-1)
    out = weights @ v
    target = ta.tensor(np.array([[2.0, 7.0, 1.5], [2.0, 8.0, 0.0], [2.0, 8.0, 1.0]]))
    loss = ((out - target) ** 2).mean()
    for t in (scores, weights):
        t.retain_grad()  # keep the gradients of these intermediates in .grad

    params = {"W_q": w_q, "W_k": w_k, "W_v": w_v, "X": x}
    with ta.autograd.trace() as tape:
        loss.backward(retain_graph=True)
    print(f"1. One attention step ({ARTICLE}), loss = {loss.item():.4f}")
    print("   the backward walk, node by node (each after every node that uses its output):")
    print("   " + str(tape).replace("\n", "\n   "))
    graph = os.path.join(out_dir, "graph.png")
    ta.viz.draw_graph(loss, path=graph, params=params)
    walk = os.path.join(out_dir, "walk.html")  # the same walk in a browser: Next steps through it node by node
    ta.viz.walk_page(loss, walk, params=params)

    names = ["x1", "x2", "x3"]
    panels = [
        dict(array=weights.data, title="weights = softmax(scores)", x_labels=names, y_labels=names,
             caption="forward: how much each input (row) attends to each other (column)"),
        dict(array=weights.grad, title="dL/dweights", x_labels=names, y_labels=names, signed=True,
             caption="= dL/dout V^T: red means more of that value would raise the loss"),
        dict(array=scores.grad, title="dL/dscores", x_labels=names, y_labels=names, signed=True,
             caption="= w * (dL/dw - sum(w dL/dw)): each row sums to 0, the softmax's mark"),
    ]
    panels_path = os.path.join(out_dir, "weights_and_gradients.png")
    ta.viz.gradient_panels(panels, path=panels_path, title="one attention step, forward and backward")
    row_sums = scores.grad.sum(-1)
    print(f"   each row of dL/dscores sums to 0 (softmax): {np.abs(row_sums).max():.1e}")
    return graph, walk, panels_path


def inside_multihead(out_dir):
    """A real nn.MultiheadAttention (two heads of size 2) on the article's three inputs.

    By default its attention is one fused graph node, with no scores or weights to hold; built
    under ta.fused(False) it is the composed graph (Q K^T * scale, Softmax, @ V) and the layer
    keeps that graph's own scores and weights (last_tensors, with keep_weights on).
    """
    ta.manual_seed(0)
    mha = nn.MultiheadAttention(4, 2, batch_first=True).double()
    mha.keep_weights = True
    x = ta.tensor(X[None])  # (1 sentence, 3 inputs, 4 features): query, key and value alike
    target = ta.tensor(np.random.default_rng(0).standard_normal((1, 3, 4)))

    def loss_of(out):
        return ((out - target) ** 2).mean()

    with ta.fused(False):
        out, _ = mha(x, x, x)
    scores, weights = mha.last_tensors  # (1, 2 heads, 3, 3) each: tensors of the graph
    scores.retain_grad()
    weights.retain_grad()
    loss = loss_of(out)
    with ta.autograd.trace() as tape:
        loss.backward()
    composed_grads = {name: p.grad.copy() for name, p in mha.named_parameters()}
    mha.zero_grad()
    with ta.fused(True):  # the default: one node where the scores and the softmax were
        fused_out, _ = mha(x, x, x)
    loss_of(fused_out).backward()
    gap = max([np.abs(fused_out.data - out.data).max()]
              + [np.abs(p.grad - composed_grads[name]).max() for name, p in mha.named_parameters()])

    print(f"\n1b. The same inputs through nn.MultiheadAttention(4, 2) under ta.fused(False), loss = {loss.item():.4f}:")
    print("   its walk, at the nodes of shape (1 sentence, 2 heads, 3 queries, 3 keys), in the order visited:")
    meaning = {"Softmax": "weights = softmax(scores)", "Mul": "scores = Q K^T * 1/sqrt(2)", "MatMul": "Q K^T"}
    for r in tape:
        if r.output_shapes == (scores.shape,):
            print(f"     {r.name:<8} {meaning.get(r.name, ''):<27} |grad received| {r.grad_output_norms[0]:.3g}")
    print(f"   fused node and composed graph: outputs and parameter gradients differ by at most {gap:.1e}")
    names = ["x1", "x2", "x3"]
    panels = []
    for head in range(2):
        panels += [dict(array=weights.data[0, head], title=f"head {head}: weights", x_labels=names, y_labels=names,
                        caption="mha.last_tensors.weights, the softmax of this head's scores"),
                   dict(array=scores.grad[0, head], title=f"head {head}: dL/dscores", x_labels=names,
                        y_labels=names, signed=True, caption="scores.grad after scores.retain_grad()")]
    path = os.path.join(out_dir, "multihead_heads.png")
    ta.viz.gradient_panels(panels, path=path, title="inside nn.MultiheadAttention with ta.fused(False)")
    print(f"   each row of dL/dscores sums to 0 in both heads: {np.abs(scores.grad.sum(-1)).max():.1e}")
    return path, gap


# --- 2. why sqrt(d_k) ----------------------------------------------------------------------------
def query_gradients(q, k, v, scale, upstream):
    """For L = <upstream, attention(q, k, v)>: |dL/dq_i| for every query i, and whether its softmax
    is saturated (largest weight > 0.99)."""
    q, k = ta.tensor(q, requires_grad=True), ta.tensor(k, requires_grad=True)
    out, weights = F.scaled_dot_product_attention(q, k, ta.tensor(v), scale=scale)
    out.backward(upstream)
    return np.linalg.norm(q.grad, axis=-1).ravel(), (weights.data.max(-1) > 0.99).ravel()


def summary(d, scaled, unscaled):
    """(d, median |dL/dq| scaled, share saturated scaled, the same unscaled) over every query."""
    row = [d]
    for norms, saturated in (scaled, unscaled):
        row += [float(np.median(norms)), float(np.mean(saturated))]
    return tuple(row)


def random_inputs(dims, rng, tokens=16, trials=8):
    rows = []
    for d in dims:
        runs = {True: [], False: []}
        for _ in range(trials):
            q, k = rng.standard_normal((2, 1, tokens, d))
            v, upstream = rng.standard_normal((2, 1, tokens, 16))  # values of one size: only d_k varies
            for scaled in runs:
                runs[scaled].append(query_gradients(q, k, v, 1 / np.sqrt(d) if scaled else 1.0, upstream))
        rows.append(summary(d, *(tuple(np.concatenate(part) for part in zip(*runs[s])) for s in (True, False))))
    return rows


class Lookup(nn.Module):
    """Attend from a query symbol to the matching one among the key symbols and read its value."""

    def __init__(self, symbols, embed, d_k):
        super().__init__()
        self.embed = nn.Embedding(symbols, embed)
        self.W_q, self.W_k = nn.Linear(embed, d_k), nn.Linear(embed, d_k)
        self.out = nn.Linear(embed, symbols)

    def forward(self, query, keys, scale):
        e_q, e_k = self.embed(query[:, None]), self.embed(keys)
        context, _ = F.scaled_dot_product_attention(self.W_q(e_q), self.W_k(e_k), e_k, scale=scale)
        return self.out(context[:, 0])


def trained_models(dims, steps, symbols=24, tokens=12):
    """Train a lookup model per d_k with the scale; then, at the trained weights, the same
    measures as for random inputs, with the scale and with it removed."""
    rows = []
    for d in dims:
        ta.manual_seed(d)
        model = Lookup(symbols, 16, d)
        data = np.random.default_rng(d)

        def batch():
            keys = np.stack([data.permutation(symbols)[:tokens] for _ in range(64)])
            return keys[np.arange(64), data.integers(0, tokens, 64)], keys

        def loss_fn(step):
            query, keys = batch()
            return F.cross_entropy(model(query, keys, 1 / np.sqrt(d)), query)

        ta.train.fit(model, ta.optim.Adam(model.parameters(), lr=1e-2), loss_fn, steps, label=f"   d_k={d:>3d}")
        with ta.no_grad():
            query, keys = batch()
            q, k, v = model.W_q(model.embed(query[:, None])).data, model.W_k(model.embed(keys)).data, model.embed(keys).data
        upstream = np.random.default_rng(0).standard_normal(q.shape[:-1] + (v.shape[-1],))
        rows.append(summary(d, query_gradients(q, k, v, 1 / np.sqrt(d), upstream),
                            query_gradients(q, k, v, 1.0, upstream)))
    return rows


def why_scale(out_dir, quick):
    dims = [4, 64, 512] if quick else [4, 8, 16, 32, 64, 128, 256, 512]
    print("\n2. Why divide by sqrt(d_k): the gradient that reaches the queries through the softmax")
    random_rows = random_inputs(dims, np.random.default_rng(0))
    trained_rows = trained_models(dims[:2] if quick else dims[::2], 40 if quick else 150)
    for name, rows in (("random inputs (16 keys, entries N(0, 1), values of size 16)", random_rows),
                       ("trained lookup models (trained with the scale, measured with and without)", trained_rows)):
        print(f"   {name}: median |dL/dq| per query, share of saturated softmax rows")
        print("     d_k   scaled: |dL/dq|  saturated   unscaled: |dL/dq|  saturated")
        for d, g_s, sat_s, g_u, sat_u in rows:
            print(f"   {d:5d}   {g_s:15.3g}  {sat_s:9.0%}   {g_u:17.3g}  {sat_u:9.0%}")

    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4))
    for rows, marker, name in ((random_rows, "o", "random inputs"), (trained_rows, "s", "trained model")):
        d = [r[0] for r in rows]
        ax.plot(d, [r[1] for r in rows], marker + "-", label=f"{name}, scaled by 1/sqrt(d_k)")
        ax.plot(d, [max(r[3], 1e-12) for r in rows], marker + "--", label=f"{name}, unscaled (below 1e-12: drawn at 1e-12)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("d_k (size of queries and keys)")
    ax.set_ylabel("median |dL/dq| over queries")
    ax.set_title("unscaled, the softmax saturates: most queries get almost no gradient", fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(out_dir, "why_sqrt_dk.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path, random_rows, trained_rows


# --- 3. attention learning over time ---------------------------------------------------------------
def learning_over_time(out_dir, quick):
    steps_shown = [0, 10, 25, 50] if quick else [0, 25, 50, 100, 150, 200, 300]
    ta.manual_seed(0)
    data = ToyTranslation(max_phrases=2, seed=0)
    model = Seq2Seq(len(data.source_vocab), len(data.target_vocab), **TOKEN_IDS)
    sentence = "big red cat sees small dog".split()
    source, lengths, target = data.encode_pairs([(sentence, ta.data.translate_words(sentence))])
    frames, norms = [], []

    def snapshot(step):
        with ta.no_grad():
            frames.append(model.teacher_forced_weights(source, lengths, target)[0])
        grads = [p.grad for p in model.decoder.attention.parameters() if p.grad is not None]
        norms.append(float(np.sqrt(sum(np.sum(g.astype(np.float64) ** 2) for g in grads))) if grads else np.nan)
        return {}

    opt = ta.optim.Adam(model.parameters(), lr=3e-3)
    model.loss(*data.batch(64)).backward()  # step 0: the gradient before any update
    snapshot(0)
    model.zero_grad()
    history = ta.train.fit(model, opt, lambda step: model.loss(*data.batch(64)), steps_shown[-1],
                           clip_grad_norm=1.0, label="translation", rngs={"data": data.rng},
                           evaluate=lambda step: snapshot(step) if step in steps_shown else {}, evaluate_every=1)
    written = data.target_vocab.decode(target[0, 1:]) + ["</s>"]
    path, gif = os.path.join(out_dir, "attention_over_time.png"), os.path.join(out_dir, "attention_over_time.gif")
    ta.viz.attention_over_time(np.stack(frames), steps_shown, sentence, written, norms, path=path, gif_path=gif,
                               title=f"'{' '.join(sentence)}': where the decoder looks, as training goes")
    print(f"\n3. Attention learning over time (loss {history.losses[0]:.2f} -> {history.losses[-1]:.2f}):")
    print("   step  |grad| reaching the attention parameters   largest weight per target word")
    for step, norm, weights in zip(steps_shown, norms, frames):
        print(f"   {step:4d}  {norm:38.3g}   " + " ".join(f"{w:.2f}" for w in weights.max(-1)))
    return path, gif


def main(argv=None):
    ta.set_blas_threads(1)      # small products: one BLAS thread is faster (benchmarks/RESULTS.md, "BLAS threads")
    ta.ops.keep_freed_memory()  # the same arrays every step: malloc reuses them (tinyattn/ops/memory.py)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--out-dir", default=None,
                        help="pictures go here (default demo_out/see_backprop, or demo_out/see_backprop_quick with --quick)")
    parser.add_argument("--quick", action="store_true", help="fewer sizes and a short training run")
    args = parser.parse_args(argv)
    args.out_dir = args.out_dir or os.path.join("demo_out", "see_backprop_quick" if args.quick else "see_backprop")
    os.makedirs(args.out_dir, exist_ok=True)
    pictures = list(one_step(args.out_dir))
    multihead_picture, multihead_gap = inside_multihead(args.out_dir)
    pictures.append(multihead_picture)
    scale_picture, random_rows, trained_rows = why_scale(args.out_dir, args.quick)
    pictures.append(scale_picture)
    pictures.extend(learning_over_time(args.out_dir, args.quick))
    print(f"\npictures in {args.out_dir}/: " + ", ".join(os.path.basename(p) for p in pictures))
    return {"random": random_rows, "trained": trained_rows, "multihead_gap": multihead_gap, "pictures": pictures}


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        raise SystemExit(1) from None
