"""Run every demo that README.md and docs/ quote, and write their outputs and pictures back.

    python docs/regenerate.py                   # everything: about 30 minutes on 2 quiet cores
    python docs/regenerate.py --quick           # without the runs of over 5 minutes (--compare's)
    python docs/regenerate.py --only what_is_it see_backprop
    python docs/regenerate.py --list            # the runs, what each writes, and how long it takes

A quoted output sits between two markers, <!-- begin output: NAME --> and <!-- end output: NAME -->,
which this script fills with what the run prints now and one line saying how long the run took,
on what machine, at what load. The pictures a run draws are copied into docs/. Each run's
blocks are written as soon as it ends, so an interrupted regeneration keeps what it finished.
Prose that cites a figure is not rewritten: the blocks that changed are printed as a diff, and
every line of prose that cites a number a block no longer prints is named, for a person to reread.
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
import textwrap
import time
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRESS = re.compile(r"\[[#.]+\] \d+/\d+ ")
MARKED = re.compile(r"(<!-- begin output: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end output: (?P=name) -->)", re.S)


@dataclass
class Run:
    """One or more commands (arguments after `python`) and what their output fills.

    blocks: {marker name: function(stdout, folder) -> markdown}; pictures: {file the run draws,
    relative to its folder: file in docs/}; folder: the run whose folder (and checkpoints) this
    one reads, instead of a folder of its own; shown_as: how the stamp names the commands, where
    listing them would not help a reader; writes: what else it writes, for --list."""
    name: str
    commands: list
    blocks: dict = field(default_factory=dict)
    pictures: dict = field(default_factory=dict)
    minutes: float = 1
    folder: str = None
    shown_as: str = None
    writes: str = ""


def lines(first, last=None, nth=1):
    """The printed lines from the first that starts with `first` to the nth after it that starts
    with `last` (both stripped of leading spaces; no `last`: to the next blank line)."""
    def select(stdout, folder):
        printed = stdout.splitlines() + [""]
        starts = [i for i, line in enumerate(printed) if line.lstrip().startswith(first)]
        if not starts:
            raise SystemExit(f"regenerate: the run printed no line starting with {first!r}; if the demo's output "
                             "changed on purpose, change the block's lines(...) in docs/regenerate.py")
        if last:
            ends = [i for i in range(starts[0], len(printed)) if printed[i].lstrip().startswith(last)]
        else:
            ends = [i - 1 for i in range(starts[0], len(printed)) if not printed[i].strip()]
        if len(ends) < nth:
            raise SystemExit(f"regenerate: after {first!r} the run printed {len(ends)} lines starting with "
                             f"{last or 'a blank'!r}, not {nth}; change the block's lines(...) in docs/regenerate.py")
        return "```text\n" + "\n".join(line.rstrip() for line in printed[starts[0]:ends[nth - 1] + 1]) + "\n```"
    return select


SENTENCE = "the old king that sees the dog likes a small fish"
TRANSLATE_SENTENCE = ["demos/translate.py", "--translate", SENTENCE]


def translated_sentence(stdout, folder):
    """The translation and its attention rows, headed by the command as a user types it."""
    return lines("sono", "(the grammar's translation")(stdout, folder).replace(
        "```text\n", f"```text\n$ {typed(TRANSLATE_SENTENCE)}\n", 1)


def report_tables(stdout, folder):
    """translate.py --compare's report.md without its first line (the budget, said in the prose)."""
    with open(os.path.join(folder, "compare", "report.md")) as f:
        return f.read().split("\n", 1)[1].strip()


def ablation_table(stdout, folder):
    """translate.py --ablation's ablation.md without its first paragraph (the recipe, said in the prose)."""
    with open(os.path.join(folder, "ablation", "ablation.md")) as f:
        return f.read().split("\n\n", 1)[1].strip()


SEEDS = range(5)
MAIN_FOUR = ["LSTM, last state", "LSTM + pooling", "LSTMN + pooling", "Transformer + pooling"]  # long_reviews.py's


