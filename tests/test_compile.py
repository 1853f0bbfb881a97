"""ta.compile: a compiled step gives an eager step's numbers, bit for bit, on every model of the suite.

Each model trains 20+ steps eagerly and compiled, from the same seed, on batches that change every
step (same shapes, so one signature): losses, gradients, parameters, Adam's state and the dropout
masks must be identical, and the compiled run must have replayed (a guard that changes every step
would make it fall back: the test fails on any warning).
"""
import io
import itertools
import warnings

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F

STEPS = 22


def _train(build, batch, compiled, steps=STEPS, fused=True):
    ta.manual_seed(0)
    model, loss_fn = build()
    opt = ta.optim.Adam(model.parameters(), lr=3e-3)
    params = model.parameters()

    def step(*inputs):
        opt.zero_grad()
        loss = loss_fn(model, *inputs)
        loss.backward()
        opt.step()
        return loss

    run = ta.compile(step) if compiled else step
    rng = np.random.default_rng(5)
    history = []
    with warnings.catch_warnings(), ta.fused(fused):
        warnings.simplefilter("error")  # a step that falls back to eager says so in a warning
        for _ in range(steps):
            loss = run(*batch(rng))
            history.append((loss.item(), [p.grad.copy() for p in params], [p.data.copy() for p in params]))
    state = [{k: np.copy(v) for k, v in s.items()} for s in opt.state]
    return history, state, run


def _same_training(build, batch, fused=True):
    eager, eager_state, _ = _train(build, batch, False, fused=fused)
    compiled, compiled_state, run = _train(build, batch, True, fused=fused)
    for step, ((la, ga, pa), (lb, gb, pb)) in enumerate(zip(eager, compiled)):
        assert la == lb, f"step {step}: loss {la} eager, {lb} compiled"
        for i, (x, y) in enumerate(zip(ga, gb)):
            assert np.array_equal(x, y), f"step {step}: gradient of parameter {i} differs"
        for i, (x, y) in enumerate(zip(pa, pb)):
            assert np.array_equal(x, y), f"step {step}: parameter {i} differs"
    for a, b in zip(eager_state, compiled_state):
        assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    replays = sum(entry.replays for entry in run.entries.values())
    assert replays >= STEPS - 2, run.explain()  # calls 1 and 2 capture, the rest replay
    return run


def _tokens(vocab, lengths_from=2):
    """A batch maker: (tokens (B, T) padded with 0, lengths (B,)), lengths changing every step."""
    def make(rng, batch=6, length=7):
        lengths = rng.integers(lengths_from, length + 1, batch)
        lengths[0] = length  # one full row: the padded length stays T
        tokens = rng.integers(1, vocab, (batch, length))
        tokens[np.arange(length)[None, :] >= lengths[:, None]] = 0
        return tokens, lengths
    return make


def test_mlp_with_dropout():
    def build():
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 4))
        return model, lambda m, x, y: F.cross_entropy(m(x), y)
    _same_training(build, lambda rng: (ta.tensor(rng.standard_normal((32, 8)).astype(np.float32)),
                                        rng.integers(0, 4, 32)))


def _translation_batch(rng):
    source, lengths = _tokens(11, 3)(rng)
    target, _ = _tokens(9, 3)(rng, length=6)
    target[:, 0] = 1
    return source, lengths, target


@pytest.mark.parametrize("fused", [True, False])
def test_gru_additive_attention_seq2seq(fused):
    def build():
        model = ta.models.Seq2Seq(11, 9, pad_id=0, bos_id=1, eos_id=2, embed_dim=8, hidden_size=12)
        return model, lambda m, s, l, t: m.loss(s, l, t)
    _same_training(build, _translation_batch, fused=fused)


