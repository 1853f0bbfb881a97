"""Run every demo that README.md and docs/ quote, and write their outputs and pictures back.

    python docs/regenerate.py                   # everything: about 45 minutes on 2 cores
    python docs/regenerate.py --quick           # without the four runs of over 5 minutes
    python docs/regenerate.py --only what_is_it see_backprop
    python docs/regenerate.py --list            # the runs, what each writes, and how long it takes

A quoted output sits between two markers, <!-- begin output: NAME --> and <!-- end output: NAME -->,
which this script fills with what the run prints now and one line saying how long the run took,
on what machine, at what load. The pictures a run draws are copied into docs/. Each run's
blocks are written as soon as it ends, so an interrupted regeneration keeps what it finished.
Prose that cites a figure is not rewritten: the blocks that changed are printed as a diff, for
a person to reread the sentences around them.
"""
import argparse
import datetime
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRESS = re.compile(r"\[[#.]+\] \d+/\d+ ")
MARKED = re.compile(r"(<!-- begin output: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end output: (?P=name) -->)", re.S)


@dataclass
class Run:
    """One or more commands (arguments after `python`) and what their output fills.

    blocks: {marker name: function(stdout, folder) -> markdown}; pictures: {file the run draws,
    relative to its folder: file in docs/}; folder: a run whose folder (and checkpoints) this
    one reads, instead of its own."""
    name: str
    commands: list
    blocks: dict = field(default_factory=dict)
    pictures: dict = field(default_factory=dict)
    minutes: float = 1
    folder: str = None


def lines(first, last=None, drop=()):
    """The printed lines from the first that starts with `first` to the next that starts with
    `last` (both stripped of leading spaces; no `last`: to the next blank line), without those
    starting with any of `drop`."""
    def select(stdout, folder):
        printed = stdout.splitlines() + [""]
        start = next(i for i, line in enumerate(printed) if line.lstrip().startswith(first))
        end = next(i for i in range(start, len(printed)) if printed[i].lstrip().startswith(last)) if last else \
            next(i for i in range(start, len(printed)) if not printed[i].strip()) - 1
        kept = [line.rstrip() for line in printed[start:end + 1] if not line.lstrip().startswith(drop)]
        return "```text\n" + "\n".join(kept) + "\n```"
    return select


def command_and_lines(command, first, last):
    """As lines(), headed by the command as a user types it."""
    def select(stdout, folder):
        return lines(first, last)(stdout, folder).replace("```text\n", f"```text\n$ {command}\n", 1)
    return select


def report_tables(stdout, folder):
    """translate.py --compare's report.md without its first line (the budget, said in the prose)."""
    with open(os.path.join(folder, "compare", "report.md")) as f:
        return f.read().split("\n", 2)[2].strip()


POSITION_ROWS = [("sinusoidal", "every word", "Transformer + pooling"), ("ALiBi", "every word", "Transformer + ALiBi"),
                 ("RoPE", "every word", "Transformer + RoPE"), ("sinusoidal", "words before", "causal + sinusoidal"),
                 ("ALiBi", "words before", "causal + ALiBi"), ("RoPE", "words before", "causal + RoPE")]
SEEDS = range(5)


def five_seeds_table(stdout, folder):
    """Mean (lowest-highest) % right per length range over the seeds' results.json, and mean training seconds."""
    runs = []
    for seed in SEEDS:
        with open(os.path.join(folder, f"seed{seed}", "results.json")) as f:
            runs.append(json.load(f)["models"])
    buckets = list(runs[0][POSITION_ROWS[0][2]]["by_length"])
    table = ["| positions | attends to | " + " | ".join(buckets) + " | train s |", "|---|---|" + "---|" * len(buckets) + "---|"]
    for scheme, reading, name in POSITION_ROWS:
        cells = []
        for bucket in buckets:
            values = [100 * run[name]["by_length"][bucket] for run in runs]
            cells.append(f"{sum(values) / len(values):.1f} ({min(values):.0f}-{max(values):.0f})")
        seconds = sum(run[name]["train_seconds"] for run in runs) / len(runs)
        table.append(f"| {scheme} | {reading} | " + " | ".join(cells) + f" | {seconds:.1f} |")
    return "\n".join(table)


