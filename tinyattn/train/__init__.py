"""Training: the loop (fit), checkpoints (ta.save / ta.load) and a progress line."""
from .checkpoint import CheckpointError, load, save
from .compile_notice import compile_notice
from .loop import History, fit
from .progress import Progress
