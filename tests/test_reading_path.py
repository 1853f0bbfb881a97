"""The reading path the README's first tour promises: its files (marked * in the tour) hold no line
about speed, stay within the 1,600 lines the project allows them, and the README states their size."""
import pathlib
import re

ROOT = pathlib.Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()


def _starred_files():
    tour = README.split("## Reading tour 1", 1)[1].split("## ", 1)[0]
    files = []
    for cell in re.findall(r"^\| (.+?) \* \|", tour, flags=re.M):
        names = re.findall(r"`([^`]+)`", cell)
        folder = pathlib.Path(names[0]).parent
        files += [ROOT / (name if "/" in name else folder / name) for name in names]
    return files


def test_the_reading_path_is_as_long_as_the_readme_says_and_at_most_1600_lines():
    files = _starred_files()
    assert len(files) == 9 and all(f.exists() for f in files), files
    lines = sum(len(f.read_text().splitlines()) for f in files)
    stated = int(re.search(r"are ([\d,]+) lines", README).group(1).replace(",", ""))
    assert lines == stated, f"the README says {stated} lines; the files hold {lines}"
    assert lines <= 1600


def test_the_reading_path_names_no_kernel():
    for path in _starred_files():
        text = path.read_text().lower()
        assert "numba" not in text and "kernels" not in text, path.name
