# No BLAS thread setting: the suite runs as a user's script does (importing tinyattn sets none; fit
# and the demos set their own), and on 2 busy cores numpy's default ran the heaviest test files
# faster than one thread did (pytest time 93-164 s against 135-217 s, three interleaved rounds).
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
