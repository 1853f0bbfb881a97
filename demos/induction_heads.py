"""Induction heads: a two-layer attention-only Transformer learns to copy, all of a sudden.

    python demos/induction_heads.py          # about 30 seconds on 2 cores; pictures in induction_out/

Each sequence is a start token, then L random tokens (all different), then the same L tokens
again. The first half cannot be predicted: the best a model can do there is a loss of about
ln V (V tokens, each as likely). The repeated half can be predicted exactly, by anything that
looks back at what followed the current token the first time. The model is as small as such a
thing can be (Elhage et al. 2021, "A Mathematical Framework for Transformer Circuits",
https://transformer-circuits.pub/2021/framework/index.html): token and learned position
embeddings added into a residual stream, two layers of causal multi-head attention that each
add their output to it (no MLPs, no LayerNorm), and an unembedding to logits.

How it copies, once trained (Olsson et al. 2022, "In-context Learning and Induction Heads",
https://transformer-circuits.pub/2022/in-context-learning-and-induction-heads/index.html):

  * a previous-token head in layer 0 attends from each position to the one before it and writes
    "the token before me was A" into that position of the residual stream;
  * an induction head in layer 1, at a position holding token A, queries with "I am A" and
    matches the keys that say "the token before me was A": the position right after A's
    earlier occurrence. It copies that position's token B (its value) to the output, which
    then predicts B. Its keys are built by the layer-0 head: that is K-composition.

Neither head helps without the other, so for a while the loss on the repeated half barely
moves; then both form together and it falls in a few dozen steps: the phase change. We print
and draw, over training, the two losses and each head's two scores:

  previous-token score   mean attention from position i to i - 1 in the first half;
  prefix-matching score  mean attention from a token of the repeated half to the position
                         right after that token's earlier occurrence.

The phase-change step is the first evaluation at which the repeated half's loss is below half
of ln V. The pictures (in --out-dir): phase_change.png (the two losses), head_scores.png (both
scores, one line per head), heads.png (every head's attention on one sequence: the
previous-token head's diagonal just below the main one, the induction head's diagonal shifted
by the length of a half; the layer-0 heads look back only up to the last position a key is ever
needed at in training, 1 + the longest half), gradient_before_weights.png (at four steps around the phase change,
the induction head's attention beside minus the gradient of the repeated half's loss with
respect to its scores: where gradient descent pushes the scores, visible before the weights
follow), heads.html (every head in a browser at checkpoints over training, with -dL/dscores:
step through the phase change). Last, we knock the previous-token head out of layer 1's keys,
queries or values only.
"""
import argparse
import json
import math
import os
import time

import numpy as np

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F


