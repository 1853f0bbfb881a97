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


def test_gradient_panels_take_tuples_and_draw_signed_values_in_the_one_signed_colour_map(rng):
    import matplotlib.pyplot as plt

    grad = rng.standard_normal((3, 3))
    as_dicts = ta.viz.gradient_panels([dict(array=grad, title="g", caption="c", signed=True)])
    as_tuples = ta.viz.gradient_panels(((ta.tensor(grad), "g", "c", {"signed": True}), [grad, "g", "c"]))
    for fig in (as_dicts, as_tuples):  # the old tree: "tuple indices must be integers or slices, not str"
        image = fig.axes[0].images[0]
        assert image.get_cmap().name == ta.viz.SIGNED_CMAP and image.norm.vmin == -image.norm.vmax
        np.testing.assert_array_equal(image.get_array(), grad)
        plt.close(fig)
    red, blue = image.get_cmap()(1.0), image.get_cmap()(0.0)
    assert red[0] > red[2] and blue[2] > blue[0]  # positive is red, negative blue, as the notebooks draw it


@pytest.mark.parametrize("panels, message", [
    ({"array": np.eye(2), "title": "t", "caption": "c"}, "a single panel goes in a list"),
    ([(np.eye(2), "t")], r"panel 0 is a tuple of 2; give \(array, title, caption\)"),
    ([{"array": np.eye(2), "title": "t", "captoin": "c"}], "panel 0: missing caption; unknown captoin"),
    ([(np.ones(3), "t", "c")], r"panel 0: array has shape \(3,\); give a 2-D"),
    ([np.eye(2)], "panel 0 is a ndarray; give a dict"),
])
def test_gradient_panels_name_what_is_wrong_with_a_panel(panels, message):
    with pytest.raises((TypeError, ValueError), match=message):
        ta.viz.gradient_panels(panels)
