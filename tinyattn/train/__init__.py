"""Training helpers: checkpoints (ta.save / ta.load) and a progress line."""
from .checkpoint import CheckpointError, load, save
from .progress import Progress
