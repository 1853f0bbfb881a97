"""What is "it"? A small Transformer encoder learns which noun a pronoun refers to.

    python demos/what_is_it.py            # under a minute on 2 cores
    python demos/what_is_it.py --resume   # continue an interrupted run from its checkpoint

"The animal didn't cross the street because it was too tired": "it" is the animal; with "too
wide", the street (the example of Jay Alammar's "The Illustrated Transformer",
https://jalammar.github.io/illustrated-transformer/). The sentences (tinyattn/data/what_is_it.py)
name two or three things, an animal, a way across and a load, in varied orders and distances,
and end with an adjective that fits only one of them. A two-layer Transformer encoder
(nn.TransformerEncoder, Vaswani et al. 2017, https://arxiv.org/abs/1706.03762) reads the
sentence and points from "it" to a position. We print how often it points at the right noun,
and draw the attention of "it" over the sentence in every layer and head.
"""
import argparse
import os

import numpy as np

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn.data import PAD
from tinyattn.data.what_is_it import WhatIsIt
from tinyattn.models.pointer import PointerEncoder

EXAMPLES = ["the animal did n't cross the street because it was too tired",
            "the animal did n't cross the street because it was too wide"]


@ta.no_grad()
def point(model, tokens, lengths, it_positions):
    model.eval()
    return model(tokens, lengths, it_positions).data.argmax(-1)


def accuracy_report(model, data, sentences):
    """Overall accuracy, and by the kind of noun meant and by how many words lie between it and "it"."""
    tokens, lengths, it_positions, nouns = data.encode(sentences)
    right = point(model, tokens, lengths, it_positions) == nouns
    kinds = np.array([s[3] for s in sentences])
    gaps = it_positions - nouns
    by_kind = {kind: right[kinds == kind].mean() for kind in sorted(set(kinds))}
    by_gap = {f"{low}-{high}": right[(gaps >= low) & (gaps <= high)].mean()
              for low, high in ((1, 4), (5, 8), (9, 20)) if ((gaps >= low) & (gaps <= high)).any()}
    return right.mean(), by_kind, by_gap


def it_attention(model, data, sentence):
    """Where "it" points, then its attention in each layer and head and the pointer's softmax:
    (layers * heads + 1, T), one row each."""
    words = sentence.split()
    tokens, lengths, it_positions, _ = data.encode([(words, words.index("it"), 0, None)])
    kept = nn.keep_attention_weights(model)
    with ta.no_grad():
        model.eval()
        pointer = model(tokens, lengths, it_positions).softmax(-1).data  # (1, T)
    rows = [module.last_weights[0, :, it_positions[0]] for module in kept.values()]  # each (H, T)
    nn.keep_attention_weights(model, on=False)
    return words[int(pointer.argmax())], np.concatenate(rows + [pointer])


def main(argv=None):
    ta.set_blas_threads(1)      # small products: one BLAS thread is faster (benchmarks/RESULTS.md, "BLAS threads")
    ta.ops.keep_freed_memory()  # the same arrays every step: malloc reuses them (tinyattn/ops/memory.py)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--steps", type=int, default=400, help="training steps")
    parser.add_argument("--batch", type=int, default=64, help="sentences per training step")
    parser.add_argument("--layers", type=int, default=2, help="Transformer encoder layers")
    parser.add_argument("--heads", type=int, default=2, help="attention heads per layer")
    parser.add_argument("--test-sentences", type=int, default=2000, help="held-out sentences for the accuracy")
    parser.add_argument("--out-dir", default="demo_out/what_is_it", help="checkpoint and picture go here")
    parser.add_argument("--resume", action="store_true", help="continue from the checkpoint in --out-dir")
    parser.add_argument("--eager", action="store_true", help="train eagerly, not as a compiled step (ta.compile)")
    args = parser.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)

    data, test = WhatIsIt(seed=0), WhatIsIt(seed=12345)
    ta.manual_seed(0)
    model = PointerEncoder(len(data.vocab), pad_id=PAD, d_model=32, nhead=args.heads, num_layers=args.layers,
                           dim_feedforward=64)
    opt = ta.optim.Adam(model.parameters(), lr=3e-3)

    def loss_fn(tokens, lengths, it_positions, nouns):
        return F.cross_entropy(model(tokens, lengths, it_positions), nouns)

    history = ta.train.fit(model, opt, loss_fn, args.steps, batches=lambda step: data.batch(args.batch),
                           compile=not args.eager,  # a compiled step (ta.compile); --eager turns it off
                           checkpoint=os.path.join(args.out_dir, "pointer.ckpt.npz"),
                           checkpoint_every=100, resume=args.resume, clip_grad_norm=1.0, rngs={"data": data.rng},
                           label="what is it")
    if history.stopped:
        raise SystemExit(history.stopped)

    overall, by_kind, by_gap = accuracy_report(model, test, [test.sentence() for _ in range(args.test_sentences)])
    print(f"\n\"it\" resolved in {100 * overall:.1f}% of {args.test_sentences} test sentences")
    print("  by what it means:  " + "   ".join(f"{kind} {100 * a:.1f}%" for kind, a in by_kind.items()))
    print("  by words between:  " + "   ".join(f"{gap}: {100 * a:.1f}%" for gap, a in by_gap.items()))

    rows, labels = [], []
    for sentence in EXAMPLES:
        answer, weights = it_attention(model, test, sentence)
        print(f"  {sentence}  ->  it = {answer}")
        adjective = sentence.split()[-1]
        rows.append(weights)
        labels += [f"too {adjective}: layer {i // args.heads + 1} head {i % args.heads + 1}" for i in range(len(weights) - 1)]
        labels.append(f"too {adjective}: the pointer (answer)")
    words = EXAMPLES[0].split()[:-1] + ["tired / wide"]
    picture = os.path.join(args.out_dir, "it_attention.png")
    heads_only = np.concatenate([r[:-1] for r in rows])  # the pointer rows (1.0) would darken every head's row
    ta.viz.attention_heatmap(np.concatenate(rows), x_labels=words, y_labels=labels, path=picture,
                             title='where "it" looks, in every layer and head, and where it points\n'
                                   '(colours scaled to the heads\' largest weight; the pointer rows are 1.0)',
                             xlabel="word attended to", ylabel='"it" in the sentence ending ...', vmax=heads_only.max())
    print(f"\npicture: {picture} (the attention of \"it\" per layer and head)")
    return {"accuracy": overall, "by_kind": by_kind, "by_gap": by_gap}


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # fit has named the checkpoint to resume from
        raise SystemExit(1) from None
