"""ta.compile's guards and refusals: when a replay would be wrong, the step runs eagerly (and says so once).

What a step reads from outside (a closure's float, a global, a replaced parameter, a Dropout's p)
is guarded, so compiled training equals eager training; what cannot be captured (a change through
a view) runs eagerly and says why, and what can (zero_grad(set_to_none=False)) replays."""
import io
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F


def _both(fn_factory, inputs, expect_warning=None):
    """Run fn eagerly and compiled from the same seed on the same inputs (a function: new inputs for
    each side, for a step that changes its arguments); returns the compiled step."""
    results = []
    for compiled in (False, True):
        ta.manual_seed(0)
        fn = fn_factory()
        step = ta.compile(fn) if compiled else fn
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = [step(*args) for args in (inputs() if callable(inputs) else inputs)]
        results.append(([np.array(o.data) if isinstance(o, ta.Tensor) else o for o in out], step, caught))
    (eager, _, _), (compiled, step, caught) = results
    for i, (a, b) in enumerate(zip(eager, compiled)):
        assert np.array_equal(a, b), f"call {i}: compiled differs from eager"
    mine = [w for w in caught if "ta.compile" in str(w.message)]
    if expect_warning is None:
        assert not mine, [str(w.message) for w in mine]
    else:
        assert len(mine) == 1 and expect_warning in str(mine[0].message), [str(w.message) for w in mine]
    return step


def _replays(step):
    return sum(entry.replays for entry in step.entries.values())


def test_dropout_masks_are_drawn_again_at_every_replay():
    ones = ta.ones(4, 50)
    step = _both(lambda: (lambda x: F.dropout(x, 0.5)), [(ones,)] * 6)
    assert _replays(step) == 4
    ta.manual_seed(3)
    masks = [step(ones).numpy() for _ in range(3)]
    assert not np.array_equal(masks[1], masks[2])  # a replay does not repeat the capture's mask


def _mlp_step():
    model = nn.Sequential(nn.Linear(5, 7), nn.Tanh() if hasattr(nn, "Tanh") else nn.ReLU(), nn.Dropout(0.2), nn.Linear(7, 2))
    opt = ta.optim.SGD(model.parameters(), lr=0.1)

    def step(x):
        opt.zero_grad()
        loss = (model(x) ** 2).mean()
        loss.backward()
        opt.step()
        return loss
    step.model = model
    return step


def _x(rng, rows=8):
    return ta.tensor(rng.standard_normal((rows, 5)).astype(np.float32))


def test_a_new_shape_is_a_new_signature_and_each_replays():
    rng = np.random.default_rng(0)
    inputs = [(_x(rng, 8 if i % 2 else 3),) for i in range(12)]
    step = _both(_mlp_step, inputs)
    assert len(step.entries) == 2 and _replays(step) == 8


def test_eval_mode_and_grad_mode_are_guarded():
    rng = np.random.default_rng(1)
    ta.manual_seed(0)
    inner = _mlp_step()
    model = inner.model

    def fn(x):
        return inner(x) if ta.is_grad_enabled() else model(x)
    results = {}
    for compiled in (False, True):
        ta.manual_seed(0)
        for p, q in zip(model.parameters(), _mlp_step().model.parameters()):  # the same start both times
            p.data[...] = q.data
        step = ta.compile(fn) if compiled else fn
        out = []
        for i in range(12):
            model.train(i % 3 != 1)
            with ta.no_grad() if i % 3 == 2 else ta.enable_grad():
                out.append(step(_x(np.random.default_rng(i))).numpy().copy())
        results[compiled] = out
    for a, b in zip(results[False], results[True]):
        assert np.array_equal(a, b)
    assert len(step.entries) == 2 and _replays(step) >= 6  # grad mode: a signature; train/eval: a guard


def test_a_value_read_into_python_is_a_guard():
    rng = np.random.default_rng(2)

    def factory():
        def fn(x, y):
            keep = int((y > 0).sum())  # 2 or 5: two plans, each replayed when its value comes back
            return (x[:keep] * 2.0).sum()
        return fn
    inputs = [(_x(rng), np.array([1, 1, 0, 0, 0] if i % 2 else [1, 1, 1, 1, 1])) for i in range(10)]
    step = _both(factory, inputs)
    assert _replays(step) >= 4


