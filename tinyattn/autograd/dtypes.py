"""dtype names as PyTorch spells them (ta.float32 is numpy's float32), for dtype= and .to()."""
import numpy as np

float16, float32, float64 = np.float16, np.float32, np.float64
int32, int64 = np.int32, np.int64
bool = np.bool_  # noqa: A001  (shadows the builtin only inside this module, as torch.bool does)