class AttentionOnly(nn.Module):
    """Embeddings, then x = x + attention_l(x) for each layer (causal), then logits = x W_U^T."""

    def __init__(self, vocab_size, max_len, d_model=64, nhead=2, num_layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.positions = nn.Embedding(max_len, d_model)  # learned: the previous-token head needs them
        self.layers = nn.ModuleList([nn.MultiheadAttention(d_model, nhead, bias=False, batch_first=True)
                                     for _ in range(num_layers)])
        self.unembed = nn.Linear(d_model, vocab_size, bias=False)

    def stream(self, tokens):
        """The residual stream before the first layer: token plus position embedding, (B, T, d_model)."""
        return self.embed(tokens) + self.positions(np.arange(tokens.shape[1]))

    def forward(self, tokens):
        x = self.stream(tokens)
        for attention in self.layers:
            x = x + attention(x, x, x, need_weights=False, is_causal=True)[0]
        return self.unembed(x)


class Sequences:
    """BOS, L different random tokens, the same L again: (n, 2L + 1) token ids; BOS is id `vocab`."""

    def __init__(self, vocab, seed):
        self.vocab, self.rng = vocab, np.random.default_rng(seed)

    def batch(self, n, half):
        first = self.rng.random((n, self.vocab)).argsort(axis=1)[:, :half]  # no token twice in a half
        return np.concatenate([np.full((n, 1), self.vocab), first, first], axis=1)


def half_losses(logits, tokens, half):
    """(first half, repeated half) mean cross-entropies of predicting each next token.

    First half: tokens 1..L, unpredictable. Repeated half: tokens L+2..2L, each predictable from
    the token before it (token L+1, the first repeated one, is not, and counts in neither)."""
    first = F.cross_entropy(logits[:, :half].transpose(1, 2), tokens[:, 1:half + 1])  # classes on axis 1
    repeated = F.cross_entropy(logits[:, half + 1:-1].transpose(1, 2), tokens[:, half + 2:])
    return first, repeated


def head_scores(weights0, weights1, half):
    """Each head's previous-token and prefix-matching scores from attention weights (B, H, T, T)."""
    i = np.arange(2, half + 1)               # first-half tokens (not the start token) -> the token before
    j = np.arange(half)                      # repeated token at 1 + L + j, first seen at 1 + j
    scores = {}
    for layer, weights in enumerate((weights0, weights1)):
        previous = weights[:, :, i, i - 1].mean(axis=(0, 2))
        prefix = weights[:, :, half + 1 + j, j + 2].mean(axis=(0, 2))
        for h in range(weights.shape[1]):
            scores[f"{layer}.{h}"] = {"previous_token": float(previous[h]), "prefix_matching": float(prefix[h])}
    return scores


class Watch:
    """The evaluation fit calls: losses and head scores on fixed sequences, and for the gradient
    picture, layer 1's mean attention and minus the mean gradient of the repeated half's loss
    with respect to its scores (read with retain_grad on the composed graph)."""

    def __init__(self, model, tokens, half):
        self.model, self.tokens, self.half = model, tokens, half
        self.layers = nn.keep_attention_weights(model)
        self.steps, self.first, self.repeated, self.scores, self.attention, self.push = [], [], [], [], [], []
        self.states = []  # (label, state_dict) at each evaluation: the page's checkpoints

    def __call__(self, step):
        with ta.fused(False):  # the scores are then a tensor of the graph, not inside one fused node
            logits = self.model(self.tokens)
            layer0, layer1 = self.layers["layers.0"], self.layers["layers.1"]
            scores = layer1.last_tensors.scores
            scores.retain_grad()
            first, repeated = half_losses(logits, self.tokens, self.half)
            repeated.backward()
        self.model.zero_grad()  # this gradient is for looking at; fit zeroes again before each step anyway
        self.steps.append(step)
        self.first.append(first.item())
        self.repeated.append(repeated.item())
        self.scores.append(head_scores(layer0.last_weights, layer1.last_weights, self.half))
        self.attention.append(layer1.last_weights.mean(axis=0))
        self.push.append(-scores.grad.mean(axis=0))
        self.states.append((f"step {step}", self.model.state_dict()))
        return {"first half": self.first[-1], "repeated half": self.repeated[-1]}


def phase_change_step(steps, repeated, vocab):
    """The first evaluated step at which the repeated half's loss is below ln(V) / 2, or None."""
    return next((step for step, loss in zip(steps, repeated) if loss < math.log(vocab) / 2), None)


def diagonal_share(array, half):
    """Of the positive part of (H, T, T) `array` in the repeated half's rows, the share on the
    shifted diagonal (key = the position after the query token's earlier occurrence), per head."""
    j = np.arange(half)
    rows = np.clip(array[:, half + 1:], 0, None)
    return rows[:, j, j + 2].sum(axis=1) / np.maximum(rows.sum(axis=(1, 2)), 1e-30)


@ta.no_grad()
def knockouts(model, tokens, half, head):
    """The repeated half's loss with layer-0 head `head`'s output removed from what layer 1
    reads as its keys, its queries, its values, or from everything after layer 0."""
    layer0, layer1 = model.layers
    x = model.stream(tokens)
    full = x + layer0(x, x, x, need_weights=False, is_causal=True)[0]
    d = layer0.head_dim
    kept = layer0.out_proj.weight.data.copy()
    layer0.out_proj.weight.data[:, head * d:(head + 1) * d] = 0  # the head's share of W_o
    without = x + layer0(x, x, x, need_weights=False, is_causal=True)[0]
    layer0.out_proj.weight.data[:] = kept
    losses = {}
    for where in ("keys", "queries", "values", "everywhere"):
        def read(part):
            return without if where in (part, "everywhere") else full
        base = without if where == "everywhere" else full
        y = base + layer1(read("queries"), read("keys"), read("values"), need_weights=False, is_causal=True)[0]
        losses[where] = half_losses(model.unembed(y), tokens, half)[1].item()
    return losses


def plot_losses(watch, vocab, phase, path):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    ax.plot(watch.steps, watch.first, label="first half (random: nothing to predict from)")
    ax.plot(watch.steps, watch.repeated, label="repeated half (could copy)")
    ax.axhline(math.log(vocab), color="grey", ls="--", lw=0.9)
    ax.text(watch.steps[-1], math.log(vocab), f"ln V = {math.log(vocab):.2f}", ha="right", va="bottom", fontsize=8)
    if phase is not None:
        ax.axvline(phase, color="tab:red", ls=":", lw=1.2)
        ax.text(phase, 0.5 * math.log(vocab), f" phase change\n step {phase}", color="tab:red", fontsize=8, va="center")
    ax.set_xlabel("training step")
    ax.set_ylabel("cross-entropy (nats)")
    ax.set_title("loss on each half of the sequence", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_scores(watch, phase, path):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    kinds = (("previous_token", "previous-token score\n(attention from i to i - 1, first half)"),
             ("prefix_matching", "prefix-matching score\n(attention to the token after this token's earlier occurrence)"))
    for ax, (kind, title) in zip(axes, kinds):
        for head in watch.scores[0]:
            ax.plot(watch.steps, [s[head][kind] for s in watch.scores], ls="-" if head[0] == "0" else "--",
                    label=f"layer {head[0]} head {head[2:]}")
        if phase is not None:
            ax.axvline(phase, color="tab:red", ls=":", lw=1.2)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("training step")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_gradient(watch, head, picks, path):
    """Top: the induction head's mean attention at the steps `picks` (indices into watch); bottom:
    minus the gradient of the repeated half's loss with respect to its scores, red = raise."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(picks), figsize=(3.3 * len(picks), 6.6), squeeze=False)
    for column, index in enumerate(picks):
        weights, push = watch.attention[index][head], watch.push[index][head]
        top = max(1e-30, float(np.abs(push).max()))
        axes[0, column].imshow(weights, cmap="viridis", vmin=0, vmax=1)
        axes[1, column].imshow(push, cmap="RdBu_r", vmin=-top, vmax=top)
        axes[0, column].set_title(f"step {watch.steps[index]}: attention", fontsize=9)
        axes[1, column].set_title(f"step {watch.steps[index]}: -dL/dscores", fontsize=9)
        for ax in axes[:, column]:
            ax.set_xlabel("key position", fontsize=8)
            ax.tick_params(labelsize=7)
    axes[0, 0].set_ylabel("query position", fontsize=8)
    axes[1, 0].set_ylabel("query position", fontsize=8)
    fig.suptitle(f"induction head (layer 1 head {head}), averaged over the evaluation sequences:\nminus the gradient "
                 "(bottom; red: descent raises this score) points at the shifted diagonal before the attention (top) "
                 "is there", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


@ta.no_grad()
def draw_heads(model, tokens, layers, scores, roles, path):
    """Every head's attention on one sequence, one panel per (layer, head), tokens as labels."""
    import matplotlib.pyplot as plt

    model(tokens[:1])
    labels = ["BOS"] + [str(t) for t in tokens[0, 1:]]
    heads = list(scores)
    columns = len(heads) // 2
    fig, axes = plt.subplots(2, columns, figsize=(5.2 * columns, 10.4), squeeze=False)
    for ax, head in zip(axes.flat, heads):
        layer, h = int(head[0]), int(head[2:])
        ax.imshow(layers[f"layers.{layer}"].last_weights[0, h], cmap="viridis", vmin=0, vmax=1)
        ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=5)
        ax.set_yticks(range(len(labels)), labels, fontsize=5)
        s = scores[head]
        ax.set_title(f"layer {layer} head {h}{roles.get(head, '')}\nprevious-token {s['previous_token']:.2f}, "
                     f"prefix-matching {s['prefix_matching']:.2f}", fontsize=9)
        ax.set_xlabel("key (attended to)", fontsize=8)
        ax.set_ylabel("query (current token)", fontsize=8)
    fig.suptitle(f"every head on one sequence (BOS, {len(labels) // 2} tokens, the same again); brightest = weight 1",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    ta.set_blas_threads(1)      # small products: one BLAS thread is faster (benchmarks/RESULTS.md, "BLAS threads")
    ta.ops.keep_freed_memory()  # the same arrays every step: malloc reuses them (tinyattn/ops/memory.py)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--steps", type=int, default=1000, help="training steps")
    parser.add_argument("--batch", type=int, default=32, help="sequences per step")
    parser.add_argument("--vocab", type=int, default=64, help="V, the number of random tokens")
    parser.add_argument("--half", type=int, default=16,
                        help="L, tokens per half when evaluating; training draws L from L/2 to 3L/2 per batch")
    parser.add_argument("--d-model", type=int, default=64, help="width of the residual stream")
    parser.add_argument("--heads", type=int, default=2, help="attention heads per layer")
    parser.add_argument("--lr", type=float, default=3e-3, help="Adam's learning rate")
    parser.add_argument("--eval-every", type=int, default=20, help="steps between evaluations")
    parser.add_argument("--seed", type=int, default=0, help="seeds the weights and the sequences")
    parser.add_argument("--out-dir", default="induction_out", help="results.json and pictures go here")
    parser.add_argument("--eager", action="store_true", help="train eagerly, not as a compiled step (ta.compile)")
    args = parser.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    V, L = args.vocab, args.half
    if not 2 <= L <= V:
        parser.error(f"--half {L}: a half has between 2 and --vocab ({V}) different tokens")
    longest = min(3 * L // 2, V)
    ta.manual_seed(args.seed)
    model = AttentionOnly(V + 1, 2 * longest + 1, args.d_model, args.heads)  # + 1: the start token
    data, test = Sequences(V, args.seed), Sequences(V, 12345)
    watch = Watch(model, test.batch(64, L), L)
    print(f"{V} tokens (ln V = {math.log(V):.2f}), halves of {L} tokens ({max(2, L // 2)} to {longest} in training), "
          f"{sum(p.data.size for p in model.parameters())} weights\n")

    def batches(step):  # a half of random length each step
        return (data.batch(args.batch, int(data.rng.integers(max(2, L // 2), longest + 1))),)

    def loss_fn(tokens):
        logits = model(tokens)
        return F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:])  # every next token, both halves

    opt = ta.optim.Adam(model.parameters(), lr=args.lr)
    schedule = ta.optim.StepLR(opt, step_size=max(1, 7 * args.steps // 10), gamma=0.2)  # finer steps to finish
    start = time.perf_counter()
    watch(0)
    history = ta.train.fit(model, opt, loss_fn, args.steps, batches=batches, compile=not args.eager,
                           scheduler=schedule, evaluate=watch,
                           evaluate_every=args.eval_every, rngs={"data": data.rng}, label="induction")
    seconds = time.perf_counter() - start
    if history.stopped:
        raise SystemExit(history.stopped)
    phase = phase_change_step(watch.steps, watch.repeated, V)
    final = watch.scores[-1]
    previous = max((h for h in final if h[0] == "0"), key=lambda h: final[h]["previous_token"])
    induction = max((h for h in final if h[0] == "1"), key=lambda h: final[h]["prefix_matching"])
    report(watch, V, phase, previous, induction)

    pictures = [os.path.join(args.out_dir, name) for name in
                ("phase_change.png", "head_scores.png", "gradient_before_weights.png")]
    plot_losses(watch, V, phase, pictures[0])
    plot_scores(watch, phase, pictures[1])
    picks = gradient_steps(watch.steps, phase)
    head = int(induction[2:])
    plot_gradient(watch, head, picks, pictures[2])
    print("\nthe induction head at four steps around the phase change, averaged over the evaluation sequences:")
    print("  step   attention on the shifted diagonal   share of the push (-dL/dscores > 0) on it")
    for index in picks:
        weight = diagonal_share(watch.attention[index], L)[head]
        push = diagonal_share(watch.push[index], L)[head]
        print(f"  {watch.steps[index]:4d}   {weight:33.2f}   {push:41.2f}")
    print("  Gradient descent raises the scores where the push is positive: it points at the shifted diagonal "
          "while the\n  attention is still spread out, and the weights follow.")

    pictures.append(os.path.join(args.out_dir, "heads.png"))
    draw_heads(model, test.batch(1, L), watch.layers, final,
               {previous: ": the previous-token head", induction: ": the induction head"}, pictures[-1])
    pictures.append(write_page(model, watch, test.batch(1, L)[0], V, os.path.join(args.out_dir, "heads.html")))
    knocked = knockouts(model, watch.tokens, L, int(previous[2:]))
    print(f"\nrepeated half's loss {watch.repeated[-1]:.3f}; with the previous-token head (layer 0 head "
          f"{previous[2:]}) taken out of what "
          "layer 1 reads as")
    print("  " + ",  ".join(f"{where}: {loss:.3f}" for where, loss in knocked.items()))
    most = max(("keys", "queries", "values"), key=knocked.get)
    print(f"  Layer 1 needs it most in its {most}" + (": the induction head finds where to look through keys the "
          "previous-token head wrote (K-composition)." if most == "keys" else "."))

    results = {"steps": args.steps, "train_seconds": seconds, "eval_steps": watch.steps,
               "loss_first_half": watch.first, "loss_repeated_half": watch.repeated, "phase_change_step": phase,
               "heads": final, "previous_token_head": previous, "induction_head": induction,
               "knockout_repeated_loss": knocked}
    with open(os.path.join(args.out_dir, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(f"\nresults: {os.path.join(args.out_dir, 'results.json')}; pictures: {', '.join(pictures)}")
    return results


def gradient_steps(steps, phase):
    """Indices of four evaluations around the phase change: at half, 3/4 and 9/10 of its step, and at it."""
    if phase is None:  # no phase change: four evaluations spread over the run
        return sorted({round(f * (len(steps) - 1)) for f in (0.25, 0.5, 0.75, 1.0)})
    return sorted({int(np.argmin(np.abs(np.array(steps) - f * phase))) for f in (0.5, 0.75, 0.9, 1.0)})


def write_page(model, watch, sequence, vocab, path, most=16):
    """A page for a browser: every head on one sequence at up to `most` evaluations spread over
    training, so the phase change can be stepped through; -dL/dscores of predicting each next token."""
    picks = np.unique(np.linspace(0, len(watch.states) - 1, min(most, len(watch.states))).round().astype(int))
    labels = ["BOS" if token == vocab else str(token) for token in sequence[:-1]]
    return ta.viz.attention_page(model, sequence[:-1], path, targets=sequence[1:], labels=labels,
                                 checkpoints=[watch.states[i] for i in picks])


def report(watch, vocab, phase, previous, induction):
    """The table of every evaluation, then what the two heads are."""
    print(f"\n{'step':>6s} {'first half':>11s} {'repeated':>9s}   best previous-token / prefix-matching score")
    for step, first, repeated, scores in zip(watch.steps, watch.first, watch.repeated, watch.scores):
        mark = "  <- phase change (repeated half below ln V / 2)" if step == phase else ""
        print(f"{step:6d} {first:11.3f} {repeated:9.3f}   {max(s['previous_token'] for s in scores.values()):.2f} / "
              f"{max(s['prefix_matching'] for s in scores.values()):.2f}{mark}")
    print(f"\nln V = {math.log(vocab):.3f}: the first half stays near it, nothing to learn there (it rises a little "
          "while the heads form:\nthey copy in the first half too, where nothing repeats); "
          + (f"the repeated half fell below ln V / 2 at step {phase}." if phase is not None
             else "the repeated half never fell below ln V / 2 (train longer: --steps)."))
    print("final scores (previous-token / prefix-matching) per head:")
    for head, s in watch.scores[-1].items():
        role = {previous: "  <- the previous-token head", induction: "  <- the induction head"}.get(head, "")
        print(f"  layer {head[0]} head {head[2:]}: {s['previous_token']:.2f} / {s['prefix_matching']:.2f}{role}")
    print(f"Layer 0 head {previous[2:]} writes \"the token before me was A\" into each position; layer 1 head "
          f"{induction[2:]}, at a token A,\nlooks for that message in its keys, finds the position right after A's "
          "earlier occurrence, and copies its token.")


if __name__ == "__main__":
    main()