def test_a_value_that_changes_every_step_runs_eagerly_and_says_so_once():
    rng = np.random.default_rng(3)
    inputs = [(_x(rng), np.arange(i % 20 + 1)) for i in range(14)]

    def factory():
        return lambda x, y: x * float(y.sum())
    # the signature changes with y's length: give every call the same length, a different sum
    inputs = [(_x(rng), np.full(3, i)) for i in range(14)]
    _both(factory, inputs, expect_warning="changes from call to call")


@pytest.mark.parametrize("what", ["register_hook", "retain_grad", "trace", "retain_graph"])
def test_what_cannot_be_replayed_runs_eagerly_and_says_why_once(what):
    rng = np.random.default_rng(4)
    inputs = [(_x(rng),) for _ in range(5)]

    def factory():
        w = ta.tensor(np.ones((5, 3), np.float32), requires_grad=True)

        def fn(x):
            h = (x @ w).tanh()
            if what == "register_hook":
                h.register_hook(lambda g: g * 2)
            if what == "retain_grad":
                h.retain_grad()
            loss = h.sum()
            if what == "trace":
                with ta.autograd.trace():
                    loss.backward()
            else:
                loss.backward(retain_graph=what == "retain_graph")
            return ta.tensor(w.grad.copy())
        return fn
    expected = {"register_hook": "hook", "retain_grad": "retain_grad", "trace": "trace", "retain_graph": "retain_graph"}
    _both(factory, inputs, expect_warning=expected[what])


def test_a_batch_made_inside_the_step_is_not_frozen():
    def factory():
        data = np.random.default_rng(5)
        inner = _mlp_step()
        return lambda: inner(ta.tensor(data.standard_normal((8, 5)).astype(np.float32)))
    _both(factory, [()] * 6, expect_warning="changed between two calls")


def test_gradient_clipping_inside_the_step_runs_eagerly_and_says_so():
    def factory():
        model = nn.Linear(5, 2)
        opt = ta.optim.SGD(model.parameters(), lr=0.1)

        def fn(x):
            opt.zero_grad()
            loss = (model(x) ** 2).mean()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.01)  # reads the norm into Python
            opt.step()
            return ta.tensor(model.weight.data.copy())
        return fn
    rng = np.random.default_rng(6)
    _both(factory, [(_x(rng),) for _ in range(14)], expect_warning="changes from call to call")


def test_learning_rate_schedule_adam_bias_corrections_and_float_inputs_are_inputs_of_the_plan():
    rng = np.random.default_rng(7)
    inputs = [(_x(rng), float(i) / 7) for i in range(12)]
    results = []
    for compiled in (False, True):
        ta.manual_seed(0)
        model = nn.Linear(5, 3)
        opt = ta.optim.Adam(model.parameters(), lr=0.05)
        schedule = ta.optim.StepLR(opt, step_size=2, gamma=0.5)

        def fn(x, scale):
            opt.zero_grad()
            loss = (model(x) * scale).tanh().sum()  # scale: a float argument, different every call
            loss.backward()
            opt.step()  # Adam's bias corrections change every step
            return loss
        step = ta.compile(fn) if compiled else fn
        out = []
        for x, scale in inputs:
            out.append((step(x, scale).item(), model.weight.data.copy()))
            schedule.step()  # outside the step: the next replay's opt.step() reads the new lr
        results.append(out)
    assert _replays(step) == len(inputs) - 2
    for (la, wa), (lb, wb) in zip(*results):
        assert la == lb and np.array_equal(wa, wb)


def test_compile_off_runs_eagerly():
    step = ta.compile(lambda x: x * 2.0)
    with ta.compile.off():
        for _ in range(3):
            step(ta.ones(2))
    assert not step.entries
    code = ("import tinyattn as ta\nstep = ta.compile(lambda x: x * 2.0)\n[step(ta.ones(2)) for _ in range(3)]\n"
            "assert not step.entries\n")
    env = {**os.environ, "TINYATTN_COMPILE": "0"}
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


