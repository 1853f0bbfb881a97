"""The cells of notebook 04, "GPT from the engine up" (notebooks/build.py writes and runs it).

For a learner who has watched a "build GPT from scratch" lecture: the causal mask, one head by
hand against nn.MultiheadAttention and ta.models.GPT's attention, the key/value cache, sampling,
and an induction head. Kept quick (a few seconds): the test suite runs it on every change.
"""


def cells(setup):
    """[(kind, source)] in order, kind "md" or "code"; `setup` is build.py's first code cell."""
    return [
        ("md", """# GPT from the engine up

A GPT reads a sequence of tokens and, at every position, scores which token comes next. Its core is
causal self-attention: each position reads itself and the positions before it, never after. This
notebook takes the pieces a "build GPT from scratch" lecture puts together and checks each one with
the engine: the causal mask, one attention head written out by hand against `nn.MultiheadAttention`
and against the attention of `ta.models.GPT` (which follows Andrej Karpathy's
[nanoGPT](https://github.com/karpathy/nanoGPT): the same architecture and parameter names), the
key/value cache that makes generation fast, sampling with a temperature and top-k, and last an
*induction head* (Olsson et al. 2022, ["In-context Learning and Induction Heads"](https://transformer-circuits.pub/2022/in-context-learning-and-induction-heads/index.html)),
found in a tiny trained model by looking at where its heads attend."""),
        ("code", setup),
        ("md", """## 1. The causal mask

Position t predicts the token at t + 1, so it must not see that token, or any later one: during
training all positions are computed at once, and a position that could read ahead would learn to
copy the answer. The mask is the lower triangle `ta.tril(ones)`: 1 where a query (row) may read a
key (column). Scores where it is 0 are set to -inf with `masked_fill` (True = fill, as PyTorch),
so the softmax gives them weight exactly 0 and each row's weights, over the positions it may read,
still sum to 1."""),
        ("code", """T = 5
tril = ta.tril(ta.ones(T, T))                  # 1 on and below the diagonal
ta.manual_seed(0)
scores = ta.randn(T, T)                        # stand-ins for q . k / sqrt(d)
weights = scores.masked_fill(tril == 0, float("-inf")).softmax(-1)
print(tril)
print("each row sums to", weights.sum(-1))
words = ["the", "cat", "sat", "on", "the"]
ta.viz.attention_heatmap(weights, words, words, title="causal softmax: row t reads positions 0 .. t")
plt.show()"""),
        ("md", """The mask is a promise about the gradient too: output t does not depend on x_s for any s > t,
so d out_t / d x_s must be exactly 0 there. Ask the engine: backpropagate from output t = 2 alone and
read `x.grad`; its rows 3 and 4 must be zero. Then do it for every t and collect the size of each
row of `x.grad`: the picture of what can influence what must be the lower triangle."""),
        ("code", """x = ta.randn(T, 4, dtype=np.float64, requires_grad=True)

def causal_attention(x):
    scores = x @ x.T / np.sqrt(x.shape[-1])           # queries, keys and values all x: enough here
    return scores.masked_fill(tril == 0, float("-inf")).softmax(-1) @ x

causal_attention(x)[2].sum().backward()
print("x.grad after backpropagating from output 2 (rows 3 and 4 are later tokens):")
print(x.grad)
reach = np.zeros((T, T))
for t in range(T):
    x.grad = None
    causal_attention(x)[t].sum().backward()
    reach[t] = np.abs(x.grad).sum(-1)                 # row s: how much out_t moves with x_s
print("sum of |d out_t / d x_s| (rows t, columns s):")
print(reach)
assert np.all(reach[np.triu_indices(T, 1)] == 0) and np.all(reach[np.tril_indices(T)] > 0)"""),
        ("md", """## 2. One head by hand, against `nn.MultiheadAttention` and nanoGPT's attention

One attention head: q = x W_q, k = x W_k, v = x W_v; scores = q k^T / sqrt(d); the causal softmax;
the weighted sum of the values; and an output projection W_o. `nn.MultiheadAttention` stores the
three input matrices packed in one `in_proj_weight` of shape (3C, C), in `nn.Linear`'s layout
(out, in), so each block is the transpose of our W, and it wants PyTorch's mask polarity there
(True = hidden). nanoGPT's `CausalSelfAttention` packs them the same way in `c_attn.weight` and
calls W_o `c_proj`. Load the same numbers into all three and compare outputs, then gradients of
L = sum(G * out) for a random G, in float64."""),
        ("code", """C = 8
rng = np.random.default_rng(0)
W_q, W_k, W_v, W_o = (rng.standard_normal((C, C)) / np.sqrt(C) for _ in range(4))
X, G = rng.standard_normal((1, T, C)), rng.standard_normal((1, T, C))

def one_head(x, w_q, w_k, w_v, w_o):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.transpose(-2, -1) / np.sqrt(q.shape[-1])
    weights = scores.masked_fill(tril == 0, float("-inf")).softmax(-1)
    return (weights @ v) @ w_o

x = ta.tensor(X, requires_grad=True)
ws = [ta.tensor(W, requires_grad=True) for W in (W_q, W_k, W_v, W_o)]
out = one_head(x, *ws)
out.backward(G)
packed = np.concatenate([W_q.T, W_k.T, W_v.T])      # (3C, C): rows 0..C-1 make q, then k, then v

mha = nn.MultiheadAttention(C, num_heads=1, bias=False, batch_first=True).double()
mha.load_state_dict({"in_proj_weight": packed, "out_proj.weight": W_o.T})
x_mha = ta.tensor(X, requires_grad=True)
hidden = ta.triu(ta.ones(T, T), diagonal=1) == 1   # True = may NOT attend, nn.MultiheadAttention's polarity
out_mha, _ = mha(x_mha, x_mha, x_mha, attn_mask=hidden, need_weights=False)
out_mha.backward(G)

gpt = ta.models.GPT(vocab_size=10, block_size=T, n_layer=1, n_head=1, n_embd=C, bias=False).double()
attn = gpt.transformer.h[0].attn                   # nanoGPT's transformer.h.0.attn
attn.load_state_dict({"c_attn.weight": packed, "c_proj.weight": W_o.T})
x_gpt = ta.tensor(X, requires_grad=True)
out_gpt = attn(x_gpt)
out_gpt.backward(G)

def gap(a, b):
    return float(np.abs(a - b).max())

rows = [("output", out.data, out_mha.data, out_gpt.data), ("dL/dx", x.grad, x_mha.grad, x_gpt.grad)]
for i, name in enumerate(("W_q", "W_k", "W_v")):
    rows.append((f"dL/d{name}", ws[i].grad, mha.in_proj_weight.grad[i * C:(i + 1) * C].T,
                 attn.c_attn.weight.grad[i * C:(i + 1) * C].T))
rows.append(("dL/dW_o", ws[3].grad, mha.out_proj.weight.grad.T, attn.c_proj.weight.grad.T))
print(f"{'':9s} {'largest gap to MultiheadAttention':>35s} {'to GPT CausalSelfAttention':>28s}")
for name, hand, theirs, gpts in rows:
    print(f"{name:9s} {gap(hand, theirs):35.1e} {gap(hand, gpts):28.1e}")
    assert gap(hand, theirs) < 1e-12 and gap(hand, gpts) < 1e-12"""),
        ("md", """## 3. The key/value cache

To write a text, a GPT draws one token, appends it, and runs again. Run naively (as nanoGPT's
`generate` does), each step recomputes every position of the context, though only the new last position's logits are used and
every earlier key and value is the same as the step before (the causal mask guarantees it: earlier
positions never read the new token). The cache keeps each layer's keys and values; a new token
computes only its own q, k and v and attends to the cached ones. First a tiny GPT learns a few
sentences (character by character, a couple of seconds), then `generate` with and without the
cache must write the same text."""),
        ("code", """text = "the cat sat on the mat. the dog sat on the log. the cat and the dog sat on the mat. "
chars = sorted(set(text))
encode = lambda s: np.array([chars.index(c) for c in s])
decode = lambda ids: "".join(chars[i] for i in ids)
data = encode(text * 4)
ta.manual_seed(0)
rng = np.random.default_rng(0)
model = ta.models.GPT(len(chars), block_size=32, n_layer=2, n_head=2, n_embd=32)
optimizer = ta.optim.AdamW(model.parameters(), lr=1e-2)
for step in range(120):
    starts = rng.integers(0, len(data) - 33, 16)
    xb = np.stack([data[s:s + 32] for s in starts])
    yb = np.stack([data[s + 1:s + 33] for s in starts])   # the next character at every position
    logits, loss = model(xb, yb)
    optimizer.zero_grad(); loss.backward(); optimizer.step()
print(f"loss after 120 steps: {loss.item():.3f} (ln {len(chars)} = {np.log(len(chars)):.2f} for a blind guess)")
model.eval()
prompt = encode("the ")[None]                       # (1, 4): a batch of one
with_cache = model.generate(prompt, 40, use_cache=True, rng=np.random.default_rng(1))
without = model.generate(prompt, 40, use_cache=False, rng=np.random.default_rng(1))
print("with the cache:   ", repr(decode(with_cache[0])))
print("without the cache:", repr(decode(without[0])))
assert (with_cache == without).all()"""),
        ("md", """Now one cached step by hand, for the whole model: the new token's embedding, then in each layer
its q, k, v from `c_attn`, its k and v appended to that layer's cache, and its query against every
cached key. No mask is needed: the cache holds only the past. Feeding a prompt one token at a time
this way must give, at each step, the row of logits the full forward computes for that position."""),
        ("code", """@ta.no_grad()
def cached_step(model, token, position, cache):
    \"\"\"Logits (vocab,) for the token after `token` at `position`; cache: per layer ([keys], [values]).\"\"\"
    C, H = model.n_embd, model.n_head
    d = C // H
    x = model.transformer.wte(np.array([token])) + model.transformer.wpe(np.array([position]))  # (1, C)
    for block, (keys, values) in zip(model.transformer.h, cache):
        q, k, v = block.attn.c_attn(block.ln_1(x)).split(C, dim=-1)   # (1, C) each
        keys.append(k); values.append(v)
        K, V = ta.cat(keys), ta.cat(values)                            # (position + 1, C)
        q, K, V = (a.reshape(-1, H, d).transpose(0, 1) for a in (q, K, V))   # heads first: (H, ., d)
        weights = (q @ K.transpose(1, 2) / np.sqrt(d)).softmax(-1)    # (H, 1, position + 1)
        x = x + block.attn.c_proj((weights @ V).transpose(0, 1).reshape(1, C))
        x = x + block.mlp(block.ln_2(x))
    return model.lm_head(model.transformer.ln_f(x))[0]

tokens = encode("the cat sat on")
cache = [([], []) for _ in model.transformer.h]
stepped = np.stack([cached_step(model, t, p, cache).data for p, t in enumerate(tokens)])
with ta.no_grad():
    logits, _ = model(tokens[None])                    # nanoGPT's pair: (logits, loss or None)
    full = logits[0].data                              # (T, vocab): every position at once
print("last row, one cached step:", stepped[-1, :6].round(3), "...")
print("last row, full forward:   ", full[-1, :6].round(3), "...")
print(f"largest gap over all {len(tokens)} rows: {gap(stepped, full):.1e}   (float32)")
assert gap(stepped, full) < 1e-4"""),
        ("md", """The work it saves, in entries of q k^T per head and per layer: without the cache, the step that
reads a context of T tokens computes the whole T x T score matrix again (the masked half too: a
matrix product computes it); with it, one row of T. Over a whole text of T tokens that is
1^2 + 2^2 + ... + T^2 (about T^3 / 3) against 1 + 2 + ... + T (about T^2 / 2)."""),
        ("code", """print(f"{'T':>5s} {'one step: no cache':>19s} {'cache':>6s}   {'a text of T tokens: no cache':>29s} {'cache':>8s}")
for n in (16, 128, 1024):                               # 1024: GPT-2's context
    steps = np.arange(1, n + 1)
    print(f"{n:5d} {n * n:19d} {n:6d}   {int((steps ** 2).sum()):29d} {int(steps.sum()):8d}")"""),
        ("md", """## 4. Sampling: temperature and top-k

The model's last row of logits becomes a distribution over the next token by a softmax of
logits / temperature. A temperature below 1 sharpens it toward the likeliest token, above 1
flattens it; its entropy (-sum p ln p, in nats) measures how spread it is. Top-k keeps only the k
largest logits (the rest set to -inf) before the softmax, so a draw never picks an unlikely tail
token. Here, after "the cat sat on the mat. the ", the model has learned a few candidates."""),
        ("code", """with ta.no_grad():
    logits = model(encode("the cat sat on the mat. the ")[None])[0][0, -1]   # (vocab,): batch 0's last row

def entropy(p):
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())

fig, ax = plt.subplots(figsize=(9, 3))
entropies = {}
for i, temperature in enumerate((0.5, 1.0, 2.0)):
    p = (logits / temperature).softmax(-1).data
    entropies[temperature] = entropy(p)
    ax.bar(np.arange(len(chars)) + (i - 1) * 0.28, p, width=0.28,
           label=f"temperature {temperature}: entropy {entropies[temperature]:.2f} nats")
ax.set_xticks(range(len(chars)), [repr(c)[1:-1] or "' '" for c in chars])
ax.set_ylabel("p(next character)"); ax.legend(fontsize=8); ax.set_title('after "... the "', fontsize=9)
plt.show()
print({t: round(e, 3) for t, e in entropies.items()}, " ln(vocab) =", round(np.log(len(chars)), 3))
assert entropies[0.5] < entropies[1.0] < entropies[2.0] < np.log(len(chars))"""),
        ("code", """k = 3
p = logits.softmax(-1)
values, indices = logits.topk(k)                       # the k largest logits and where they are
print("top", k, "characters:", [chars[i] for i in indices.data], " their probabilities:", p.data[indices.data])
mass = p.data[indices.data].sum()
print(f"top-{k} keeps {mass:.4f} of the probability; the rest, {1 - mass:.4f}, can no longer be drawn")
kept = logits.masked_fill(logits < values[-1], float("-inf")).softmax(-1)
print("after top-k the kept three are rescaled to sum to 1:", kept.data[indices.data])
assert np.allclose(kept.data[indices.data], p.data[indices.data] / mass, atol=1e-6)
draws = ta.multinomial(kept, 1000, replacement=True, generator=np.random.default_rng(0))
print("1000 draws:", {chars[i]: int((draws.data == i).sum()) for i in indices.data})
assert set(draws.data.tolist()) <= set(indices.data.tolist())"""),
        ("md", """A draw is made from a numpy random Generator: the same generator state gives the same text,
which makes a result repeatable; another state, another text."""),
        ("code", """prompt = encode("the ")[None]
first = model.generate(prompt, 30, temperature=0.8, top_k=5, rng=np.random.default_rng(42))
again = model.generate(prompt, 30, temperature=0.8, top_k=5, rng=np.random.default_rng(42))
other = model.generate(prompt, 30, temperature=2.0, rng=np.random.default_rng(7))
print("rng 42:          ", repr(decode(first[0])))
print("rng 42 again:    ", repr(decode(again[0])))
print("rng 7, hotter:   ", repr(decode(other[0])))
assert (first == again).all()"""),
        ("md", """## 5. An induction head, found by looking at where it attends

Olsson et al. 2022 ([In-context Learning and Induction Heads](https://transformer-circuits.pub/2022/in-context-learning-and-induction-heads/index.html))
describe a two-head circuit that lets a Transformer continue a pattern it has seen earlier in
its context: at a token A, look back for an earlier A, and predict the token B that followed it
(... A B ... A -> B). A *previous-token head* in the first layer writes "the token before me was A"
into each position; an *induction head* in the second layer, at A, looks for that message and so
attends to the position right after the earlier A, and copies its token. We train the smallest
model that can do it: two layers of causal attention, no MLP, no LayerNorm (a short version of
`demos/induction_heads.py`), on sequences of random tokens repeated once. The first half cannot be
predicted; the repeated half can, by copying. Halves of 4 to 12 tokens, so no fixed distance can
be learned instead."""),
        ("code", """class AttentionOnly(nn.Module):
    \"\"\"Token + position embeddings, x = x + attention(x) twice (causal), then logits.\"\"\"

    def __init__(self, vocab_size, max_len, d_model=32, nhead=2):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.positions = nn.Embedding(max_len, d_model)
        self.layers = nn.ModuleList([nn.MultiheadAttention(d_model, nhead, bias=False, batch_first=True)
                                     for _ in range(2)])
        self.unembed = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, tokens):
        T = tokens.shape[1]
        x = self.embed(tokens) + self.positions(np.arange(T))
        hidden = ta.triu(ta.ones(T, T), diagonal=1) == 1   # True = may not attend (PyTorch's polarity)
        for attention in self.layers:
            x = x + attention(x, x, x, attn_mask=hidden, need_weights=False)[0]
        return self.unembed(x)

V = 32                                               # random tokens 0..31; 32 marks the start
rng = np.random.default_rng(0)

def repeated(n, half):
    first = rng.random((n, V)).argsort(axis=1)[:, :half]             # `half` different tokens
    return np.concatenate([np.full((n, 1), V), first, first], axis=1)  # start, them, them again

def repeated_half_loss(model, tokens, half):         # predicting tokens half + 2 .. 2 half
    with ta.no_grad():
        return F.cross_entropy(model(tokens)[:, half + 1:-1].transpose(1, 2), tokens[:, half + 2:]).item()

ta.manual_seed(0)
tiny = AttentionOnly(V + 1, max_len=2 * 12 + 1)
optimizer = ta.optim.Adam(tiny.parameters(), lr=5e-3)
L, test = 8, repeated(200, 8)
print(f"repeated half's loss before training: {repeated_half_loss(tiny, test, L):.3f} (ln V = {np.log(V):.3f})")
for step in range(1000):
    tokens = repeated(32, int(rng.integers(4, 13)))
    loss = F.cross_entropy(tiny(tokens)[:, :-1].transpose(1, 2), tokens[:, 1:])   # every next token (classes on axis 1, as PyTorch)
    optimizer.zero_grad(); loss.backward(); optimizer.step()
after = repeated_half_loss(tiny, test, L)
print(f"repeated half's loss after 1000 steps: {after:.3f}")
assert after < 0.5"""),
        ("md", """Every head's attention on one sequence (start, 8 tokens, the same 8 again). A token in the
repeated half at position p is the token at p - 8; the token after that earlier copy is at p - 7.
An induction head therefore draws a diagonal 7 = L - 1 below the main one, in the lower-left
block; a previous-token head draws the diagonal just below the main one. The prefix-matching
score of a head is its mean weight on that shifted diagonal, over 200 sequences; the
previous-token score its mean weight from position i to i - 1 in the first half."""),
        ("code", """attention = nn.keep_attention_weights(tiny)       # each layer keeps its last attention weights
with ta.no_grad():
    tiny(test)
labels = ["start"] + [str(t) for t in test[0, 1:]]
for layer in range(2):
    ta.viz.attention_heatmap(attention[f"layers.{layer}"].last_weights[0], labels, labels, vmax=1,
                             title=f"layer {layer}: each head's attention on one repeated sequence")
    plt.show()

p = np.arange(L + 1, 2 * L + 1)                      # the repeated half's positions
i = np.arange(2, L + 1)                              # the first half's, after its first token
scores = {}
for layer in range(2):
    w = attention[f"layers.{layer}"].last_weights     # (200, heads, T, T)
    for h in range(w.shape[1]):
        scores[f"layer {layer} head {h}"] = (w[:, h, i, i - 1].mean(), w[:, h, p, p - L + 1].mean())
print(f"{'':14s} {'previous-token':>15s} {'prefix-matching':>16s}")
for head, (previous, prefix) in scores.items():
    print(f"{head:14s} {previous:15.2f} {prefix:16.2f}")
induction = max(scores, key=lambda head: scores[head][1])
previous = max(scores, key=lambda head: scores[head][0])
print(f"the best induction head: {induction} (prefix-matching {scores[induction][1]:.2f}); the best"
      f" previous-token head: {previous}")
print("heads with a prefix-matching score above 0.5:", [head for head in scores if scores[head][1] > 0.5])
assert induction.startswith("layer 1") and scores[induction][1] > 0.5 and previous.startswith("layer 0")"""),
        ("md", """The induction head needs the previous-token head: its keys are built from what the first layer
wrote. Neither helps without the other, which is why they form together, in a sudden drop of the
repeated half's loss (the *phase change* of Olsson et al.). `python demos/induction_heads.py`
trains a larger version, draws that drop, and takes the previous-token head out of what the second
layer reads to show which of its keys, queries or values depend on it."""),
    ]
