"""Training helpers: checkpoints (ta.save / ta.load)."""
from .checkpoint import CheckpointError, load, save