def test_explain_names_signatures_calls_memory_and_guards():
    rng = np.random.default_rng(8)
    step = ta.compile(_mlp_step())
    for _ in range(4):
        step(_x(rng))
    text = step.explain()
    for words in ("signature 1", "array calls before fusion", "planned peak", "guards", "replayed 2"):
        assert words in text, text
    source = step.explain(code=True)
    assert "def replay(leaves):" in source and "del r" in source  # the memory plan, as del statements


def test_an_apply_bound_before_the_capture_runs_eagerly_and_says_so():
    linear = nn.layers.LinearFunction.apply  # bound once: the capture's seam is Function.apply at call time
    w, b = ta.tensor(np.ones((3, 5), np.float32), requires_grad=True), ta.tensor(np.zeros(3, np.float32), requires_grad=True)
    rng = np.random.default_rng(9)

    def factory():
        def fn(x):
            linear(x * 1.0, w, b).tanh().sum().backward()
            grad = ta.tensor(w.grad.copy())
            w.grad = b.grad = None  # after the refusal: that one is the apply's (assigning .grad is refused too)
            return grad
        return fn
    _both(factory, [(_x(rng),) for _ in range(4)], expect_warning="apply")


def test_manual_seed_inside_the_step_runs_eagerly_and_says_so():
    def factory():
        def fn(x):
            ta.manual_seed(1)
            return F.dropout(x, 0.5)
        return fn
    _both(factory, [(ta.ones(3, 4),)] * 4, expect_warning="manual_seed")


def test_the_engine_never_imports_the_compiler():
    root = os.path.join(os.path.dirname(__file__), "..", "tinyattn")
    for package in ("autograd", "nn", "ops", "optim"):
        for folder, _, files in os.walk(os.path.join(root, package)):
            for name in files:
                if name.endswith(".py"):
                    text = open(os.path.join(folder, name), encoding="utf-8").read()
                    assert "compile import" not in text and "import compile" not in text, f"{package}/{name}"


def test_a_parameter_given_a_new_array_between_steps_is_read_again():
    rng = np.random.default_rng(10)
    inputs = [_x(rng) for _ in range(8)]
    results = []
    for compiled in (False, True):
        ta.manual_seed(0)
        model = nn.Linear(5, 3)
        opt = ta.optim.SGD(model.parameters(), lr=0.1)

        def fn(x):
            opt.zero_grad()
            loss = (model(x).tanh() ** 2).sum()  # the rule takes weight.T: a view of the parameter's array
            loss.backward()
            opt.step()
            return loss
        step = ta.compile(fn) if compiled else fn
        out = []
        for i, x in enumerate(inputs):
            if i == 5:
                model.weight.data = model.weight.data * 0.5  # a new array, as load_state_dict may give
            out.append(step(x).item())
        results.append(out)
    assert results[0] == results[1]


