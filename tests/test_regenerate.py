"""docs/regenerate.py: every quoted output and picture of the docs has a run that makes it, and a
demo's quoted output is what the demo prints now."""
import importlib.util
import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def _load_regenerate():
    spec = importlib.util.spec_from_file_location("regenerate", ROOT / "docs" / "regenerate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


regenerate = _load_regenerate()


def _block(path, name):
    return re.search(rf"<!-- begin output: {name} -->\n(.*?)<!-- end output: {name} -->", path.read_text(),
                     flags=re.S).group(1)


def test_every_marked_block_is_filled_by_one_run_and_every_run_fills_a_marked_block():
    markers = []
    for doc in DOCS:
        text = doc.read_text()
        begins = re.findall(r"<!-- begin output: ([\w-]+) -->", text)
        assert begins == re.findall(r"<!-- end output: ([\w-]+) -->", text), f"{doc.name}: unpaired markers"
        markers += begins
    assert len(set(markers)) == len(markers), "a block is marked twice"
    assert sorted(markers) == sorted(name for run in regenerate.RUNS for name in run.blocks)


def test_every_picture_in_docs_is_drawn_by_one_run_and_shown_somewhere():
    drawn = [target for run in regenerate.RUNS for target in run.pictures.values()]
    pictures = sorted(path.name for path in (ROOT / "docs").glob("*.png"))
    assert sorted(drawn) == pictures
    # shown from the README as docs/NAME.png, from a page in docs/ as NAME.png
    shown = ROOT.joinpath("README.md").read_text() + "".join(doc.read_text().replace("](", "](docs/") for doc in DOCS[1:])
    assert [name for name in pictures if f"docs/{name}" not in shown] == []


def test_every_option_a_run_passes_is_one_its_demo_takes():
    options = {}
    for run in regenerate.RUNS:
        for command in run.commands:
            if command[0].startswith("demos/"):
                options.setdefault(command[0], set()).update(a for a in command if a.startswith("--"))
    assert len(options) >= 5
    for demo, used in options.items():
        usage = subprocess.run([sys.executable, demo, "--help"], cwd=ROOT, capture_output=True, text=True, check=True)
        assert {"--out-dir"} | used <= set(re.findall(r"--[\w-]+", usage.stdout)), demo


def test_the_five_seeds_table_gives_the_mean_and_range_of_each_length_per_model(tmp_path):
    compared = {"every word": {"sinusoidal": "A", "RoPE": "B"}, "words before": {"ALiBi": "C"}}
    for seed in regenerate.SEEDS:
        models = {name: {"by_length": {"10-30": 0.5 + 0.1 * seed + 0.01 * k, "30-60": 1.0 - 0.1 * k},
                         "train_seconds": 2.0 * seed + k} for k, name in enumerate("ABC")}
        (tmp_path / f"seed{seed}").mkdir()
        (tmp_path / f"seed{seed}" / "results.json").write_text(json.dumps({"models": models, "positions": compared}))
    assert regenerate.five_seeds_table("", str(tmp_path)).splitlines() == [
        "| positions | attends to | 10-30 | 30-60 | train s |", "|---|---|---|---|---|",
        "| sinusoidal | every word | 70.0 (50-90) | 100.0 (100-100) | 4.0 |",
        "| RoPE | every word | 71.0 (51-91) | 90.0 (90-90) | 5.0 |",
        "| ALiBi | words before | 72.0 (52-92) | 80.0 (80-80) | 6.0 |"]


def test_lines_selects_through_the_nth_end_line_and_names_what_it_misses():
    printed = "progress\ntable one\n  a 1\n  end\ntable two\n  b 2\n  end\n\nafter\n"
    assert regenerate.lines("table one", "end", nth=2)(printed, "") == \
        "```text\ntable one\n  a 1\n  end\ntable two\n  b 2\n  end\n```"
    assert regenerate.lines("table two")(printed, "") == "```text\ntable two\n  b 2\n  end\n```"
    with pytest.raises(SystemExit, match="no line starting with 'table three'"):
        regenerate.lines("table three", "end")(printed, "")
    with pytest.raises(SystemExit, match="not 3"):
        regenerate.lines("table one", "end", nth=3)(printed, "")


def test_a_rerun_of_a_demo_writes_the_block_the_readme_quotes_and_nothing_else(tmp_path):
    (tmp_path / "docs").mkdir()
    for doc in DOCS:
        shutil.copy(doc, tmp_path / doc.relative_to(ROOT))
    regenerate.main(["--only", "what_is_it", "--root", str(tmp_path), "--work", str(tmp_path / "work")])
    page = "docs/self_attention_demos.md"  # where the demo's output is quoted
    now = _block(tmp_path / page, "what_is_it")
    assert regenerate.without_timing(now) == regenerate.without_timing(_block(ROOT / page, "what_is_it"))
    assert "\n*Ran in " in now, now
    stamp = now.split("\n*Ran in ", 1)[1]
    assert "cores" in stamp and "load average" in stamp and stamp.rstrip().endswith("demos/what_is_it.py`.*"), stamp
    assert (tmp_path / "docs" / "what_is_it_attention.png").stat().st_size > 10_000
    outside = (ROOT / page).read_text().replace(_block(ROOT / page, "what_is_it"), "")
    assert (tmp_path / page).read_text().replace(now, "") == outside
    for doc in DOCS:
        if doc != ROOT / page:
            assert (tmp_path / doc.relative_to(ROOT)).read_text() == doc.read_text()


def test_prose_that_cites_a_number_a_block_no_longer_prints_is_named(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.md").write_text("Here it took 86 s and 91 s.\n")
    old = "```text\nmisses 1208 of 12842\ntook 86\n```\n"
    new = "```text\nmisses 1208 of 12842\ntook 91\n```\n"
    (tmp_path / "README.md").write_text(
        "It misses 1,208 words.\n<!-- begin output: demo -->\n" + new + "<!-- end output: demo -->\n"
        "Training took 86 s, against 142-194 s.\n")
    assert regenerate.stale_citations(str(tmp_path), {"demo": (old, new)}) == [
        "README.md:8: 86 (demo)", "docs/notes.md:1: 86 (demo)"]
    assert regenerate.stale_citations(str(tmp_path), {"demo": (new, new)}) == []


def _table(block, heading):
    """{first cell: [the other cells]} of the markdown table after the line `heading` in a block."""
    rows = block.split(heading, 1)[1].strip().split("\n\n")[0].splitlines()[2:]
    return {cells[0]: cells[1:] for cells in ([c.strip() for c in row.strip("|").split("|")] for row in rows)}


def _columns(block, header):
    """{column heading: {row label: value}} of the plain-text table under the line `header`."""
    lines = block.split(header, 1)[1].splitlines()[1:]
    names = re.split(r"\s{2,}", lines[0].strip())[1:]
    values = {}
    for line in lines[1:]:
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) != len(names) + 1:
            break
        for name, cell in zip(names, cells[1:]):
            values.setdefault(name, {})[cells[0]] = cell
    return values


def test_the_readmes_figures_are_the_ones_the_quoted_tables_hold():
    readme = " ".join((ROOT / "README.md").read_text().split())
    longer = _table(_block(ROOT / "docs" / "translation_compare.md", "compare"), "exact match (%):")
    recurrent = [float(cells[0]) for name, cells in longer.items() if name not in ("none", "transformer")]
    quoted = (f"({min(recurrent):.0f}-{max(recurrent):.0f} % of 51-75-word sentences, the Transformer "
              f"{float(longer['transformer'][0]):.0f} %)")
    assert quoted in readme
    reviews = _columns(_block(ROOT / "docs" / "self_attention_demos.md", "long_reviews"), "chance is 50%):")
    longest = {name: f"{float(column['150-200'].rstrip('%')):g} %" for name, column in reviews.items()}
    assert (f"reading by attention pooling keeps {longest['LSTM + pooling']} (the LSTM) and "
            f"{longest['LSTMN + pooling']} (the LSTMN) of 150-200-word reviews, the LSTM read at its last state "
            f"{longest['LSTM, last state']} and the pooled Transformer (sinusoidal positions) "
            f"{longest['Transformer + pooling']}") in readme


def test_compares_duration_is_quoted_once_in_its_stamp():
    # the run's time is the stamp regenerate.py writes under its block; nothing else quotes it
    stamp = re.search(r"\*Ran in (\d+) min (\d+) s", _block(ROOT / "docs" / "translation_compare.md", "compare"))
    minutes = int(stamp.group(1)) + int(stamp.group(2)) / 60
    for doc in DOCS:
        prose = re.sub(r"<!-- begin output: ([\w-]+) -->.*?<!-- end output: \1 -->", "", doc.read_text(), flags=re.S)
        for line in prose.splitlines():
            assert "--compare" not in line or "--short" in line or not re.search(r"\d+ min", line), (doc.name, line)
    # --list's estimate, which decides what --quick leaves out, is the stamp's time rounded up
    assert next(run.minutes for run in regenerate.RUNS if run.name == "compare") == math.ceil(minutes)


def test_each_runs_estimate_is_within_2x_of_its_stamp():
    # --list's minutes, which --quick goes by, against the time the last regeneration measured
    for run in regenerate.RUNS:
        stamps = []
        for doc in DOCS:
            for name in run.blocks:
                if f"<!-- begin output: {name} -->" in doc.read_text():
                    stamps.append(re.search(r"\*Ran in (?:(\d+) min )?(\d+) s", _block(doc, name)))
        if not stamps:
            continue
        measured = 60 * int(stamps[0].group(1) or 0) + int(stamps[0].group(2))
        estimate = 60 * run.minutes
        assert max(estimate, measured) <= 30 or measured / 2 <= estimate <= 2 * measured, (run.name, estimate, measured)
