"""Per-op overhead of two versions of tinyattn, timed in one process, interleaved.

    git archive <commit> tinyattn | tar -x -C /tmp/before      # the older version's package
    python benchmarks/compare_trees.py /tmp/before [rounds]
    python benchmarks/compare_trees.py --models /tmp/before /tmp/other [rounds]   # models only, several trees

On a noisy machine two separate runs can differ by 2x; here each round times every case with
the older copy and then the current one (or the other way round, alternating), so both see
the same noise, and the table gives medians and ranges over the rounds and the median of the
per-round ratios. A second table times the 1,000-node chains of bench_overhead.py, forward and
backward apart, per node. A third times one training step of each model (the benchmarks' GPT,
Seq2Seq and classifiers, and Luong's decoder), built with each copy from the same seed, in the
same interleaved rounds. The older copy is imported under the name tinyattn_before.
"""
import importlib
import itertools
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import bench_gpt  # noqa: E402
import bench_overhead  # noqa: E402
from _timing import markdown_table, time_us  # noqa: E402

import tinyattn  # noqa: E402


def _import_copy(tree, name="tinyattn_before"):
    folder = tempfile.mkdtemp()
    shutil.copytree(os.path.join(tree, "tinyattn"), os.path.join(folder, name))
    sys.path.insert(0, folder)
    return importlib.import_module(name)


def _trainer(ta, model, batches, loss_of):
    """step(): one Adam step of `model` on the next of `batches`, as the benchmarks' steps."""
    opt = ta.optim.Adam(model.parameters(), lr=1e-3)
    batches = itertools.cycle(batches)

    def step():
        opt.zero_grad()
        loss = loss_of(*next(batches))
        loss.backward()
        ta.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    return step


def _model_steps(ta):
    """{model: step()} built with package `ta` (this tree's or the older copy), each from seed 0."""
    steps = {}
    _, gpt_batches, gpt_step = bench_gpt.tinyattn_setup(0, ta)
    gpt_batches = itertools.cycle(gpt_batches)
    steps["GPT (bench_gpt.py)"] = lambda: gpt_step(*next(gpt_batches))
    data = ta.data.ToyTranslation(max_phrases=4, seed=0)
    for name, cls, kwargs in (("Seq2Seq, additive (bench_seq2seq.py)", ta.models.Seq2Seq, {}),
                              ("LuongSeq2Seq", ta.models.LuongSeq2Seq, {})):
        ta.manual_seed(0)
        model = cls(len(data.source_vocab), len(data.target_vocab), **ta.data.TOKEN_IDS, embed_dim=32, hidden_size=64,
                    **kwargs)
        steps[name] = _trainer(ta, model, [data.batch(64) for _ in range(8)], model.loss)
    reviews = importlib.import_module(ta.__name__ + ".data.long_reviews").LongReviews(seed=0, min_length=30,
                                                                                      max_length=60)
    for encoder, extra in (("transformer", dict(nhead=4, num_layers=2, dim_feedforward=128, norm_first=True)),
                           ("lstm", {})):
        ta.manual_seed(0)
        model = ta.models.SequenceClassifier(len(reviews.vocab), 2, pad_id=ta.data.PAD, encoder=encoder,
                                             readout="attention", embed_dim=64, hidden_size=64, pooling_size=32,
                                             **extra)
        steps[f"SequenceClassifier, {encoder} (bench_classifier.py)"] = _trainer(
            ta, model, [reviews.batch(32) for _ in range(8)],
            lambda tokens, lengths, labels, model=model: ta.cross_entropy(model(tokens, lengths)[0], labels))
    return steps


def run_models(before, rounds):
    """Interleaved rounds of each model's training step with both copies: ms medians and ratios."""
    old, new = _model_steps(before), _model_steps(tinyattn)
    times = {name: ([], []) for name in new}
    for r in range(rounds):
        for name in new:
            pair = [(0, old[name]), (1, new[name])]
            for which, fn in pair if r % 2 == 0 else pair[::-1]:
                times[name][which].append(time_us(fn, min_time=0.05, repeats=3) / 1000)
    rows = []
    for name, (o, n) in times.items():
        ratios = [b / a for a, b in zip(o, n)]
        rows.append({"model, one training step": name,
                     "before ms (median, range)": f"{statistics.median(o):.2f} ({min(o):.2f}-{max(o):.2f})",
                     "after ms (median, range)": f"{statistics.median(n):.2f} ({min(n):.2f}-{max(n):.2f})",
                     "after / before (median of rounds)": f"{statistics.median(ratios):.3f}"})
    print(f"{rounds} interleaved rounds; load average {os.getloadavg()[0]:.1f}; models\n")
    print(markdown_table(rows, list(rows[0])))
    return rows


def run(tree, rounds=15):
    before = _import_copy(tree)
    old_cases, _ = bench_overhead._cases(before)
    new_cases, _ = bench_overhead._cases(tinyattn)
    times = {name: ([], []) for name in new_cases}
    for r in range(rounds):
        for name in new_cases:
            pair = [(0, old_cases[name][0]), (1, new_cases[name][0])]
            for which, fn in pair if r % 2 == 0 else pair[::-1]:
                times[name][which].append(time_us(fn, min_time=0.02, repeats=3))
    rows = []
    for name, (old, new) in times.items():
        ratios = [n / o for o, n in zip(old, new)]
        rows.append({"op": name,
                     "before µs (median, range)": f"{statistics.median(old):.1f} ({min(old):.1f}-{max(old):.1f})",
                     "after µs (median, range)": f"{statistics.median(new):.1f} ({min(new):.1f}-{max(new):.1f})",
                     "after / before (median of rounds)": f"{statistics.median(ratios):.3f}"})
    print(markdown_table(rows, list(rows[0])))
    print()
    bench_overhead.run_chains({"before": before, "after": tinyattn}, rounds)
    print()
    return rows + run_models(before, rounds)


def run_models_of_trees(trees, rounds):
    """The models' table only, this tree against several older ones in the same interleaved rounds
    (the order of the copies turns each round): ms medians and ranges, and each older copy's ratio."""
    copies = [_import_copy(tree, f"tinyattn_before{i}") for i, tree in enumerate(trees)]
    steps = [_model_steps(copy) for copy in copies] + [_model_steps(tinyattn)]
    times = {name: [[] for _ in steps] for name in steps[-1]}
    for r in range(rounds):
        for name in times:
            order = list(range(len(steps)))
            order = order[r % len(order):] + order[:r % len(order)]
            for which in order:
                times[name][which].append(time_us(steps[which][name], min_time=0.05, repeats=3) / 1000)
    rows = []
    for name, per_copy in times.items():
        row = {"model, one training step": name}
        for label, t in zip([*trees, "this tree"], per_copy):
            row[f"{label} ms (median, range)"] = f"{statistics.median(t):.2f} ({min(t):.2f}-{max(t):.2f})"
        for label, t in zip(trees, per_copy):
            ratios = [b / a for a, b in zip(t, per_copy[-1])]
            row[f"this / {label} (median of rounds)"] = f"{statistics.median(ratios):.3f}"
        rows.append(row)
    print(f"{rounds} interleaved rounds; load average {os.getloadavg()[0]:.1f}; models\n")
    print(markdown_table(rows, list(rows[0])))
    return rows


if __name__ == "__main__":
    if sys.argv[1] == "--models":  # compare_trees.py --models TREE [TREE ...] [rounds]
        rounds = int(sys.argv[-1]) if sys.argv[-1].isdigit() else 15
        run_models_of_trees([a for a in sys.argv[2:] if not a.isdigit()], rounds)
    else:
        run(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 15)