def test_past_the_signature_limit_new_shapes_run_eagerly_and_it_is_said_once(monkeypatch):
    from tinyattn.compile import step as step_module
    monkeypatch.setattr(step_module, "MAX_SIGNATURES", 3)
    step = ta.compile(lambda x: x * 2.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outs = [step(ta.ones(n)).numpy() for n in range(1, 8)]
    assert len(step.entries) == 3 and all(np.array_equal(o, np.full(n, 2.0)) for n, o in zip(range(1, 8), outs))
    assert len([w for w in caught if "input signatures" in str(w.message)]) == 1


def test_a_schedule_stepped_inside_the_step_is_stepped_at_every_replay():
    rng = np.random.default_rng(11)
    inputs = [_x(rng) for _ in range(10)]
    results = []
    for compiled in (False, True):
        ta.manual_seed(0)
        model = nn.Linear(5, 3)
        opt = ta.optim.Adam(model.parameters(), lr=0.05)
        schedule = ta.optim.StepLR(opt, step_size=2, gamma=0.5)

        def fn(x):
            opt.zero_grad()
            loss = (model(x).tanh() ** 2).sum()
            loss.backward()
            opt.step()
            schedule.step()  # inside the step: a replay calls it again
            return loss
        step = ta.compile(fn) if compiled else fn
        results.append([(step(x).item(), opt.param_groups[0]["lr"]) for x in inputs])
    assert results[0] == results[1]


def test_returning_loss_item_after_the_update_is_an_output_not_a_guard():
    rng = np.random.default_rng(12)
    inputs = [(_x(rng),) for _ in range(8)]

    def factory():
        inner = _mlp_step()
        return lambda x: inner(x).item()  # read after opt.step(): the value is the step's output
    step = _both(factory, inputs)
    assert _replays(step) == 6


def test_a_value_read_after_the_update_and_used_runs_eagerly():
    rng = np.random.default_rng(13)

    def factory():
        inner = _mlp_step()

        def fn(x):
            loss = inner(x)
            return ta.tensor([1.0]) if loss.item() > 0 else ta.tensor([2.0])  # Python branches on it
        return fn
    _both(factory, [(_x(rng),) for _ in range(4)], expect_warning="after the optimiser's step()")


def test_a_value_read_with_item_is_a_guard_too():
    rng = np.random.default_rng(14)

    def factory():
        return lambda x, y: (x[:(y > 0).sum().item()] * 2.0).sum()
    inputs = [(_x(rng), np.array([1, 1, 0] if i % 2 else [1, 1, 1])) for i in range(10)]
    assert _replays(_both(factory, inputs)) >= 4


def test_nested_results_are_rebuilt_at_every_replay():
    rng = np.random.default_rng(15)

    def factory():
        inner = _mlp_step()
        return lambda x: {"pair": ((inner(x), 1), [x.sum() * 2.0])}
    results = []
    for compiled in (False, True):
        ta.manual_seed(0)
        fn = factory()
        step = ta.compile(fn) if compiled else fn
        outs = [step(_x(np.random.default_rng(i))) for i in range(5)]
        results.append([(o["pair"][0][0].item(), o["pair"][0][1], o["pair"][1][0].item()) for o in outs])
    assert results[0] == results[1]


# --- what a step reads from outside, changed between calls: guarded, so the replay is eager's ---
def test_compile_dropout_p_changed_between_calls():
    """Changing a Dropout's p between calls (a dropout schedule, or p=0 for a phase) is not
    guarded: the replay keeps the captured p and silently trains a different model than eager."""
    def train(compiled):
        ta.manual_seed(0)
        m = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 3))
        opt = ta.optim.Adam(m.parameters(), lr=1e-2)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
            return loss
        f = ta.compile(step) if compiled else step
        losses = []
        for i in range(6):
            r = np.random.RandomState(i)
            x = ta.tensor(r.randn(8, 5).astype(np.float32))
            y = ta.tensor(r.randint(0, 3, 8))
            if i == 3:
                m[2].p = 0.0
            losses.append(f(x, y).item())
        return losses, [p.data.copy() for p in m.parameters()]
    le, pe = train(False)
    lc, pc = train(True)
    assert le == lc
    for a, b in zip(pe, pc):
        np.testing.assert_array_equal(a, b)


def _train_mlp(compiled, before_call, forward_extra=None, steps=6):
    """Train a small MLP for `steps` calls; before_call(i, model, state) may change things
    between calls; forward_extra(out, state) may read them inside the step."""
    ta.manual_seed(0)
    m = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = ta.optim.SGD(m.parameters(), lr=0.1)
    state = {}

    def step(x, y):
        opt.zero_grad()
        out = m(x)
        if forward_extra is not None:
            out = forward_extra(out, state)
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        return loss
    f = ta.compile(step) if compiled else step
    losses = []
    for i in range(steps):
        r = np.random.RandomState(i)
        x = ta.tensor(r.randn(8, 5).astype(np.float32))
        y = ta.tensor(r.randint(0, 3, 8))
        before_call(i, m, state)
        losses.append(f(x, y).item())
    return losses, [p.data.copy() for p in m.parameters()]


def _assert_same(eager, compiled):
    le, pe = eager
    lc, pc = compiled
    assert le == lc
    for a, b in zip(pe, pc):
        np.testing.assert_array_equal(a, b)


def test_compile_closure_float_changed_after_the_captures():
    """A loss weight read from outside the step (a KL/temperature schedule that starts after a
    warm-up: the same for calls 1-2, then changed) is frozen into the plan: the replay silently
    keeps the captured value. Eager and compiled then train different models."""
    def before(i, m, s):
        s["beta"] = 0.0 if i < 3 else 0.5

    def extra(out, s):
        return out * (1.0 + s["beta"])
    _assert_same(_train_mlp(False, before, extra), _train_mlp(True, before, extra))


