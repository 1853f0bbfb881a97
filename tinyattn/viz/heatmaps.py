"""Attention weights and positional encodings as heatmaps (PNG files or matplotlib figures)."""
import numpy as np


def _pyplot():
    # Imported here, not at the top: `import tinyattn` must not pay for matplotlib. Without a
    # screen, matplotlib picks its file-only Agg backend by itself.
    import matplotlib.pyplot as plt

    return plt


# Signed values (gradients, encodings) in every picture and notebook: positive red, negative blue,
# 0 white; draw with vmin=-top, vmax=top so that white is 0
SIGNED_CMAP = "RdBu_r"
MAX_INCHES = 12.0  # the largest side of a heatmap figure: a 50-word sentence still fits a screen


def _array(weights):
    return np.asarray(getattr(weights, "data", weights), dtype=np.float64)


def attention_heatmap(weights, x_labels=None, y_labels=None, path=None, title=None,
                      xlabel="attended to (keys)", ylabel="query", vmax=None):
    """Draw attention weights (Tq, Tk), or one panel per head for (H, Tq, Tk).

    x_labels name the keys (columns, what is attended to), y_labels the queries (rows);
    xlabel / ylabel name the two axes. vmax: the weight drawn brightest, one for every panel
    (so one colour means one weight everywhere); by default each panel's own largest. The figure
    grows with the weights up to MAX_INCHES a side; past that the cells shrink.
    Saves a PNG to `path` if given (and closes the figure); returns the figure.
    """
    weights = _array(weights)
    if weights.ndim == 2:
        weights = weights[None]
    if weights.ndim != 3:
        raise ValueError(f"attention_heatmap: weights must be (Tq, Tk) or (heads, Tq, Tk), got {weights.shape}")
    heads, Tq, Tk = weights.shape
    for name, labels, n in (("x_labels", x_labels, Tk), ("y_labels", y_labels, Tq)):
        if labels is not None and len(labels) != n:
            raise ValueError(f"attention_heatmap: {len(labels)} {name} for {n} {'keys' if name[0] == 'x' else 'queries'}")
    plt = _pyplot()
    columns = min(heads, 4)
    rows = -(-heads // columns)
    # cells of 0.45 inch, smaller where that would pass MAX_INCHES: the figure is laid out at the
    # size it is saved at (shrinking it after tight_layout would slide the title over the top row)
    cell = min(0.45, (MAX_INCHES / columns - 2.0) / Tk, (MAX_INCHES / rows - 1.6) / Tq)
    fig, axes = plt.subplots(rows, columns, squeeze=False,
                             figsize=(max(5.0, columns * (Tk * cell + 2.0)), max(3.0, rows * (Tq * cell + 1.6))))
    labels_size = min(10.0, 40 * cell)  # points: a label no taller than its cell (0.45 inch: matplotlib's 10)
    for h, ax in enumerate(axes.flat):
        if h >= heads:
            ax.axis("off")
            continue
        top = max(1e-12, weights[h].max() if vmax is None else vmax)
        image = ax.imshow(weights[h], cmap="viridis", vmin=0, vmax=top, aspect="auto")
        if Tq * Tk <= 64:  # small enough to print each weight in its cell
            for (i, j), w in np.ndenumerate(weights[h]):
                ax.text(j, i, f"{w:.2f}", ha="center", va="center", fontsize=8,
                        color="black" if w > 0.6 * top else "white")
        ax.set_xticks(range(Tk), x_labels if x_labels is not None else range(Tk), rotation=60, ha="right",
                      fontsize=labels_size)
        ax.set_yticks(range(Tq), y_labels if y_labels is not None else range(Tq), fontsize=labels_size)
        ax.set_xlabel(xlabel)
        if h % columns == 0:
            ax.set_ylabel(ylabel)
        if heads > 1:
            ax.set_title(f"head {h}")
        fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return _finish(plt, fig, path)


def positional_encoding_picture(table, path=None, title="sinusoidal positional encoding"):
    """The (positions, embed_dim) table as an image: each row is where a token is, coded as waves."""
    table = _array(table)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4))
    image = ax.imshow(table, cmap=SIGNED_CMAP, vmin=-1, vmax=1, aspect="auto")
    ax.set_xlabel("dimension (even: sin, odd: cos)")
    ax.set_ylabel("position")
    ax.set_title(title)
    fig.colorbar(image, ax=ax)
    fig.tight_layout()
    return _finish(plt, fig, path)


def _finish(plt, fig, path):
    if path is not None:
        fig.savefig(path, dpi=110)
        plt.close(fig)
    return fig