def test_seq2seq_on_batches_whose_longest_target_is_shorter_than_the_width():
    """Batches of one width (as length-bucketed batches are) whose longest sentences change: the
    fused encoder and decoder run fewer steps, and their rules, run whole, used a number of
    registers inside that changed with them. Two captures were compared by register number, differed, and the step ran
    eagerly with a warning (translate.py's Bahdanau decoder on bucketed batches)."""
    calls = itertools.count()

    def batch(rng):
        lengths = rng.integers(3, 7, 6)  # source rows of 3 to 6 words, width 7
        source = rng.integers(3, 11, (6, 7))
        source[np.arange(7)[None, :] >= lengths[:, None]] = 0
        target = rng.integers(3, 9, (6, 6))
        ends = rng.integers(3, 6, 6)  # no row fills the width: the last steps run for nobody ...
        ends = np.minimum(ends, 5 if next(calls) % 2 else 3)  # ... and the longest changes from call to call
        target[np.arange(6)[None, :] >= ends[:, None]] = 0
        target[:, 0] = 1
        return source, lengths, target

    def build():
        model = ta.models.Seq2Seq(11, 9, pad_id=0, bos_id=1, eos_id=2, embed_dim=8, hidden_size=12)
        return model, lambda m, s, l, t: m.loss(s, l, t)
    _same_training(build, batch)


def test_transformer_layer_with_dropout():
    def build():
        layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.2, activation="gelu")
        head = nn.Linear(16, 3)
        model = nn.Sequential(layer, head)
        return model, lambda m, x, y: F.cross_entropy(m(x).mean(axis=1), y)
    _same_training(build, lambda rng: (ta.tensor(rng.standard_normal((4, 5, 16)).astype(np.float32)),
                                        rng.integers(0, 3, 4)))


def test_gpt_with_dropout():
    def build():
        model = ta.models.GPT(13, 8, n_layer=2, n_head=2, n_embd=16, dropout=0.1)
        return model, lambda m, x, y: m(x, y)[1]
    def batch(rng):
        data = rng.integers(0, 13, (4, 9))
        return data[:, :-1], data[:, 1:]
    _same_training(build, batch)


@pytest.mark.parametrize("name", ["luong", "luong_concat", "transformer_seq2seq", "lstm", "lstmn", "transformer",
                                  "token_tagger", "attention_tagger", "pointer"])
def test_every_model_of_the_suite_is_captured(name):
    models = ta.models
    if name in ("luong", "luong_concat"):  # concat: the additive score, the additive_attention block
        score = {"luong": "general", "luong_concat": "concat"}[name]
        build = lambda: (models.LuongSeq2Seq(11, 9, pad_id=0, bos_id=1, eos_id=2, embed_dim=8, hidden_size=12,
                                             score=score),
                         lambda m, s, l, t: m.loss(s, l, t))
        batch = _translation_batch
    elif name == "transformer_seq2seq":
        build = lambda: (models.TransformerSeq2Seq(11, 9, pad_id=0, bos_id=1, eos_id=2, d_model=16, nhead=2),
                         lambda m, s, l, t: m.loss(s, l, t))
        batch = _translation_batch
    elif name in ("lstm", "lstmn", "transformer"):
        build = lambda: (models.SequenceClassifier(11, 3, pad_id=0, encoder=name, embed_dim=8, hidden_size=8,
                                                   pooling_size=8, dim_feedforward=16),
                         lambda m, t, l, y: F.cross_entropy(m(t, l)[0] if isinstance(m(t, l), tuple) else m(t, l), y))
        batch = lambda rng: _tokens(11)(rng) + (rng.integers(0, 3, 6),)
    elif name == "token_tagger":
        build = lambda: (models.TokenTagger(11, 4, pad_id=0, embed_dim=8, hidden_size=8),
                         lambda m, t, l, y: ta.cross_entropy(m(t, l), y))
        batch = lambda rng: _tokens(11)(rng) + (rng.integers(0, 4, (6, 7)),)
    elif name == "attention_tagger":
        build = lambda: (models.AttentionTagger(11, 4, pad_id=0, embed_dim=8, num_heads=2, hidden_size=8),
                         lambda m, t, l, y: ta.cross_entropy(m(t, l), y))
        batch = lambda rng: _tokens(11)(rng) + (rng.integers(0, 4, (6, 7)),)
    else:
        build = lambda: (models.PointerEncoder(11, pad_id=0, d_model=8, nhead=2, dim_feedforward=16),
                         lambda m, t, l, q: F.cross_entropy(m(t, l, q), np.asarray(q)))
        batch = lambda rng: _tokens(11)(rng) + (rng.integers(0, 2, 6),)
    _same_training(build, batch)