def test_compile_global_tensor_rebound_after_the_captures():
    """A tensor the step reads from outside (class weights, a temperature, a mask) rebound to a
    new tensor between calls: the replay keeps reading the old one."""
    def before(i, m, s):
        s["t"] = ta.tensor(np.float32(1.0 if i < 3 else 4.0))

    def extra(out, s):
        return out * s["t"]
    _assert_same(_train_mlp(False, before, extra), _train_mlp(True, before, extra))


def test_compile_parameter_replaced_between_calls():
    """model[0].weight = nn.Parameter(...) (re-initialising or swapping a layer's weight) after
    the captures: the guards check each parameter's shape/dtype/requires_grad but not which
    tensor it is, so the replay keeps computing with the old parameter."""
    def before(i, m, s):
        if i == 3:
            m[0].weight = nn.Parameter(m[0].weight.data * 0.5)
    _assert_same(_train_mlp(False, before), _train_mlp(True, before))


KL_WEIGHT = 0.0          # globals a step reads by name: guarded (their value, or which tensor they are)


CLASS_SCALE = ta.tensor(np.float32(1.0))


def _global_step(m, opt):
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(m(x) * CLASS_SCALE, y) * (1.0 + KL_WEIGHT)
        loss.backward()
        opt.step()
        return loss
    return step


@pytest.mark.parametrize("rebind", ["float", "tensor"])
def test_compile_global_read_by_the_step_changed_after_the_captures(rebind):
    """A global float (a schedule's weight) or a global tensor rebound once, after the plan is
    confirmed: the replay is abandoned and the step captured again for the new value."""
    global KL_WEIGHT, CLASS_SCALE

    def run(compiled):
        global KL_WEIGHT, CLASS_SCALE
        KL_WEIGHT, CLASS_SCALE = 0.0, ta.tensor(np.float32(1.0))
        ta.manual_seed(0)
        m = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3))
        opt = ta.optim.SGD(m.parameters(), lr=0.1)
        step = ta.compile(_global_step(m, opt)) if compiled else _global_step(m, opt)
        losses = []
        for i in range(8):
            r = np.random.RandomState(i)
            if i == 4:
                if rebind == "float":
                    KL_WEIGHT = 0.5
                else:
                    CLASS_SCALE = ta.tensor(np.float32(3.0))
            losses.append(step(ta.tensor(r.randn(8, 5).astype(np.float32)), ta.tensor(r.randint(0, 3, 8))).item())
        return losses, [p.data.copy() for p in m.parameters()], step
    try:
        *eager, _ = run(False)
        *compiled, step = run(True)
    finally:
        KL_WEIGHT, CLASS_SCALE = 0.0, ta.tensor(np.float32(1.0))
    _assert_same(eager, compiled)
    entry, = step.entries.values()
    assert entry.replays >= 4 and entry.refused is None  # replayed before the change and after it


def test_compile_keep_attention_weights_goes_stale():
    """nn.keep_attention_weights(model) during a compiled training step: from the first replay on,
    attn[name].last_weights stops changing (it keeps the second call's weights), with no warning;
    eager updates it every call. (Hooks and retain_grad are refused or run eagerly; this
    side effect is neither.)"""
    def run(compiled):
        ta.manual_seed(0)
        layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        enc = nn.TransformerEncoder(layer, 1)
        head = nn.Linear(8, 2)
        attn = nn.keep_attention_weights(enc)
        opt = ta.optim.SGD(enc.parameters() + head.parameters(), lr=0.1)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(head(enc(x).mean(1)), y)
            loss.backward()
            opt.step()
            return loss
        f = ta.compile(step) if compiled else step
        weights = []
        for i in range(5):
            r = np.random.RandomState(i)
            f(ta.tensor(r.randn(2, 4, 8).astype(np.float32)), ta.tensor(r.randint(0, 2, 2)))
            weights.append(attn["layers.0.self_attn"].last_weights.copy())
        return weights
    for e, c in zip(run(False), run(True)):
        np.testing.assert_array_equal(e, c)


