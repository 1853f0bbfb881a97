"""A PyTorch twin of nanoGPT's model (karpathy/nanoGPT model.py), transcribed small, for
tests/test_gpt.py and benchmarks/bench_gpt.py: the same module tree and parameter names, so
tinyattn's GPT state_dict loads into it as it is. rope=True replaces wpe by rotary positions on
q and k with the interleaved pairs of nn/positions.rotary (nanoGPT itself has no rope).
Needs torch; import it after pytest.importorskip("torch")."""
import torch
from torch import nn
from torch.nn import functional as F


def rotary(x, base=10000):
    """x (B, H, T, d): pairs (2i, 2i+1) turned by the angle t * base^(-2i/d) at position t."""
    T, d = x.shape[-2:]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = torch.arange(T, dtype=torch.float64)[:, None] * theta
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, bias, rope):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=bias)
        self.c_proj = nn.Linear(n_embd, n_embd, bias=bias)
        self.n_head, self.rope = n_head, rope

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        if self.rope:
            q, k = rotary(q), rotary(k)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class MLP(nn.Module):
    def __init__(self, n_embd, bias):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd, bias=bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * n_embd, n_embd, bias=bias)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, bias, rope):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd, bias=bias)
        self.attn = CausalSelfAttention(n_embd, n_head, bias, rope)
        self.ln_2 = nn.LayerNorm(n_embd, bias=bias)
        self.mlp = MLP(n_embd, bias)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size, n_layer=2, n_head=4, n_embd=64, bias=True, positions="learned"):
        super().__init__()
        rope = positions == "rope"
        parts = dict(wte=nn.Embedding(vocab_size, n_embd))
        if not rope:
            parts["wpe"] = nn.Embedding(block_size, n_embd)
        parts.update(h=nn.ModuleList(Block(n_embd, n_head, bias, rope) for _ in range(n_layer)),
                     ln_f=nn.LayerNorm(n_embd, bias=bias))
        self.transformer = nn.ModuleDict(parts)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # nanoGPT's weight tying
        self.rope = rope

    def forward(self, idx, targets=None):
        T = idx.shape[1]
        x = self.transformer.wte(idx)
        if not self.rope:
            x = x + self.transformer.wpe(torch.arange(T))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        if targets is None:
            return logits
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)


def twin_of(model, dtype=torch.float32):
    """A twin of tinyattn's GPT `model` holding its weights (loaded strictly from its state_dict)."""
    twin = GPT(model.vocab_size, model.block_size, model.n_layer, model.n_head, model.n_embd,
               bias=model.transformer.ln_f.bias is not None,
               positions=model.positions).to(dtype)
    twin.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in model.state_dict().items()}, strict=True)
    return twin


def decay_groups(named_parameters, weight_decay):
    """nanoGPT's configure_optimizers: matrices and embeddings decay, biases and LayerNorm weights do not."""
    params = [p for _, p in named_parameters]
    return [{"params": [p for p in params if p.ndim >= 2], "weight_decay": weight_decay},
            {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0}]

