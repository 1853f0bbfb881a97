"""docs/regenerate.py: every quoted output and picture of the docs has a run that makes it, and a
demo's quoted output is what the demo prints now."""
import importlib.util
import json
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