@pytest.mark.parametrize("change", ["mul_column", "add_element", "copy_into_columns", "clamp_through_T"])
def test_compile_inplace_change_through_a_view(change):
    """In-place changes through a view or an element (today's CopySlices) inside a compiled step:
    the gradients (and for h[1, 2].add_(h[0, 0]) the loss too) differ from eager from the FIRST
    call on, e.g. h[:, 0].mul_(2) gives w.grad[:, 0] half of eager's: the change through the
    view is missing from the captured backward. Eager matches PyTorch."""
    a = np.arange(6.0).reshape(2, 3) / 5 - 0.4
    results = []
    for compiled in (False, True):
        w = ta.tensor(a.copy(), requires_grad=True)

        def step(x):
            h = w * x
            if change == "mul_column":
                h[:, 0].mul_(2)
            elif change == "add_element":
                h[1, 2].add_(h[0, 0])
            elif change == "copy_into_columns":
                h[:, 1:].copy_(h[:, :2] * 3)
            else:
                h.T[1].clamp_(-0.1, 0.1)
            loss = (h * h).sum()
            loss.backward()
            return loss
        f = ta.compile(step) if compiled else step
        out = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for i in range(3):
                w.grad = None
                loss = f(ta.tensor(np.full((2, 3), 1.0 + i)))
                out.append((loss.item(), np.array(w.grad)))
        results.append(out)
        if compiled:  # refused, and said why: the history a change through a view rewrites is not captured
            assert [str(c.message) for c in caught if "runs eagerly" in str(c.message) and "view" in str(c.message)]
    for (le, ge), (lc, gc) in zip(*results):
        assert le == lc
        np.testing.assert_array_equal(ge, gc)


def test_compile_zero_grad_set_to_none_false_is_replayed():
    """opt.zero_grad(set_to_none=False) inside the step (PyTorch's older default) makes the step
    run eagerly forever, with a warning that blames the user's code and prints an internal
    object: "the step made an array or number for itself that changed ... (grad
    <tinyattn.compile.capture.Live object at 0x...> ...): pass it to the step as an argument".
    Results stay right (eager); the compile is silently lost."""
    m = nn.Linear(3, 2)
    opt = ta.optim.SGD(m.parameters(), lr=0.1)

    def step(x):
        opt.zero_grad(set_to_none=False)
        loss = m(x).pow(2).mean()
        loss.backward()
        opt.step()
        return loss
    f = ta.compile(step)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(4):
            f(ta.tensor(np.full((4, 3), float(i), dtype=np.float32)))
    messages = [str(w.message) for w in caught]
    assert not any("runs eagerly" in s for s in messages), messages
    assert "replayed 2" in f.explain()


def test_compile_eager_warning_names_what_changed_in_words():
    """The warning for an array the step made for itself names it in words, not as an object's repr."""
    w = ta.tensor(np.ones(3), requires_grad=True)
    numbers = iter(range(10))

    def step(x):
        loss = (w * x * ta.tensor(np.full(3, float(next(numbers))))).sum()
        loss.backward()
        return loss
    f = ta.compile(step)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(3):
            w.grad = None
            f(ta.tensor(np.ones(3)))
    messages = [str(c.message) for c in caught if "runs eagerly" in str(c.message)]
    assert messages and not any(" object at 0x" in m for m in messages), messages


def test_fit_compile_with_a_loss_divided_by_a_number():
    """ta.train.fit(..., batches=, compile=True) with loss_fn returning (l1 + l2) / 2 dies in the
    capture with "'numpy.float32' object has no attribute 'reg'" (eager fit trains)."""

    def run(compiled):
        ta.manual_seed(0)
        m = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3))
        opt = ta.optim.Adam(m.parameters(), lr=1e-2)

        def batches(step):
            r = np.random.RandomState(step)
            return ta.tensor(r.randn(8, 5).astype(np.float32)), ta.tensor(r.randint(0, 3, 8))

        def loss_fn(x, y):
            return (F.cross_entropy(m(x), y) + F.cross_entropy(m(x * 2), y)) / 2
        h = ta.train.fit(m, opt, loss_fn, 4, batches=batches, compile=compiled, stream=io.StringIO())
        return list(h.losses), [p.data.copy() for p in m.parameters()]
    _assert_same(run(False), run(True))


