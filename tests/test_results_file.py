"""benchmarks/RESULTS.md is written by one command (benchmarks/write_results.py) at the tree it names,
and every figure the project quotes from it is one of its rows. No benchmark runs here.

The convention for quoting it, in README.md, docs/, demos/, tests/ and tinyattn/:
    benchmarks/RESULTS.md, "NAME"            NAME: a section's heading or a table row's first cell
    FIGURE (benchmarks/RESULTS.md, "NAME")   FIGURE (a word with a digit) appears in that row or section
"""
import pathlib
import re

ROOT = pathlib.Path(__file__).parent.parent
RESULTS = (ROOT / "benchmarks" / "RESULTS.md").read_text()
REFERENCE = re.compile(r"(?:(\S*\d\S*) \()?`?benchmarks/RESULTS\.md`?, \"([^\"]+)\"")


def _quoting_files():
    for pattern in ("README.md", "docs/*.md", "demos/*.py", "tests/*.py", "tinyattn/**/*.py"):
        yield from (path for path in ROOT.glob(pattern) if path.name != "test_results_file.py")


def _references():
    """(file, figure or None, name) for every quote of RESULTS.md, lines joined (a docstring wraps)."""
    for path in _quoting_files():
        text = re.sub(r"\s*\n\s*(?:#\s*)?", " ", path.read_text())
        for figure, name in REFERENCE.findall(text):
            yield path.relative_to(ROOT), figure or None, name


def _rows_and_sections():
    """{name: the text a figure quoted under that name must appear in}."""
    found = {}
    for line in RESULTS.splitlines():
        if line.startswith("|") and not re.match(r"^\|[-| :]+\|$", line):
            found.setdefault(line.strip("|").split("|")[0].strip(), line)
    for heading, body in re.findall(r"^#{2,3} ([^\n]+)\n(.*?)(?=^#{2,3} |\Z)", RESULTS, flags=re.M | re.S):
        found[heading.strip()] = body
    return found


def test_the_header_names_the_commit_the_cpu_and_the_load():
    header = RESULTS.split("\n## ", 1)[0]
    assert "python benchmarks/write_results.py" in header, "RESULTS.md must say the command that wrote it"
    assert re.search(r"^- commit: [0-9a-f]{40}$", header, flags=re.M), "the header must name the commit measured"
    assert re.search(r"^- CPU: \S.*; cores: \d+", header, flags=re.M), "the header must name the CPU and its cores"
    assert re.search(r"^- load: .*\d\.\d\d", header, flags=re.M), "the header must give the load average"
    assert "git log -p benchmarks/RESULTS.md" in header, "the header must say where older figures are"


def test_every_section_gives_its_command_and_the_load_around_it():
    for title, body in re.findall(r"^## ([^\n]+)\n(.*?)(?=^## |\Z)", RESULTS, flags=re.M | re.S):
        if title in ("Goals", "The reading path"):
            continue
        assert re.search(r"`python benchmarks/\S+\.py[^`]*`: \d+ s, load \d+\.\d\d before, \d+\.\d\d after",
                         body), f"section {title!r} must give its command, its time and the load before and after"


def test_every_quote_of_the_results_file_names_a_row_and_its_figures_are_that_rows():
    rows = _rows_and_sections()
    references = list(_references())
    assert any(path.name == "README.md" for path, _, _ in references), "the README quotes no row of RESULTS.md"
    for path, figure, name in references:
        assert name in rows, (f"{path} quotes benchmarks/RESULTS.md, {name!r}, which has no such row or section "
                              f"(rows and sections: {sorted(rows)})")
        if figure is not None:
            assert figure.strip("(*,;:") in rows[name], (
                f"{path} quotes {figure} from benchmarks/RESULTS.md, {name!r}; that row says: {rows[name][:300]}")


def test_a_citation_of_the_results_file_says_which_row():
    """A citation in parentheses that names no row cannot be checked (the old form was "RESULTS.md,
    one current table, first row"), so it must name one; pointing at the file's git history is fine."""
    for path in _quoting_files():
        text = re.sub(r"\s*\n\s*(?:#\s*)?", " ", path.read_text())
        for citation in re.findall(r"\([^()]*RESULTS\.md(?!`?, \")[^()]*\)", text):
            assert "git" in citation, f"{path} cites RESULTS.md without naming a row: {citation}"
