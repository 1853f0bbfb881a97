"""Run the benchmarks and write benchmarks/RESULTS.md: every figure in it measured by this one command
at the tree its header names.

    python benchmarks/write_results.py                       # the whole file: 14 minutes on 2 busy cores
    python benchmarks/write_results.py --quick               # few rounds: a smoke test (6-9 minutes)
    python benchmarks/write_results.py --only compiled --only seq2seq   # some sections (the file holds only them)
    python benchmarks/write_results.py --older-tree 0c047e2  # adds eager against that commit's package

Each section runs one benchmark script in its own process (`python benchmarks/<script> <arguments>`,
the command printed in the section reproduces it), with PYTHONPATH at this checkout so the tree named
in the header is the one measured. What the script prints (its markdown tables and the lines that
say how it measured) goes into the section as printed; the tables are also read back as rows, and
where the project states a goal for a row, the generated "Goals" table gives the figure, the goal and
the verdict, and a missed goal of a compiled step gets a profile of where its time goes
(benchmarks/profile_step.py). The 1-minute load average is read before and after every section.

The file holds only what this run measured: older figures, and the story of each speed change, are
in git history (`git log -p benchmarks/RESULTS.md`). Run on a quiet machine where you can: on a
shared 2-core machine the interleaved ratios hold up better than the times.
"""
import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "RESULTS.md")


class Section:
    """One benchmark script's run: `arguments` for a normal run, `quick` for --quick."""

    def __init__(self, key, title, script, arguments, quick, about, goals=(), profile=None, cut=None):
        self.key, self.title, self.script, self.about = key, title, script, about
        self.arguments, self.quick = arguments, quick
        # (row name, the output row's first cell, its engine column or None, the column, goal (<=), where stated)
        self.goals = goals
        self.profile = profile  # {row name: bench_compiled model key}: profiled when that goal is missed
        self.cut = cut  # the output is kept up to the first line that starts with this


COMPILED_GOALS = (
    ("composed GRU + attention, compiled / PyTorch", "composed GRU + additive attention (batch 64)", "compiled",
     "per-block ratio", 0.6, "the aim for compiled steps"),
    ("Transformer classifier, compiled / PyTorch", "Transformer classifier (bench_classifier.py's)", "compiled",
     "per-block ratio", 0.6, "the aim for compiled steps"),
    ("GPT, compiled / PyTorch", "GPT (block 64, 2 layers, n_embd 64, batch 32)", "compiled", "per-block ratio",
     0.7, "the aim for compiled steps"),
    ("hand-fused translation model, compiled / PyTorch", "hand-fused translation model (bench_seq2seq.py's Seq2Seq)",
     "compiled", "per-block ratio", 0.4, "the aim for compiled steps"),
)