@pytest.mark.parametrize("where", ["before backward", "after backward"])
def test_a_grad_assigned_in_python_runs_eagerly_and_says_so(where):
    """`p.grad = None` (or `p.grad = p.grad * 0.5`) is Python a replay does not run: replayed, the
    gradients would pile up over the steps (or skip the halving) while eager resets them. The
    step runs eagerly, says so once, and trains exactly as eager."""
    def factory():
        model = nn.Linear(3, 2).double()
        opt = ta.optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            if where == "before backward":
                for p in model.parameters():
                    p.grad = None
            loss = model(x).pow(2).mean()
            loss.backward()
            if where == "after backward":
                for p in model.parameters():
                    p.grad = p.grad * 0.5
            opt.step()
            if where == "after backward":
                opt.zero_grad()
            return model.weight
        return step
    inputs = [(ta.tensor(np.full((4, 3), 0.1 * i)),) for i in range(5)]
    _both(factory, inputs, expect_warning="assigns a leaf's .grad")


def test_a_grad_scaled_in_place_is_replayed():
    """p.grad *= s (what the refusal above recommends) changes the array in place and assigns the
    same array back: captured and replayed, no warning, the same bits as eager."""
    def factory():
        model = nn.Linear(3, 2).double()
        opt = ta.optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            for p in model.parameters():
                p.grad *= 0.5
            opt.step()
            return model.weight
        return step
    inputs = [(ta.tensor(np.full((4, 3), 0.1 * i)),) for i in range(5)]
    step = _both(factory, inputs)
    assert next(iter(step.entries.values())).replays == 3


@pytest.mark.parametrize("before", ["none", "accumulated", "scaled"])
def test_a_guard_failing_after_backward_leaves_each_grad_as_eager_does(before):
    """A value read into Python after backward is a guard in the middle of the plan: when it fails
    at a replay, the gradients the replay already added (or scaled in place) are put back before the
    step runs again eagerly, so .grad is added once, as eagerly (before: added twice, 2x the gradient).
    accumulated: .grad never reset, so each call adds into the last; scaled: the step halves .grad in
    place before the read (both failed before); none: the step calls opt.zero_grad() first, so the
    eager run starts afresh anyway (it passed before too: kept for the journal of a .grad that was None)."""
    def factory():
        w = ta.tensor(np.linspace(0.5, 1.5, 3), requires_grad=True)
        opt = ta.optim.SGD([w], lr=0.0)

        def step(x, y):
            if before == "none":
                opt.zero_grad()
            (w * x).pow(2).sum().backward()
            if before == "scaled":
                w.grad *= 0.5
            n = int(y.sum())  # 1 for the first calls, then 2: the guard fails at a replay
            return w.grad * float(n)
        return step
    inputs = [(np.full(3, 1.0 + i), np.full(3, 1.0 if i < 4 else 2.0 / 3)) for i in range(6)]
    step = _both(factory, inputs)
    assert next(iter(step.entries.values())).replays >= 1


def test_a_parameter_changed_in_place_before_a_guard_runs_eagerly_and_says_so():
    """w.mul_(0.5) before a value read into Python: a replay stopped by that read would have halved w
    already, and the eager run would halve it again (w 4x smaller than eager's after a failed guard,
    before). Such a step is not replayed: it runs eagerly, with the same numbers, and says why."""
    def factory():
        w = ta.tensor(np.ones(3), requires_grad=True)

        def step(x, y):
            with ta.no_grad():
                w.mul_(0.5)
            loss = (w * x).sum()
            loss.backward()
            n = int(y.sum())
            return loss.detach() * float(n) + w.detach()
        return step
    inputs = [(np.full(3, 1.0), np.full(3, 1.0 if i < 3 else 2.0 / 3)) for i in range(5)]
    _both(factory, inputs, expect_warning="changes a parameter or an argument in place")


def test_a_parameter_changed_in_place_with_no_check_after_it_is_replayed():
    """Weight decay by hand before the forward, and nothing after it where a replay could stop:
    nothing to undo, so the step is captured and replayed (a refusal would only cost speed)."""
    def factory():
        w = ta.tensor(np.ones(3), requires_grad=True)

        def step(x):
            with ta.no_grad():
                w.mul_(0.99)
            return (w * x).sum().detach() + w.detach()
        return step
    step = _both(factory, [(np.full(3, 1.0 + i),) for i in range(5)])
    assert next(iter(step.entries.values())).replays == 3


