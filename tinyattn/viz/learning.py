"""Pictures of learning: forward weights beside their gradients, and attention as it trains."""
import textwrap

import numpy as np

from .heatmaps import SIGNED_CMAP, _array, _finish, _pyplot

PANEL_KEYS = ("array", "title", "caption")
PANEL_OPTIONS = ("x_labels", "y_labels", "signed")


def gradient_panels(panels, path=None, title=None):
    """Heatmaps side by side, each with a line of text under it saying what it shows.

    panels: a list (or tuple) of panels, each a dict with "array" (rows, cols), "title",
    "caption", and optionally "x_labels", "y_labels" and "signed" (True for a gradient: the
    SIGNED_CMAP scale centred on 0, positive red, so the sign of each entry shows; False for
    weights in [0, 1]); or a tuple (array, title, caption[, options dict]).
    """
    panels = [_panel(panel, i) for i, panel in enumerate(_panel_list(panels))]
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4.6), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        values = panel["array"]
        if panel.get("signed"):
            top = max(1e-12, np.abs(values).max())
            image = ax.imshow(values, cmap=SIGNED_CMAP, vmin=-top, vmax=top)
        else:
            image = ax.imshow(values, cmap="viridis", vmin=0, vmax=max(1e-12, values.max()))
        if values.size <= 36:  # small enough to print each entry in its cell
            for (i, j), v in np.ndenumerate(values):
                top = np.abs(values).max()
                dark = abs(v) > 0.6 * top if panel.get("signed") else v < 0.6 * top
                ax.text(j, i, f"{v:.2g}", ha="center", va="center", fontsize=8, color="white" if dark else "black")
        rows, cols = values.shape
        ax.set_xticks(range(cols), panel.get("x_labels", range(cols)))
        ax.set_yticks(range(rows), panel.get("y_labels", range(rows)))
        ax.set_title(panel["title"], fontsize=10)
        ax.text(0.5, -0.12, textwrap.fill(panel["caption"], 44), transform=ax.transAxes, ha="center", va="top",
                fontsize=8.5)
        fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return _finish(plt, fig, path)


def _panel_list(panels):
    if isinstance(panels, dict) or not isinstance(panels, (list, tuple)) or not panels:
        raise TypeError(f"gradient_panels: panels must be a non-empty list of panels, got {type(panels).__name__}"
                        f"{'' if panels else ' (empty)'}; a single panel goes in a list: [panel]")
    return panels


def _panel(panel, index):
    """One panel as a dict with its 2-D float array, from a dict or a tuple (array, title, caption[, options])."""
    where = f"gradient_panels: panel {index}"
    if isinstance(panel, (tuple, list)):
        if len(panel) not in (3, 4) or (len(panel) == 4 and not isinstance(panel[3], dict)):
            raise TypeError(f"{where} is a {type(panel).__name__} of {len(panel)}; give (array, title, caption) "
                            f"or (array, title, caption, {{options}}), or a dict with keys {', '.join(PANEL_KEYS)}")
        panel = {**dict(zip(PANEL_KEYS, panel[:3])), **(panel[3] if len(panel) == 4 else {})}
    if not isinstance(panel, dict):
        raise TypeError(f"{where} is a {type(panel).__name__}; give a dict with keys {', '.join(PANEL_KEYS)} "
                        "or a tuple (array, title, caption)")
    missing = [k for k in PANEL_KEYS if k not in panel]
    unknown = [k for k in panel if k not in PANEL_KEYS + PANEL_OPTIONS]
    if missing or unknown:
        raise ValueError(f"{where}: " + "; ".join(
            [f"missing {', '.join(missing)}"] * bool(missing) + [f"unknown {', '.join(map(str, unknown))}"] * bool(unknown))
            + f" (keys: {', '.join(PANEL_KEYS)}; optional: {', '.join(PANEL_OPTIONS)})")
    values = _array(panel["array"])
    if values.ndim != 2:
        raise ValueError(f"{where}: array has shape {values.shape}; give a 2-D (rows, cols) array")
    return {**panel, "array": values}


def attention_over_time(frames, steps, x_labels, y_labels, grad_norms, path=None, gif_path=None,
                        title="attention weights as training goes"):
    """Small multiples of one sentence's weights at several steps, and the gradient norm beside them.

    frames: (n, Tq, Tk) weights at `steps`; grad_norms: the norm of the gradient reaching the
    attention parameters at those steps. Writes a PNG to `path` and, if `gif_path`, an animated
    GIF with one frame per step (matplotlib's Pillow writer). Returns the PNG's figure.
    """
    frames = _array(frames)
    plt = _pyplot()
    n = len(frames)
    fig = plt.figure(figsize=(3.0 * (n + 1.3), 3.6))
    grid = fig.add_gridspec(1, n + 1, width_ratios=[1] * n + [1.3])
    for index, (weights, step) in enumerate(zip(frames, steps)):
        ax = fig.add_subplot(grid[0, index])
        image = ax.imshow(weights, cmap="viridis", vmin=0, vmax=1, aspect="auto")
        ax.set_title(f"step {step}", fontsize=9)
        ax.set_xticks(range(len(x_labels)), x_labels, rotation=70, fontsize=6)
        ax.set_yticks(range(len(y_labels)), y_labels if index == 0 else [""] * len(y_labels), fontsize=6)
    fig.colorbar(image, ax=ax, fraction=0.05, pad=0.04, label="weight (every panel: 0 to 1)")
    ax = fig.add_subplot(grid[0, n])
    ax.plot(steps, grad_norms, marker="o")
    ax.set_yscale("log")
    ax.set_xlabel("training step")
    ax.set_title("|gradient| reaching the attention\nparameters", fontsize=9)
    ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    if gif_path is not None:
        _animate(plt, frames, steps, x_labels, y_labels, gif_path)
    return _finish(plt, fig, path)


def _animate(plt, frames, steps, x_labels, y_labels, gif_path):
    from matplotlib.animation import FuncAnimation, PillowWriter

    fig, ax = plt.subplots(figsize=(5, 4.2))
    image = ax.imshow(frames[0], cmap="viridis", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(x_labels)), x_labels, rotation=70, fontsize=7)
    ax.set_yticks(range(len(y_labels)), y_labels, fontsize=7)
    fig.colorbar(image, ax=ax)
    fig.tight_layout()

    def show(index):
        image.set_data(frames[index])
        ax.set_title(f"training step {steps[index]}")
        return (image,)

    FuncAnimation(fig, show, frames=len(frames)).save(gif_path, writer=PillowWriter(fps=2))
    plt.close(fig)
