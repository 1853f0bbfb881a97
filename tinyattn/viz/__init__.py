"""Pictures of what attention learned, and of the graph backward walks (matplotlib is imported
only when a picture is drawn), and pages that open in a browser (pages.py: no matplotlib, no network)."""
from .graph import draw_graph
from .heatmaps import SIGNED_CMAP, attention_heatmap, positional_encoding_picture
from .learning import attention_over_time, gradient_panels
from .pages import attention_page, walk_page