TRACE_DOC = "docs/backprop_through_attention.md"
# The trace example of the doc, run twice in one process: the second run's timings are the ops'
# own, not the first call's loading of a compiled kernel.
TRACE_CODE = f"""import re, contextlib, io
text = open({TRACE_DOC!r}).read()
code = next(block for block in re.findall(r"```python\\n(.*?)```", text, flags=re.S) if "trace()" in block)
with contextlib.redirect_stdout(io.StringIO()):
    exec(code, {{}})
exec(code, {{}})
"""

RUNS = [
    Run("translate", [["demos/translate.py"]], minutes=3,
        blocks={"translate": lines("by source length", "bahdanau: its attention missed")},
        pictures={"attention.png": "translate_attention.png", "accuracy_by_length.png": "translate_accuracy_by_length.png",
                  "loss.png": "translate_loss.png"}),
    Run("translate_sentence", [["demos/translate.py", "--translate", "the old king that sees the dog likes a small fish"]],
        folder="translate", minutes=0.1,
        blocks={"translate_sentence": command_and_lines(
            '.venv/bin/python demos/translate.py --translate "the old king that sees the dog likes a small fish"',
            "sono", "(the grammar's translation")}),
    Run("compare_short", [["demos/translate.py", "--compare", "--short"]], minutes=5,
        blocks={"compare_short": report_tables}, pictures={"compare/compare.png": "translate_compare.png"}),
    Run("compare", [["demos/translate.py", "--compare"]], minutes=15, blocks={"compare": report_tables}),
    Run("i_saw_a_saw", [["demos/i_saw_a_saw.py"]], minutes=0.5,
        blocks={"i_saw_a_saw": lines("tags right on", "'fly' at position")}, pictures={"heads.png": "i_saw_a_saw_heads.png"}),
    Run("what_is_it", [["demos/what_is_it.py"]], minutes=0.2,
        blocks={"what_is_it": lines('"it" resolved', "the animal did n't cross the street because it was too wide")},
        pictures={"it_attention.png": "what_is_it_attention.png"}),
    Run("long_reviews", [["demos/long_reviews.py"]], minutes=2.5,
        blocks={"long_reviews": lines("reviews classified right", "weights"),
                "long_reviews_positions": lines("the same Transformer with", "train s")},
        pictures={"accuracy_by_length.png": "long_reviews_accuracy.png",
                  "positions_by_length.png": "long_reviews_positions.png"}),
    Run("long_reviews_seed1", [["demos/long_reviews.py", "--seed", "1"]], minutes=2.5,
        blocks={"long_reviews_seed1": lines("reviews classified right", "weights")}),
    Run("long_reviews_full", [["demos/long_reviews.py", "--full"]], minutes=8,
        blocks={"long_reviews_full": lines("reviews classified right", "train s")}),
    Run("long_reviews_five_seeds",
        [["demos/long_reviews.py", "--positions", "--seed", str(seed), "--out-dir", f"seed{seed}"] for seed in SEEDS],
        minutes=6, blocks={"long_reviews_five_seeds": five_seeds_table}),
    Run("see_backprop", [["demos/see_backprop.py"]], minutes=0.3,
        blocks={"see_backprop_sqrt_dk": lines("random inputs (16 keys")},
        pictures={"weights_and_gradients.png": "see_backprop_gradients.png", "why_sqrt_dk.png": "see_backprop_sqrt_dk.png",
                  "attention_over_time.png": "see_backprop_over_time.png"}),
    Run("trace", [["-c", TRACE_CODE]], minutes=0.1, blocks={"trace": lines("step  Function", "5 nodes")}),
    Run("notebooks", [["notebooks/build.py"]], minutes=2),
]
SLOW = 5  # minutes: --quick leaves out the runs that take longer


def machine():
    """'2 cores of an AMD EPYC', from /proc/cpuinfo where there is one."""
    model = None
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), None)
    return f"{os.cpu_count()} cores of an {model or sys.platform} machine" if model else f"{os.cpu_count()} cores"


def shown(command):
    """A command as a user types it, without the folder arguments this script adds."""
    if command[0] == "-c":
        return "the example above, run twice in one process"
    kept = [a for i, a in enumerate(command) if a != "--out-dir" and (i == 0 or command[i - 1] != "--out-dir")]
    return "`" + " ".join(".venv/bin/python" if i == 0 else (f'"{a}"' if " " in a else a)
                          for i, a in enumerate(["python"] + kept)) + "`"


def with_folder(command, folder):
    """A demo's command writing into folder, or into the subfolder it names with --out-dir."""
    if not command[0].startswith("demos/"):
        return command
    if "--out-dir" in command:
        i = command.index("--out-dir")
        return command[:i + 1] + [os.path.join(folder, command[i + 1])] + command[i + 2:]
    return command + ["--out-dir", folder]