SECTIONS = [
    Section("compiled", "Compiled steps: ta.compile against eager and PyTorch", "bench_compiled.py",
            ["--blocks", "8", "--steps", "5"], ["--blocks", "2", "--steps", "2"],
            "Four models, each trained by eager tinyattn, ta.compile (with fusion, fuse=\"exact\", and "
            "without) and PyTorch from the same weights on the same batches, one thread, blocks of steps "
            "alternating; ms per step, median (range) over the blocks, and the ratio to PyTorch (< 1: "
            "tinyattn faster). Then the peak memory of one step.",
            goals=COMPILED_GOALS,
            profile={"composed GRU + attention, compiled / PyTorch": "composed",
                     "Transformer classifier, compiled / PyTorch": "classifier",
                     "GPT, compiled / PyTorch": "gpt",
                     "hand-fused translation model, compiled / PyTorch": "seq2seq"},
            cut="GPT (block 64"),
    Section("outside", "Models nobody here tuned for", "bench_outside_models.py",
            ["--rounds", "12", "--steps", "3", "--trees"], ["--rounds", "2", "--steps", "2", "--trees"],
            "Four models transcribed from PyTorch tutorials and docs as a PyTorch user writes them "
            "(benchmarks/outside_models.py: the translation tutorial's GRU seq2seq with attention, "
            "attention-only and Transformer classifiers, a GRU with additive attention), trained eagerly "
            "and compiled (ta.compile) against PyTorch from PyTorch's own initial weights on the same "
            "batches, one thread, interleaved; `--trees COMMIT` adds an older tree beside them.",
            goals=(("outside GRU + additive attention, compiled / PyTorch", "gru_attention", "main, compiled",
                    "/ PyTorch (per round)", 0.6, "the aim for compiled steps"),
                   ("outside Transformer classifier, compiled / PyTorch", "transformer", "main, compiled",
                    "/ PyTorch (per round)", 0.6, "the aim for compiled steps"))),
    Section("seq2seq", "The translation model (hand-fused Seq2Seq) against PyTorch", "bench_seq2seq.py",
            ["--threads", "1", "--rounds", "4", "--steps", "12"], ["--threads", "1", "--rounds", "2", "--steps", "4"],
            "demos/translate.py's Seq2Seq (bidirectional GRU encoder, Bahdanau decoder, batch 64, Adam) "
            "against its torch.nn twin, same weights and batches. Not like for like: tinyattn's nn.GRU and "
            "its fused decoder compute only the sentences still running at each step.",
            goals=(("Seq2Seq, 1 thread, tinyattn / PyTorch", "1", None, "tinyattn / PyTorch", 0.5,
                    "README, reading tour 2"),)),
    Section("kernels", "Kernels against PyTorch's own ops", "bench_kernels_vs_torch.py",
            ["--rounds", "5"], ["--rounds", "2", "--min-time", "0.005"],
            "Each element-wise kernel of the fast path against the ATen op PyTorch's autograd calls, one "
            "thread each, interleaved; the numpy reference beside them."),
    Section("overhead", "Engine cost per node", "bench_overhead.py", ["--rounds", "9"], ["--rounds", "2"],
            "Tiny (4, 4) ops forward + backward, and chains of 1,000 nodes (forward: building the graph, "
            "backward: the walk) per node, against raw numpy and PyTorch at 1 thread."),
    Section("compile", "Compile cost: import and first call of every kernel", "bench_compile.py", [], [],
            "Each in a fresh process with NUMBA_CACHE_DIR at a new folder (cold: every kernel compiles), "
            "then at the same folder again (warm: every kernel loads from the cache).",
            goals=(("compile, cold cache, seconds", "import + first call of every kernel, cold cache (compile)", None,
                    "seconds", 15.0, "RESULTS.md before it was generated (git history)"),
                   ("compile, warm cache, seconds", "the same, warm cache (load)", None, "seconds", 1.0,
                    "RESULTS.md before it was generated (git history)"))),
    Section("blas_threads", "BLAS threads", "bench_blas_threads.py", ["--rounds", "6"], ["--rounds", "2"],
            "Why ta.train.fit and the demos give OpenBLAS one thread (ops/blas_threads.py): training steps "
            "and plain products under numpy's default (a thread per core), OPENBLAS_NUM_THREADS=1 and "
            "ta.set_blas_threads(1), each in its own process, interleaved, on the machine as it is."),
    Section("cycle_collector", "The cycle collector", "bench_gc_threshold.py", ["--rounds", "10"],
            ["--rounds", "3", "--steps", "2"],
            "Why tinyattn leaves Python's cycle collector alone: training steps at Python's first threshold "
            "(700), higher ones and the collector off, interleaved, 1 thread."),
    Section("fused", "Fused kernels against their numpy references", "bench_fused.py", [], [],
            "Each fused kernel of the translation model against its numpy reference at the model's shapes "
            "(batch 64, hidden 64, 14 source words, float32)."),
    Section("recurrent", "Recurrent fused nodes against their composed graphs", "bench_recurrent.py",
            ["--rounds", "5"], ["--rounds", "1"],
            "Every recurrent fused node (nn/fused/) against the composed graph it equals, forward + "
            "backward, float32, the two sides alternating; PyTorch's cell and layer beside them."),
    Section("softmax", "Softmax and log-softmax", "bench_softmax.py", [], [],
            "The softmax kernel's forward + backward against the numpy reference and torch."),
    Section("array_kernels", "Small kernels, page faults, attribute reads", "bench_array_kernels.py",
            ["--rounds", "7"], ["--rounds", "2"],
            "The facts the array functions rely on: sums as a product with ones, the two broadcast "
            "products and the outer product against numpy's own call; malloc's page faults a training "
            "step (ops/memory.py); what a __getattr__ would cost every Tensor attribute read "
            "(autograd/spellings.py)."),
]