def five_seeds_table(stdout, folder):
    """Mean (lowest-highest) % right per length range over the seeds' results.json, and the mean
    training seconds, a row per Transformer in the order of the demo's own comparison."""
    runs = []
    for seed in SEEDS:
        with open(os.path.join(folder, f"seed{seed}", "results.json")) as f:
            runs.append(json.load(f))
    compared = runs[0]["positions"]  # {what each word attends to: {positions: model name}}
    buckets = list(next(iter(runs[0]["models"].values()))["by_length"])
    table = ["| positions | attends to | " + " | ".join(buckets) + " | train s |",
             "|---|---|" + "---|" * len(buckets) + "---|"]
    for reading, schemes in compared.items():
        for scheme, name in schemes.items():
            cells = []
            for bucket in buckets:
                values = [100 * run["models"][name]["by_length"][bucket] for run in runs]
                cells.append(f"{sum(values) / len(values):.1f} ({min(values):.0f}-{max(values):.0f})")
            seconds = sum(run["models"][name]["train_seconds"] for run in runs) / len(runs)
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
        blocks={"translate": lines("by source length", "bahdanau: its attention peaked")},
        pictures={"attention.png": "translate_attention.png",
                  "accuracy_by_length.png": "translate_accuracy_by_length.png",
                  "loss.png": "translate_loss.png"}),
    Run("translate_sentence", [TRANSLATE_SENTENCE], folder="translate", minutes=0.1,
        blocks={"translate_sentence": translated_sentence}),
    Run("compare_short", [["demos/translate.py", "--compare", "--short"]], minutes=4.5,
        blocks={"compare_short": report_tables}, pictures={"compare/compare.png": "translate_compare.png"}),
    Run("compare", [["demos/translate.py", "--compare"]], minutes=17, blocks={"compare": report_tables}),
    Run("translate_transformer", [["demos/translate.py", "--decoder", "transformer"]], minutes=1.5,
        blocks={"translate_transformer": lines("by source length", "transformer: its attention peaked")}),
    Run("transformer_ablation", [["demos/translate.py", "--ablation", "--steps", "400"]], minutes=4,
        blocks={"transformer_ablation": ablation_table}),
    Run("i_saw_a_saw", [["demos/i_saw_a_saw.py"]], minutes=0.3,
        blocks={"i_saw_a_saw": lines("tags right on", "'fly' at position")},
        pictures={"heads.png": "i_saw_a_saw_heads.png"}),
    Run("what_is_it", [["demos/what_is_it.py"]], minutes=0.1,
        blocks={"what_is_it": lines('"it" resolved', "the animal did n't cross the street because it was too wide")},
        pictures={"it_attention.png": "what_is_it_attention.png"}),
    # long_reviews.py prints a table of the four models (ending in "weights"), then two of the
    # eight Transformers (each ending in "train s")
    Run("long_reviews", [["demos/long_reviews.py"]], minutes=1,
        blocks={"long_reviews": lines("reviews classified right", "weights"),
                "long_reviews_positions": lines("the same Transformer with", "train s", nth=2)},
        pictures={"accuracy_by_length.png": "long_reviews_accuracy.png",
                  "positions_by_length.png": "long_reviews_positions.png"}),
    Run("long_reviews_seed1", [["demos/long_reviews.py", "--seed", "1"]], minutes=1,
        blocks={"long_reviews_seed1": lines("reviews classified right", "weights")}),
    Run("long_reviews_full", [["demos/long_reviews.py", "--full"]], minutes=3,
        blocks={"long_reviews_full": lines("reviews classified right", "train s", nth=2)}),
    Run("long_reviews_long_training", [["demos/long_reviews.py", "--train-max-length", "200", "--only", *MAIN_FOUR]],
        minutes=2, blocks={"long_reviews_long_training": lines("reviews classified right", "weights")}),
    Run("long_reviews_five_seeds",
        [["demos/long_reviews.py", "--positions", "--seed", str(seed), "--out-dir", f"seed{seed}"] for seed in SEEDS],
        minutes=2, blocks={"long_reviews_five_seeds": five_seeds_table},
        shown_as=f"`.venv/bin/python demos/long_reviews.py --positions --seed N` for N = 0 to {SEEDS[-1]}"),
    Run("gpt", [["demos/gpt.py"]], minutes=0.6, blocks={"gpt": lines("sample (temperature", "validation")}),
    Run("see_backprop", [["demos/see_backprop.py"]], minutes=0.2,
        blocks={"see_backprop_sqrt_dk": lines("random inputs (16 keys")},
        pictures={"weights_and_gradients.png": "see_backprop_gradients.png",
                  "why_sqrt_dk.png": "see_backprop_sqrt_dk.png",
                  "attention_over_time.png": "see_backprop_over_time.png"}),
    Run("trace", [["-c", TRACE_CODE]], minutes=0.1, blocks={"trace": lines("step  Function", "5 nodes")},
        shown_as="the example above, run twice in one process"),
    Run("notebooks", [["notebooks/build.py"]], minutes=1, writes="notebooks/*.ipynb"),
]
SLOW = 5  # minutes: --quick leaves out the runs that take longer


def machine():
    """'2 cores of an AMD EPYC', the model from /proc/cpuinfo where there is one."""
    model = None
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), None)
    return f"{os.cpu_count()} cores of an {model}" if model else f"{os.cpu_count()} cores ({sys.platform})"


def typed(command):
    """A command as a user types it, without the folder arguments this script adds."""
    kept = [a for i, a in enumerate(command) if a != "--out-dir" and (i == 0 or command[i - 1] != "--out-dir")]
    return " ".join([".venv/bin/python"] + [f'"{a}"' if " " in a else a for a in kept])