def execute(run, folder):
    """Run the commands one after another in the repository, echoing their output; returns
    (what they printed, seconds, load averages when they started and ended)."""
    load, start, printed = os.getloadavg()[0], time.perf_counter(), []
    for command in run.commands:
        process = subprocess.Popen([sys.executable, *with_folder(command, folder)], cwd=ROOT, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
        for line in process.stdout:
            print(f"  {run.name}| {line}", end="", flush=True)
            if not PROGRESS.search(line):  # ta.train.fit's progress lines are not quoted
                printed.append(line)
        if process.wait():
            raise SystemExit(f"regenerate: {run.name} failed (exit {process.returncode}): {shown(command)}")
    return "".join(printed), time.perf_counter() - start, (load, os.getloadavg()[0])


def took(seconds):
    minutes, seconds = divmod(round(seconds), 60)
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


def write_blocks(root, new_blocks):
    """Fill the marked blocks named in new_blocks in README.md and docs/*.md; return {name: (old, new)}."""
    changed = {}
    for path in [os.path.join(root, "README.md")] + sorted(
            os.path.join(root, "docs", n) for n in os.listdir(os.path.join(root, "docs")) if n.endswith(".md")):
        with open(path) as f:
            text = f.read()

        def fill(match):
            name = match.group("name")
            if name not in new_blocks:
                return match.group(0)
            changed[name] = (match.group("body"), new_blocks[name])
            return match.group(1) + new_blocks[name] + "\n" + match.group(4)
        updated = MARKED.sub(fill, text)
        if updated != text:
            with open(path, "w") as f:
                f.write(updated)
    return changed


def without_timing(block):
    return [line for line in block.splitlines() if not line.startswith("*Ran in ")]


def regenerate(run, root, work):
    folder = os.path.join(work, run.folder or run.name)
    os.makedirs(folder, exist_ok=True)
    print(f"\n{run.name}: {', '.join(shown(c) for c in run.commands)} (about {run.minutes:g} min)", flush=True)
    stdout, seconds, (load_before, load_after) = execute(run, folder)
    stamp = (f"*Ran in {took(seconds)} on {machine()}, load average {load_before:.1f} when it started and "
             f"{load_after:.1f} when it ended (the run itself adds about 1), "
             f"{datetime.date.today().isoformat()}: {', '.join(shown(c) for c in run.commands)}.*")
    blocks = {name: select(stdout, folder) + "\n\n" + stamp for name, select in run.blocks.items()}
    for source, target in run.pictures.items():
        shutil.copyfile(os.path.join(folder, source), os.path.join(root, "docs", target))
    changed = write_blocks(root, blocks)
    missing = set(blocks) - set(changed)
    if missing:
        raise SystemExit(f"regenerate: no <!-- begin output: NAME --> marker for {sorted(missing)} under {root}")
    for name, (old, new) in changed.items():
        diff = list(difflib.unified_diff(without_timing(old), without_timing(new), f"{name} (before)", f"{name} (now)",
                                         lineterm=""))
        print("\n".join(diff) if diff else f"{name}: the same as before", flush=True)
    return changed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=[run.name for run in RUNS], help="these runs only")
    parser.add_argument("--quick", action="store_true", help=f"leave out the runs of over {SLOW} minutes")
    parser.add_argument("--list", action="store_true", help="list the runs and stop")
    parser.add_argument("--root", default=ROOT, help="where README.md and docs/ are written (default: this checkout)")
    parser.add_argument("--work", default=os.path.join(ROOT, "demo_out", "regenerate"),
                        help="where the runs write checkpoints and pictures")
    args = parser.parse_args(argv)
    runs = [run for run in RUNS if (not args.only or run.name in args.only) and not (args.quick and run.minutes > SLOW)]
    if args.list:
        for run in RUNS:
            writes = list(run.blocks) + [f"docs/{p}" for p in run.pictures.values()]
            print(f"{run.name:>24s}  about {run.minutes:4g} min  {', '.join(shown(c) for c in run.commands)}"
                  f"\n{'':>26s}writes {', '.join(writes) or 'notebooks/*.ipynb'}")
        return 0
    total = time.perf_counter()
    for run in runs:
        regenerate(run, os.path.abspath(args.root), os.path.abspath(args.work))
    print(f"\nregenerated {len(runs)} runs in {took(time.perf_counter() - total)}; reread the prose around "
          "every block that changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