OLDER_TREE = Section(
    "older_tree", "Eager steps against an older tree", "compare_trees.py", ["--models", "{tree}", "21"],
    ["--models", "{tree}", "3"],
    "One training step of each model (the benchmarks' GPT, Seq2Seq, classifiers and Luong's decoder) "
    "built with each package copy from the same seed, rounds interleaved, the order turned each round. "
    "DIR is the older package: `git archive COMMIT tinyattn | tar -x -C DIR`.",
    goals=(("eager against {commit}, slowest model", None, None, None, 1.03, "the engine's reorganisation: no model slower by more than 3 %"),))


def _load():
    return os.getloadavg()[0]


def _git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def _version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def cpu_model():
    """lscpu's "Model name" (or /proc/cpuinfo's "model name")."""
    for command, key in ((["lscpu"], "Model name"), (["cat", "/proc/cpuinfo"], "model name")):
        try:
            out = subprocess.run(command, capture_output=True, text=True).stdout
        except OSError:
            continue
        for line in out.splitlines():
            if line.startswith(key):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def tables(text):
    """The markdown tables in `text`, each a list of {column: cell} rows."""
    found, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and re.match(r"^\|(\s*:?-+:?\s*\|)+\s*$", lines[i + 1]):
            columns = [c.strip() for c in lines[i].strip().strip("|").split("|")]
            rows, i = [], i + 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(dict(zip(columns, (c.strip() for c in lines[i].strip().strip("|").split("|")))))
                i += 1
            found.append(rows)
        else:
            i += 1
    return found


def _number(cell):
    """The first number in a cell ('**0.84** (0.81-0.92)' -> 0.84)."""
    match = re.search(r"-?\d[\d,]*\.?\d*", cell.replace("**", ""))
    return float(match.group(0).replace(",", "")) if match else None


def find_figure(output, first_cell, engine, column):
    """The number in `column` of the output's row whose first cell is `first_cell` (and whose "engine"
    cell is `engine`, where the rows of a model repeat its name)."""
    for table in tables(output):
        for row in table:
            cells = list(row.values())
            if cells and cells[0] == first_cell and (engine is None or row.get("engine") == engine) and column in row:
                return _number(row[column])
    return None


def slowest_model(output):
    ratios = []
    for table in tables(output):
        for row in table:
            for key, value in row.items():
                if key.startswith("this / "):
                    ratios.append((_number(value), list(row.values())[0]))
    return max(ratios) if ratios else (None, None)


def run_script(section, quick, tree=None):
    arguments = [a.replace("{tree}", tree or "") for a in (section.quick if quick else section.arguments)]
    command = [sys.executable, os.path.join(HERE, section.script), *arguments]
    shown = " ".join(["python", f"benchmarks/{section.script}", *arguments]).replace(tree or "\0", "DIR")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    load_before, started = _load(), time.perf_counter()
    try:
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
        output, failed = done.stdout, (done.returncode and f"exit code {done.returncode}: "
                                       + " / ".join(done.stderr.strip().splitlines()[-3:]))
        if section.cut and f"\n{section.cut}" in output:
            output = output[:output.index(f"\n{section.cut}")] + (
                f"\n\n(The rest of the script's output, from \"{section.cut}...\", is left out: run the command.)")
    except subprocess.TimeoutExpired as error:
        output, failed = (error.stdout or b"").decode() if isinstance(error.stdout, bytes) else (error.stdout or ""), \
            "timed out after 1800 s"
    if tree:
        output = output.replace(tree, "DIR")
    return {"command": shown, "output": output.rstrip(), "failed": failed, "load": (load_before, _load()),
            "seconds": time.perf_counter() - started}


