"""Four models written the way a PyTorch user writes them, not the way tinyattn's own code does:
the speed test on models nobody here tuned for (bench_outside_models.py times them).

Each class is written once, against the names `torch`, `nn` and `F`, and built twice: with
PyTorch's modules and with tinyattn's (or an older copy of tinyattn, for regressions). Where
tinyattn has no PyTorch name the user would type, `as_torch` maps it to what a tinyattn user
types instead (torch.bmm -> @, torch.tanh(x) -> x.tanh()). The architectures follow public
tutorials' habits:

- seq2seq: the PyTorch tutorial "NLP From Scratch: Translation with a Sequence to Sequence
  Network and Attention": EncoderRNN (Embedding, GRU) and the classic AttnDecoderRNN (attention
  weights from Linear(embedded ++ hidden) over MAX_LENGTH positions, softmax, bmm with the encoder
  outputs, attn_combine + relu, GRU, Linear out), teacher forcing one step at a time in Python.
  The tutorial's log_softmax + NLLLoss is written as cross_entropy (the same loss; tinyattn has
  no nn.NLLLoss), and its dropout is left out so that both engines compute the same numbers.
- attention_only: token embedding, 2 x (nn.MultiheadAttention with a residual, LayerNorm),
  mean over tokens, Linear head; batch 32 of 32 tokens, d 64.
- transformer: a 2-layer nn.TransformerEncoder classifier (learned positions, mean pooling).
- gru_attention: a GRU and additive (Bahdanau) attention written from primitives, one Linear
  per side of the GRU and the gates cut by slices, tanh, softmax and a batched matmul for the
  context: what a user writes after reading the equations.

Gate slices and .reshape stand where a user might type .chunk and .squeeze: the older trees
compared here (23529ae, e402398) have neither; 23529ae's GRU is batch-first without the keyword,
so tinyattn_trainer drops it there.
"""
import inspect
import operator
from types import SimpleNamespace

import numpy as np

SIZES = {
    "seq2seq": dict(batch=32, hidden=128, max_length=10, source_vocab=1200, target_vocab=1000),
    "attention_only": dict(batch=32, tokens=32, d=64, heads=4, vocab=200, classes=10),
    "transformer": dict(batch=32, tokens=32, d=64, heads=4, ff=256, layers=2, vocab=200, classes=10),
    "gru_attention": dict(batch=64, tokens=20, embed=32, hidden=64, attn=64, vocab=500, classes=5),
}
SOS = 0


def as_torch(ta):
    """The few top-level torch functions the models call, spelled as a tinyattn user spells them."""
    return SimpleNamespace(cat=lambda xs, dim: ta.cat(xs, dim), stack=lambda xs, dim: ta.stack(xs, dim),
                           zeros=lambda *shape: ta.zeros(*shape), bmm=operator.matmul,
                           tanh=lambda x: x.tanh(), sigmoid=lambda x: x.sigmoid(),
                           from_numpy=lambda a: ta.tensor(a))


