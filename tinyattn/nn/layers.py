"""Small modules without weights: Dropout and the activations, wrappers of nn.functional."""
from . import functional as F
from .gelu import APPROXIMATIONS
from .module import Module


class Dropout(Module):
    """Zeroes elements with probability p while training; the identity in eval()."""

    def __init__(self, p=0.5):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"Dropout: p must be in [0, 1], got {p}")
        self.p = p

    def forward(self, x):
        return F.dropout(x, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}"


class ReLU(Module):
    """max(x, 0) element-wise, any shape (F.relu)."""
    def forward(self, x):
        return x.relu()


class GELU(Module):
    """x * Phi(x), Phi the standard normal CDF (F.gelu); approximate="tanh" for the tanh form."""

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in APPROXIMATIONS:
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x, self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    """tanh element-wise, any shape."""
    def forward(self, x):
        return x.tanh()


class Sigmoid(Module):
    """1 / (1 + e^-x) element-wise, any shape."""
    def forward(self, x):
        return x.sigmoid()