def verdicts(section, result, commit=None):
    """[(row name, figure, goal, where stated, verdict)] for the section's goals."""
    rows = []
    for name, first_cell, engine, column, goal, where in section.goals:
        if section.key == "older_tree":
            figure, model = slowest_model(result["output"])
            name = name.format(commit=commit) + (f" ({model})" if model else "")
        else:
            figure = find_figure(result["output"], first_cell, engine, column)
        if figure is None:
            verdict = "not measured (no such row in the output)"
        elif figure <= goal:
            verdict = "met"
        else:
            verdict = f"**missed** by {figure - goal:.2f} ({(figure / goal - 1) * 100:.0f} % over)"
        rows.append((name, figure, goal, where, verdict))
    return rows


def profile(model, quick):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    steps = "10" if quick else "40"
    command = [sys.executable, os.path.join(HERE, "profile_step.py"), model, "--steps", steps]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    shown = f"python benchmarks/profile_step.py {model} --steps {steps}"
    return shown, (done.stdout.rstrip() if done.returncode == 0 else f"failed: {done.stderr.strip()[-300:]}")


def reading_path():
    """tests/test_reading_path.py's measure: the lines and files two traced training steps run."""
    env = dict(os.environ, TINYATTN_BACKEND="numpy", TINYATTN_FUSED="0",
               PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    out = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "reading_path_model.py")], env=env,
                         capture_output=True, text=True, check=True).stdout
    ran = json.loads(out)
    return sum(len(lines) for lines in ran.values()), len(ran)


