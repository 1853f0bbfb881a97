import os

# One BLAS thread for the whole suite, as the demos set for themselves: the suite's products are
# small, and two threads handing off each one run many times slower on a busy machine.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import pytest
from hypothesis import settings

from tinyattn.ops import use_backend

# A first call may JIT-compile a kernel: no deadline, and the same examples on every run.
settings.register_profile("tinyattn", deadline=None, derandomize=True, max_examples=25)
settings.load_profile("tinyattn")


@pytest.fixture(autouse=True)
def _backend_from_marker(request):
    """Tests marked numpy_backend run with every kernel on its numpy reference."""
    if request.node.get_closest_marker("numpy_backend"):
        with use_backend("numpy"):
            yield
    else:
        yield


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