def shown(run):
    return run.shown_as or ", ".join(f"`{typed(command)}`" for command in run.commands)


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
        with subprocess.Popen([sys.executable, *with_folder(command, folder)], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) as process:
            for line in process.stdout:
                print(f"  {run.name}| {line}", end="", flush=True)
                if not PROGRESS.search(line):  # ta.train.fit's progress lines are not quoted
                    printed.append(line)
        if process.returncode:
            raise SystemExit(f"regenerate: {run.name} failed (exit {process.returncode}): {typed(command)}")
    return "".join(printed), time.perf_counter() - start, (load, os.getloadavg()[0])


def took(seconds):
    minutes, seconds = divmod(round(seconds), 60)
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


def documents(root):
    return [os.path.join(root, "README.md")] + sorted(
        os.path.join(root, "docs", name) for name in os.listdir(os.path.join(root, "docs")) if name.endswith(".md"))


def marked_names(root):
    names = []
    for path in documents(root):
        with open(path) as f:
            names += [match.group("name") for match in MARKED.finditer(f.read())]
    return names


def write_blocks(root, new_blocks):
    """Fill the marked blocks named in new_blocks in README.md and docs/*.md; return {name: (old, new)}."""
    changed = {}
    for path in documents(root):
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
    """The block without its stamp (the italic paragraph that starts with *Ran in)."""
    return block.split("\n*Ran in ")[0].splitlines()


NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w])")  # 86, 1,208, 99.8; not the 2 of d_k2 or x2


def numbers(text):
    """{value: as written} for the numbers of two or more digits in text ("1,208" -> 1208.0; "100" and
    "100.0" are one value, so a change of format alone does not count)."""
    found = {}
    for match in NUMBER.finditer(text):
        written = match.group(0).rstrip(",")
        if len(written.replace(",", "").replace(".", "")) >= 2:
            found.setdefault(float(written.replace(",", "")), written)
    return found


def stale_citations(root, changed):
    """["README.md:229: 86 (compare)", ...]: lines outside the marked blocks that cite a number
    which a block held before this run and no longer holds: prose that may now say something false."""
    gone = {}  # value: the block that held it
    for name, (old, new) in changed.items():
        for value in numbers("\n".join(without_timing(old))).keys() - numbers("\n".join(without_timing(new))).keys():
            gone.setdefault(value, name)
    found = []
    for path in documents(root):
        with open(path) as f:
            text = f.read()
        prose = MARKED.sub(lambda match: "\n" * match.group(0).count("\n"), text)  # blocks blanked, lines kept
        for number_of_line, line in enumerate(prose.splitlines(), 1):
            for value, written in numbers(line).items():
                if value in gone:
                    found.append(f"{os.path.relpath(path, root)}:{number_of_line}: {written} ({gone[value]})")
    return found


def regenerate(run, root, work):
    folder = os.path.join(work, run.folder or run.name)
    if run.folder and not os.path.isdir(folder):
        raise SystemExit(f"regenerate: {run.name} reads the checkpoints of {run.folder}, which are not in {folder}: "
                         f"run --only {run.folder} {run.name}")
    os.makedirs(folder, exist_ok=True)
    print(f"\n{run.name}: {shown(run)} (about {run.minutes:g} min)", flush=True)
    stdout, seconds, (load_before, load_after) = execute(run, folder)
    stamp = textwrap.fill(
        f"*Ran in {took(seconds)} on {machine()}, load average {load_before:.1f} when it started and "
        f"{load_after:.1f} when it ended (the run itself adds about 1), {datetime.date.today().isoformat()}: "
        f"{shown(run)}.*", 100, break_long_words=False, break_on_hyphens=False)
    blocks = {name: select(stdout, folder) + "\n\n" + stamp for name, select in run.blocks.items()}
    for source, target in run.pictures.items():
        shutil.copyfile(os.path.join(folder, source), os.path.join(root, "docs", target))
    changed = write_blocks(root, blocks)
    for name, (old, new) in changed.items():
        diff = list(difflib.unified_diff(without_timing(old), without_timing(new), f"{name} (before)", f"{name} (now)",
                                         lineterm=""))
        print("\n".join(diff) if diff else f"{name}: the same as before", flush=True)
    for citation in stale_citations(root, changed):
        print(f"reread {citation}: the prose cites a number the block no longer prints", flush=True)


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
            writes = list(run.blocks) + [f"docs/{picture}" for picture in run.pictures.values()] + [run.writes]
            print(f"{run.name:>26s}  about {run.minutes:4g} min  {shown(run)}\n{'':>28s}writes "
                  + ", ".join(w for w in writes if w))
        return 0
    root = os.path.abspath(args.root)
    unmarked = sorted({name for run in runs for name in run.blocks} - set(marked_names(root)))
    if unmarked:  # before any run: the longest take a quarter of an hour
        raise SystemExit(f"regenerate: no <!-- begin output: NAME --> ... <!-- end output: NAME --> in README.md or "
                         f"docs/*.md under {root} for {unmarked}")
    total = time.perf_counter()
    for run in runs:
        regenerate(run, root, os.path.abspath(args.work))
    print(f"\nregenerated {len(runs)} runs in {took(time.perf_counter() - total)}; reread the prose around "
          "every block that changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