def define(torch, nn, F):
    """The models' classes over one library: (torch, torch.nn, torch.nn.functional) or tinyattn's."""

    class EncoderRNN(nn.Module):
        def __init__(self, input_size, hidden_size):
            super().__init__()
            self.embedding = nn.Embedding(input_size, hidden_size)
            self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)

        def forward(self, input):
            output, hidden = self.gru(self.embedding(input))
            return output, hidden

    class AttnDecoderRNN(nn.Module):
        def __init__(self, hidden_size, output_size, max_length):
            super().__init__()
            self.max_length = max_length
            self.embedding = nn.Embedding(output_size, hidden_size)
            self.attn = nn.Linear(hidden_size * 2, max_length)
            self.attn_combine = nn.Linear(hidden_size * 2, hidden_size)
            self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
            self.out = nn.Linear(hidden_size, output_size)

        def forward(self, encoder_outputs, encoder_hidden, target_tensor, decoder_input):
            decoder_hidden, decoder_outputs = encoder_hidden, []
            for i in range(self.max_length):   # teacher forcing: the next input is the target
                decoder_output, decoder_hidden = self.forward_step(decoder_input, decoder_hidden, encoder_outputs)
                decoder_outputs.append(decoder_output)
                decoder_input = target_tensor[:, i].unsqueeze(1)
            return torch.cat(decoder_outputs, 1)

        def forward_step(self, input, hidden, encoder_outputs):
            embedded = self.embedding(input)                                         # (B, 1, H)
            attn_weights = F.softmax(self.attn(torch.cat((embedded[:, 0], hidden[0]), 1)), dim=1)
            attn_applied = torch.bmm(attn_weights.unsqueeze(1), encoder_outputs)     # (B, 1, H)
            output = F.relu(self.attn_combine(torch.cat((embedded, attn_applied), 2)))
            output, hidden = self.gru(output, hidden)
            return self.out(output), hidden

    class Seq2Seq(nn.Module):
        def __init__(self, batch, hidden, max_length, source_vocab, target_vocab):
            super().__init__()
            self.encoder = EncoderRNN(source_vocab, hidden)
            self.decoder = AttnDecoderRNN(hidden, target_vocab, max_length)

        def loss(self, source, target, sos):
            encoder_outputs, encoder_hidden = self.encoder(source)
            logits = self.decoder(encoder_outputs, encoder_hidden, target, sos)
            return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))

    class AttentionOnly(nn.Module):
        def __init__(self, batch, tokens, d, heads, vocab, classes):
            super().__init__()
            self.embed = nn.Embedding(vocab, d)
            self.attn1 = nn.MultiheadAttention(d, heads, batch_first=True)
            self.norm1 = nn.LayerNorm(d)
            self.attn2 = nn.MultiheadAttention(d, heads, batch_first=True)
            self.norm2 = nn.LayerNorm(d)
            self.head = nn.Linear(d, classes)

        def forward(self, x):
            h = self.embed(x)
            a, _ = self.attn1(h, h, h)
            h = self.norm1(h + a)
            a, _ = self.attn2(h, h, h)
            h = self.norm2(h + a)
            return self.head(h.mean(dim=1))

        def loss(self, x, y):
            return F.cross_entropy(self(x), y)

    class TransformerClassifier(nn.Module):
        def __init__(self, batch, tokens, d, heads, ff, layers, vocab, classes):
            super().__init__()
            self.embed = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(tokens, d)
            layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=ff, dropout=0.0, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, layers)
            self.head = nn.Linear(d, classes)
            self.positions = np.arange(tokens)

        def forward(self, x):
            h = self.embed(x) + self.pos(torch.from_numpy(self.positions))
            return self.head(self.encoder(h).mean(dim=1))

        def loss(self, x, y):
            return F.cross_entropy(self(x), y)

    class GRUAttentionClassifier(nn.Module):
        def __init__(self, batch, tokens, embed, hidden, attn, vocab, classes):
            super().__init__()
            self.hidden = hidden
            self.embed = nn.Embedding(vocab, embed)
            self.x2h = nn.Linear(embed, 3 * hidden)      # r | z | n gates, as PyTorch's GRU
            self.h2h = nn.Linear(hidden, 3 * hidden)
            self.W = nn.Linear(hidden, attn)             # score = v . tanh(W h_t)
            self.v = nn.Linear(attn, 1, bias=False)
            self.out = nn.Linear(hidden, classes)

        def forward(self, x):
            B, T = x.shape
            H = self.hidden
            emb = self.embed(x)
            h, states = torch.zeros(B, H), []
            for t in range(T):
                gx, gh = self.x2h(emb[:, t]), self.h2h(h)
                r = torch.sigmoid(gx[:, :H] + gh[:, :H])
                z = torch.sigmoid(gx[:, H:2 * H] + gh[:, H:2 * H])
                n = torch.tanh(gx[:, 2 * H:] + r * gh[:, 2 * H:])
                h = (1 - z) * n + z * h
                states.append(h)
            states = torch.stack(states, 1)                                    # (B, T, H)
            scores = self.v(torch.tanh(self.W(states))).reshape(B, T)
            weights = F.softmax(scores, dim=1)
            context = torch.bmm(weights.unsqueeze(1), states).reshape(B, H)    # (B, H)
            return self.out(context)

        def loss(self, x, y):
            return F.cross_entropy(self(x), y)

    return {"seq2seq": Seq2Seq, "attention_only": AttentionOnly, "transformer": TransformerClassifier,
            "gru_attention": GRUAttentionClassifier}


def batches(name, count=4, seed=0):
    """`count` batches of numpy int64 arrays for model `name` (random ids: speed does not need words)."""
    rng, s = np.random.default_rng(seed), SIZES[name]
    out = []
    for _ in range(count):
        if name == "seq2seq":
            out.append((rng.integers(0, s["source_vocab"], (s["batch"], s["max_length"])),
                        rng.integers(1, s["target_vocab"], (s["batch"], s["max_length"]))))
        else:
            out.append((rng.integers(0, s["vocab"], (s["batch"], s["tokens"])),
                        rng.integers(0, s["classes"], (s["batch"],))))
    return out


def trainer(name, torch, nn, F, optim, weights, data, compile=None):
    """(step, model): step(i) runs zero_grad, the loss on batch i, backward and an Adam step; returns
    the loss. The model starts from `weights` (its state_dict, in the library's own arrays).
    compile: ta.compile, to run those four as one compiled step with the batch as its arguments."""
    model = define(torch, nn, F)[name](**SIZES[name])
    model.load_state_dict(weights)
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    tensors = [tuple(torch.from_numpy(a) for a in batch) for batch in data]
    sos = torch.from_numpy(np.full((SIZES[name]["batch"], 1), SOS, dtype=np.int64))
    extra = (sos,) if name == "seq2seq" else ()

    def learn(*batch):
        optimizer.zero_grad()
        loss = model.loss(*batch, *extra)
        loss.backward()
        optimizer.step()
        return loss
    run = compile(learn) if compile else learn

    def step(i):
        return run(*tensors[i % len(tensors)]).item()

    return step, model


def torch_trainer(name, data, seed=0):
    """PyTorch's model (its own initialisation, seeded), its step, and its weights as numpy arrays."""
    import torch

    torch.manual_seed(seed)
    model_weights = define(torch, torch.nn, torch.nn.functional)[name](**SIZES[name]).state_dict()
    weights = {k: v.detach().numpy().copy() for k, v in model_weights.items()}
    step, _ = trainer(name, torch, torch.nn, torch.nn.functional, torch.optim,
                      {k: torch.from_numpy(v.copy()) for k, v in weights.items()}, data)
    return step, weights


def tinyattn_trainer(name, ta, weights, data, compiled=False):
    """The same model and step on tinyattn (or on an older copy of the package, `ta`); compiled=True:
    as a ta.compile'd step."""
    import importlib

    F = importlib.import_module(ta.__name__ + ".nn.functional")
    nn = ta.nn
    if "batch_first" not in inspect.signature(nn.GRU).parameters:  # 23529ae: batch first, no keyword
        nn = SimpleNamespace(**vars(ta.nn))
        nn.GRU = lambda *args, batch_first=True, **options: ta.nn.GRU(*args, **options)  # batch_first: none there
    step, _ = trainer(name, as_torch(ta), nn, F, ta.optim, weights, data, ta.compile if compiled else None)
    return step