@pytest.mark.parametrize("change", ["out=", "ufunc.at", "putmask"])
def test_an_array_argument_changed_in_place_before_a_guard_runs_eagerly_and_says_so(change):
    """An ndarray argument doubled in place (out=, np.add.at, np.putmask) before a value read into
    Python: a replay stopped by the read would have changed it already, the eager run again."""
    def factory():
        w = ta.tensor(np.ones(3), requires_grad=True)

        def step(x, y, a):
            if change == "out=":
                np.multiply(a, 2.0, out=a)
            elif change == "ufunc.at":
                np.add.at(a, [0, 1, 2], a)
            else:
                np.putmask(a, a > 0, a * 2)
            loss = (w * x).sum() + ta.tensor(a).sum()
            n = int(y.sum())  # 3, then 2: the guard fails
            return loss.detach() * float(n)
        return step
    def inputs():  # new arrays for each side: the step changes its argument a
        return [(np.ones(3), np.full(3, 1.0 if i < 3 else 2.0 / 3), np.ones(3)) for i in range(5)]
    _both(factory, inputs, expect_warning="changes a parameter or an argument in place")


def test_a_shape_check_failing_after_backward_leaves_each_grad_as_eager_does():
    """x[mask] after backward: the plan checks its shape there, a place where a replay can stop
    midway like a guard. With .grad accumulating, the eager rerun added the gradient twice (w.grad
    5 where eager has 4, before the journal counted shape checks)."""
    def factory():
        w = ta.tensor(np.ones(3), requires_grad=True)

        def step(x, mask):
            (w * x).sum().backward()
            return ta.tensor(x[mask]).sum() + w.grad
        return step
    masks = [np.array([True, False, True])] * 3 + [np.array([True, True, True])]
    _both(factory, [(np.ones(3), m) for m in masks])


def test_an_optimiser_step_before_a_shape_check_runs_eagerly_and_says_so():
    """opt.step() then x[mask], whose shape the plan checks: a replay stopped by the check had
    stepped the parameters already, and the eager run stepped them again (w 0.4 where eager has 0.5)."""
    def factory():
        w = ta.tensor(np.ones(3), requires_grad=True)
        opt = ta.optim.SGD([w], lr=0.1)

        def step(x, mask):
            opt.zero_grad()
            (w * x).sum().backward()
            opt.step()
            return ta.tensor(x[mask]).sum() + w.detach()
        return step
    masks = [np.array([True, False, True])] * 4 + [np.array([True, True, True])]
    _both(factory, [(np.ones(3), m) for m in masks], expect_warning="after the optimiser's step()")


def test_two_leaves_sharing_one_grad_array_are_put_back_by_a_stopped_replay():
    """w1.grad and w2.grad are one array: a replay stopped after backward puts it back as it was
    before either gradient was added (restoring the later note last left w1's addition in: 19 where
    eager has 15)."""
    def factory():
        w1, w2 = (ta.tensor(np.ones(3), requires_grad=True) for _ in range(2))
        w1.grad = w2.grad = np.zeros(3)

        def step(x, y):
            ((w1 * x).sum() + (w2 * x * 2).sum()).backward()
            n = int(y.sum())  # 3, then 2: the guard fails
            return ta.tensor(w1.grad.copy()) * float(n)
        return step
    _both(factory, [(np.ones(3), np.full(3, 1.0 if i < 3 else 2.0 / 3)) for i in range(5)])


def test_a_shape_check_failing_after_a_draw_draws_the_same_numbers_again():
    """Dropout, then x[mask]: a replay stopped by x[mask]'s shape check had drawn the dropout mask
    already; the generator is put back, so the eager run draws what an eager step would have."""
    def factory():
        w = ta.tensor(np.ones(8), requires_grad=True)

        def step(x, mask):
            dropped = F.dropout(w * x, 0.5)
            dropped.sum().backward()
            return dropped.detach() * ta.tensor(x.data[mask.data]).sum()  # which elements were dropped
        return step
    masks = [np.arange(8) < 4] * 4 + [np.arange(8) < 6]
    _both(factory, [(ta.tensor(np.ones(8)), ta.tensor(m)) for m in masks])