def test_fit_compiled_trains_as_fit_eager():
    def run(compiled):
        ta.manual_seed(0)
        model = ta.models.GPT(13, 8, n_layer=1, n_head=2, n_embd=16, dropout=0.1)
        opt = ta.optim.AdamW(model.parameters(), lr=1e-2)
        schedule = ta.optim.LambdaLR(opt, lambda step: min(1.0, (step + 1) / 5))
        data = np.random.default_rng(1)

        def batch(step):
            rows = data.integers(0, 13, (4, 9))
            return rows[:, :-1], rows[:, 1:]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            history = ta.train.fit(model, opt, lambda x, y: model(x, y)[1], 25, batches=batch, compile=compiled,
                                   clip_grad_norm=0.5, scheduler=schedule, stream=io.StringIO())
        if compiled:
            assert sum(entry.replays for entry in history.compiled.entries.values()) == 23
        return history.losses, [p.data.copy() for p in model.parameters()]
    (la, pa), (lb, pb) = run(False), run(True)
    assert la == lb
    assert all(np.array_equal(a, b) for a, b in zip(pa, pb))


def test_fit_compile_without_batches_says_it_trains_eagerly():
    ta.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = ta.optim.SGD(model.parameters(), lr=0.1)
    with pytest.warns(UserWarning, match="batches="):
        ta.train.fit(model, opt, lambda step: (model(ta.ones(2, 3)) ** 2).mean(), 2, compile=True, stream=io.StringIO())


# --- a 0-d loss times a Python number, in a step and in fit ---
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("expr", ["mul", "rmul", "div", "mean_mul", "index_mul", "norm_mul", "lerp", "rdiv"])
def test_compile_scalar_loss_times_python_number(dtype, expr):
    """loss * 0.5, 2 * loss, loss / accum_steps on a 0-d loss: eager works, the compiled
    step's first call dies with "AttributeError: 'numpy.float32' object has no attribute 'reg'"."""
    w = ta.tensor(np.ones(3, dtype=dtype), requires_grad=True)

    def step(x):
        base = (w * x).mean() if expr == "mean_mul" else (w * x).sum()
        loss = {"mul": lambda: base * 2.0, "rmul": lambda: 2 * base,
                "div": lambda: base / 4, "mean_mul": lambda: base * 3.0,
                "index_mul": lambda: (w * x)[0] * 3, "norm_mul": lambda: (w * x).norm() * 3,
                "lerp": lambda: base.lerp(base * base, 0.25) * 2, "rdiv": lambda: 1 / (base + 1)}[expr]()
        loss.backward()
        return loss

    eager_w = []
    for fn in (step, ta.compile(step)):
        results = []
        for i in range(3):
            w.grad = None
            loss = fn(ta.tensor(np.full(3, i + 1.0, dtype=dtype)))
            results.append((loss.item(), np.array(w.grad)))
        eager_w.append(results)
    for (le, ge), (lc, gc) in zip(*eager_w):
        assert le == lc
        np.testing.assert_array_equal(ge, gc)


@pytest.mark.parametrize("fused", [True, False])
def test_recurrent_layers_without_lengths_replay(fused):
    """nn.GRU and nn.LSTM called without lengths (as PyTorch's translation tutorial calls its GRU):
    the fused sequence node's sort of the rows depends only on the shapes, so two captures agree
    and the step replays (it ran eagerly, refused, when each call's sort was a new object)."""
    def build():
        class Tagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed, self.gru = nn.Embedding(13, 8), nn.GRU(8, 8, batch_first=True)
                self.lstm, self.head = nn.LSTM(8, 8, batch_first=True), nn.Linear(8, 5)

            def forward(self, tokens):
                h, h_n = self.gru(self.embed(tokens))
                steps = [self.gru(h[:, t:t + 1], h_n)[0] for t in range(h.shape[1])]  # one step at a time, from h_n
                return self.head(self.lstm(ta.cat(steps, 1))[0])
        return Tagger(), lambda m, x, y: F.cross_entropy(m(x).transpose(1, 2), y)

    def batch(rng):
        return rng.integers(0, 13, (4, 6)), rng.integers(0, 5, (4, 6))
    _same_training(build, batch, fused=fused)
