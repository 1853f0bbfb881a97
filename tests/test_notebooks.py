"""The notebooks in notebooks/ run from a fresh folder without an error, and are stored with
their outputs and pictures (so they render as they are on a code host).

`python notebooks/build.py` writes and runs them again; this test runs the stored ones.
"""
import pathlib
import shutil

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((pathlib.Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


def test_there_are_the_four_notebooks_and_each_is_stored_with_a_picture():
    assert [p.stem[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04"]
    for path in NOTEBOOKS:
        outputs = [out for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"
                   for out in cell.outputs]
        assert any("image/png" in out.get("data", {}) for out in outputs), f"{path.name} has no stored picture"
        assert not any(out.get("output_type") == "error" for out in outputs), f"{path.name} stores an error"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_from_a_fresh_folder(path, tmp_path):
    copy = tmp_path / path.name
    shutil.copy(path, copy)
    notebook = nbformat.read(copy, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=240, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError, naming the cell, on any error
    images = sum("image/png" in out.get("data", {}) for cell in notebook.cells if cell.cell_type == "code"
                 for out in cell.outputs)
    assert images >= 1, f"{path.name} drew no picture this time"


def test_the_first_notebook_asks_for_the_softmax_backward_and_does_not_print_it():
    """The learner's path starts here and reaches the exercises next: the formulas they derive
    there (softmax's backward and Jacobian, matmul's) must not be read here first."""
    text = "\n".join(cell.source for cell in nbformat.read(NOTEBOOKS[0], as_version=4).cells)
    for formula in ["- sum", "d_ij", "delta_ij", "diag(y)", "np.outer", "y * (g", "x^T", "^T"]:
        assert formula not in text, f"{NOTEBOOKS[0].name} prints {formula!r}, which the exercises ask for"
    assert "python -m tinyattn.exercises" in text and "start softmax" in text


def test_the_second_notebook_says_what_its_numbers_show_in_the_colours_of_ta_viz():
    """The gap between two rows of dL/dscores is computed and printed, not typed (it was "a hundred
    times" for a gap of 19); signed pictures use ta.viz.SIGNED_CMAP (positive red), as gradient_panels."""
    cells = nbformat.read(NOTEBOOKS[1], as_version=4).cells
    text = "\n".join(cell.source for cell in cells if cell.cell_type == "markdown")
    assert "hundred" not in text and "times smaller" not in text
    printed = "".join(out.get("text", "") for cell in cells if cell.cell_type == "code" for out in cell.outputs)
    assert "row 2 is 19 times smaller than row 1" in printed
    build = (pathlib.Path(__file__).parent.parent / "notebooks" / "build.py").read_text()
    assert "RdBu" not in build and build.count("cmap=ta.viz.SIGNED_CMAP") == 2


def test_the_fourth_notebook_stores_its_checks_passing():
    """Each section of "GPT from the engine up" ends in a check the learner reads; the stored run
    shows them: zero gradient from later tokens, the same text with and without the key/value
    cache, and an induction head in the second layer."""
    cells = nbformat.read(NOTEBOOKS[3], as_version=4).cells
    printed = "".join(out.get("text", "") for cell in cells if cell.cell_type == "code" for out in cell.outputs)
    assert " [0.     0.     0.     0.    ]\n [0.     0.     0.     0.    ]]" in printed  # rows 3, 4 of x.grad
    cached, uncached = (line.split(":", 1)[1].strip() for line in printed.splitlines()
                        if line.startswith(("with the cache:", "without the cache:")))
    assert cached == uncached
    assert "the best induction head: layer 1" in printed
