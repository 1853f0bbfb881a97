"""layer_norm: hints, worked solution, classic mistakes."""
from . import Mistake

HINTS = [
    "weight and bias first: each is used by every vector (every b, t), so their gradients sum over "
    "axes 0 and 1. Then call h = grad * weight, the gradient arriving at x_hat.",
    "x_hat = (x - mu) * s with s = 1 / sqrt(var + eps). x reaches x_hat three ways: directly, "
    "through mu and through var (so through s). Take them one at a time, per vector of N.",
    "Through mu: every x_j moves mu by 1/N, so the direct term loses its mean. Through var: "
    "d var/dx_j = 2 (x_j - mu) / N, and ds/dvar = -s^3 / 2. Collect terms and write them with x_hat.",
    "The three paths together give dL/dx = s * (h - mean(h) - x_hat * mean(h * x_hat)), the means "
    "over the last axis with keepdims=True.",
]


def backward(grad, cache):
    """With h = grad * weight and s = inv_std, the direct path gives h s; the mean's path subtracts
    mean(h) s (every x_j moves mu by 1/N); the variance's path subtracts x_hat mean(h x_hat) s
    (d s/d x_j = -s^3 (x_j - mu)/N). weight and bias served every vector: sum over those axes."""
    x_hat, inv_std, weight = cache
    N = x_hat.shape[-1]
    h = grad * weight
    d_x = inv_std * (h - h.mean(axis=-1, keepdims=True) - x_hat * (h * x_hat).mean(axis=-1, keepdims=True))
    return d_x, (grad * x_hat).reshape(-1, N).sum(axis=0), grad.reshape(-1, N).sum(axis=0)


def mistakes(grad, cache, inputs):
    x_hat, inv_std, weight = cache
    h = grad * weight
    mean_h = h.mean(axis=-1, keepdims=True)
    variance_term = x_hat * (h * x_hat).mean(axis=-1, keepdims=True)
    return [
        Mistake("x", h * inv_std, "yours is grad * weight / std: you treated the mean and the variance as "
                "constants. Both depend on x: add the paths through them"),
        Mistake("x", (h - mean_h) * inv_std, "yours has the path through the mean but not the one through the "
                "variance: std depends on x too, which brings a term in x_hat * mean(h * x_hat)"),
        Mistake("x", (h - variance_term) * inv_std, "yours has the path through the variance but not the one "
                "through the mean: every x_j moves the mean by 1/N, which subtracts mean(h)"),
        Mistake("weight", (grad * x_hat).sum(axis=-1), "yours sums over the last axis (the features): weight "
                "has one entry per feature, used by every vector, so sum over the other axes"),
    ]
