"""nn.keep_attention_weights: switch on, for every MultiheadAttention inside a model, the keeping
of each call's weights (MultiheadAttention's keep_weights, last_weights, last_tensors).
"""
from .multihead import MultiheadAttention


def keep_attention_weights(model, on=True):
    """Make every MultiheadAttention inside `model` keep its last (B, H, Tq, Tk) weights (or stop).

    Returns {dotted name: module}; after a forward, module.last_weights holds the picture
    (and under ta.fused(False), module.last_tensors the scores and weights as graph Tensors):
        attn = nn.keep_attention_weights(model); model(x)
        ta.viz.attention_heatmap(attn["layers.0.self_attn"].last_weights[0], ...)
    """
    found = {name: m for name, m in model.named_modules() if isinstance(m, MultiheadAttention)}
    if not found:
        raise ValueError(f"keep_attention_weights: no MultiheadAttention inside {type(model).__name__}")
    for module in found.values():
        module.keep_weights = on
        if not on:
            module.last_weights = module.last_tensors = None
    return found
