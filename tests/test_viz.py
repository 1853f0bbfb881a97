"""Pictures: PNGs that open, clear errors, and no matplotlib import until a picture is drawn."""
import subprocess
import sys

import numpy as np
import pytest

import tinyattn as ta
from tinyattn.nn.attention import sinusoidal_table


def _is_png(path):
    return path.stat().st_size > 3000 and path.read_bytes()[:4] == b"\x89PNG"


def test_heatmap_of_one_head_and_a_grid_of_heads(tmp_path, rng):
    one, grid = tmp_path / "one.png", tmp_path / "grid.png"
    ta.viz.attention_heatmap(rng.random((3, 4)), list("abcd"), list("xyz"), path=one, title="one head")
    fig = ta.viz.attention_heatmap(ta.tensor(rng.random((5, 2, 3))), path=grid)
    assert _is_png(one) and _is_png(grid)
    assert sum(ax.get_title().startswith("head") for ax in fig.axes) == 5


def test_a_fifty_word_heatmap_fits_twelve_inches_with_its_title_above_the_top_row(rng):
    weights = rng.dirichlet(np.ones(50), size=51)
    fig = ta.viz.attention_heatmap(weights, [f"w{i}" for i in range(50)], [f"out{i}" for i in range(51)],
                                   title="where the decoder looked")
    assert max(fig.get_size_inches()) <= 12  # the old tree drew 24.5 inches, which translate.py then shrank
    renderer = fig.canvas.get_renderer()
    title, top = fig._suptitle.get_window_extent(renderer), fig.axes[0].get_window_extent(renderer)
    assert title.y0 >= top.y1
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_positional_encoding_picture(tmp_path):
    path = tmp_path / "pe.png"
    ta.viz.positional_encoding_picture(sinusoidal_table(40, 16), path=path)
    assert _is_png(path)


def test_heatmap_errors_name_the_mismatch(rng):
    with pytest.raises(ValueError, match="3 x_labels for 4 keys"):
        ta.viz.attention_heatmap(rng.random((2, 4)), x_labels=list("abc"))
    with pytest.raises(ValueError, match=r"\(Tq, Tk\) or \(heads, Tq, Tk\)"):
        ta.viz.attention_heatmap(rng.random(4))


def test_importing_tinyattn_does_not_import_matplotlib():
    code = "import sys, tinyattn; print('matplotlib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
