"""Pictures of what attention learned. matplotlib is imported only when a picture is drawn."""
from .heatmaps import attention_heatmap, positional_encoding_picture
from .learning import attention_over_time, gradient_panels
