"""Per-op overhead of two versions of tinyattn, timed in one process, interleaved.

    git archive <commit> tinyattn | tar -x -C /tmp/before      # the older version's package
    python benchmarks/compare_trees.py /tmp/before [rounds]

On a noisy machine two separate runs can differ by 2x; here each round times every case with
the older copy and then the current one (or the other way round, alternating), so both see
the same noise, and the table gives medians and ranges over the rounds and the median of the
per-round ratios. The older copy is imported under the name tinyattn_before.
"""
import importlib
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import bench_overhead  # noqa: E402
from _timing import markdown_table, time_us  # noqa: E402

import tinyattn  # noqa: E402


def _import_copy(tree):
    folder = tempfile.mkdtemp()
    shutil.copytree(os.path.join(tree, "tinyattn"), os.path.join(folder, "tinyattn_before"))
    sys.path.insert(0, folder)
    return importlib.import_module("tinyattn_before")


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
    return rows


if __name__ == "__main__":
    run(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 15)