def older_tree(commit):
    """The package at `commit`, unpacked into a temporary folder (git archive <commit> tinyattn)."""
    folder = tempfile.mkdtemp(prefix=f"tinyattn-{commit}-")
    archive = subprocess.run(["git", "archive", commit, "tinyattn"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
    return folder


def header(started, seconds, quick, keys, dirty):
    torch = _version("torch")
    lines = [
        "# Benchmark results",
        "",
        "Written by `python benchmarks/write_results.py"
        + (" --quick" if quick else "") + "".join(f" --only {k}" for k in keys or []) + "`",
        f"({'quick: few rounds, a smoke test, not figures to quote' if quick else 'a full run'}); "
        "do not edit by hand: run it again. Older figures and the story of each speed change are in git "
        "history (`git log -p benchmarks/RESULTS.md`).",
        "",
        f"- commit: {_git('rev-parse', 'HEAD')}",
    ]
    if dirty:
        lines.append(f"- **warning: the tree was dirty** (uncommitted changes: {', '.join(dirty)}); "
                     "the figures are of those files, not of the commit alone")
    lines += [
        f"- date: {started:%Y-%m-%d %H:%M} UTC; the run took {seconds / 60:.1f} minutes",
        f"- CPU: {cpu_model()}; cores: {os.cpu_count()}; {platform.system()} {platform.release()}",
        f"- Python {platform.python_version()}, numpy {_version('numpy')}, numba {_version('numba')}, "
        f"torch {torch}",
        f"- load: the 1-minute load average {os.getloadavg()[0]:.2f} at the end; each section gives it "
        "before and after its run. On a busy shared machine times move by up to 2x; the ratios of "
        "sides interleaved in one run move much less.",
    ]
    return lines


def write(results, goals, started, seconds, quick, keys, dirty, reading, out):
    lines = header(started, seconds, quick, keys, dirty)
    if goals:
        lines += ["", "## Goals", "", "Each figure is the section's row named in the first column; < 1 in a "
                  "ratio means tinyattn is faster.", "",
                  "| row | figure | goal | stated in | verdict |", "|---|---|---|---|---|"]
        for name, figure, goal, where, verdict in goals:
            shown = "-" if figure is None else f"{figure:g}"
            lines.append(f"| {name} | {shown} | <= {goal:g} | {where} | {verdict} |")
    if reading:
        lines += ["", "## The reading path", "",
                  "tests/test_reading_path.py's measure: the distinct lines two traced training steps of "
                  "tests/reading_path_model.py run with the fast path off (TINYATTN_BACKEND=numpy "
                  "TINYATTN_FUSED=0), and the files they are in.", "",
                  "| row | figure |", "|---|---|",
                  f"| reading path, lines executed | {reading[0]} |", f"| reading path, files | {reading[1]} |"]
    for section, result, section_goals, profiles in results:
        lines += ["", f"## {section.title}", "", section.about, "",
                  f"`{result['command']}`: {result['seconds']:.0f} s, load {result['load'][0]:.2f} before, "
                  f"{result['load'][1]:.2f} after.", ""]
        if result["failed"]:
            lines += [f"**The run failed** ({result['failed']}).", ""]
        lines += [result["output"] or "(no output)"]
        for name, figure, goal, where, verdict in section_goals:
            if verdict.startswith("**missed"):
                lines += ["", f"Goal missed: {name} is {figure:g} against <= {goal:g} ({where}), {verdict[2:]}"
                          .replace("**", "")]
        for name, (command, text) in profiles.items():
            lines += ["", f"### Where the time goes: {name}", "", f"`{command}`", "", text]
    with open(out, "w") as f:
        f.write("\n".join(lines).rstrip() + "\n")


def main():
    keys = [s.key for s in SECTIONS] + ["reading_path", OLDER_TREE.key]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few rounds: a smoke test")
    parser.add_argument("--only", action="append", choices=keys, help="run this section only (repeatable)")
    parser.add_argument("--older-tree", metavar="COMMIT", help="also time eager steps against COMMIT's package "
                        "(e.g. 0c047e2; `git archive COMMIT tinyattn` into a temporary folder)")
    parser.add_argument("--out", default=RESULTS, help="the file to write (benchmarks/RESULTS.md)")
    args = parser.parse_args()
    chosen = set(args.only or keys)
    status = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    dirty = [line[3:] for line in status.splitlines() if not line[3:].endswith("benchmarks/RESULTS.md")]
    started, clock = datetime.datetime.now(datetime.timezone.utc), time.perf_counter()
    sections = [s for s in SECTIONS if s.key in chosen]
    tree = None
    if args.older_tree and OLDER_TREE.key in chosen:
        tree = older_tree(args.older_tree)
        OLDER_TREE.title = f"Eager steps against {args.older_tree}"
        sections.append(OLDER_TREE)
    results, goals = [], []
    for section in sections:
        print(f"{datetime.datetime.now():%H:%M:%S} {section.key} ...", file=sys.stderr, flush=True)
        result = run_script(section, args.quick, tree)
        section_goals = verdicts(section, result, args.older_tree)
        profiles = {}
        for name, figure, goal, where, verdict in section_goals:
            if verdict.startswith("**missed") and section.profile and name in section.profile:
                profiles[name] = profile(section.profile[name], args.quick)
        results.append((section, result, section_goals, profiles))
        goals += section_goals
    if tree:
        shutil.rmtree(tree, ignore_errors=True)
    reading = reading_path() if "reading_path" in chosen else None
    write(results, goals, started, time.perf_counter() - clock, args.quick,
          args.only, dirty, reading, args.out)
    print(f"wrote {args.out} in {(time.perf_counter() - clock) / 60:.1f} minutes", file=sys.stderr)


if __name__ == "__main__":
    main()
