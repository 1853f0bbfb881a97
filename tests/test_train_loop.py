"""ta.train.fit: exact resume, the NaN stop, evaluation, Ctrl-C, on a small model with dropout."""
import io
import re

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Dropout(0.2), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x)


def make_run(seed=0, lr=0.05):
    """A model, an optimiser with a schedule, a data generator and a loss drawing batches from it."""
    ta.manual_seed(seed)
    model = Regressor()
    opt = ta.optim.Adam(model.parameters(), lr=lr)
    schedule = ta.optim.StepLR(opt, step_size=5, gamma=0.5)
    data = np.random.default_rng(seed)

    def loss_fn(step):
        x = data.standard_normal((8, 4)).astype(np.float32)
        y = x.sum(1, keepdims=True)
        return ((model(ta.tensor(x)) - ta.tensor(y)) ** 2).mean()

    return model, opt, schedule, data, loss_fn


def run(path, steps, resume=False, seed=0, **options):
    model, opt, schedule, data, loss_fn = make_run(seed)
    history = ta.train.fit(model, opt, loss_fn, steps, checkpoint=path, checkpoint_every=4, resume=resume,
                           scheduler=schedule, rngs={"data": data}, stream=io.StringIO(), **options)
    return model, opt, history


def test_resume_continues_bit_for_bit(tmp_path):
    straight, straight_opt, straight_history = run(tmp_path / "straight.npz", 12)
    run(tmp_path / "resumed.npz", 8)                        # "crashes" after step 8 (checkpoint at 8)
    resumed, resumed_opt, history = run(tmp_path / "resumed.npz", 12, resume=True, seed=99)  # another process
    assert history.resumed_from == 8 and history.steps_done == 12
    assert history.losses == straight_history.losses        # the same batches and dropout masks
    for key, value in resumed.state_dict().items():
        np.testing.assert_array_equal(value, straight.state_dict()[key], err_msg=key)
    assert resumed_opt.lr == straight_opt.lr == 0.05 * 0.5 ** 2


def test_a_nan_loss_stops_cleanly_and_keeps_the_last_good_checkpoint(tmp_path):
    model, opt, _, _, loss_fn = make_run()
    path = tmp_path / "run.npz"

    def poisoned(step):
        loss = loss_fn(step)
        return loss * float("nan") if step == 7 else loss

    out = io.StringIO()
    history = ta.train.fit(model, opt, poisoned, 20, checkpoint=path, checkpoint_every=4, stream=out)
    assert history.steps_done == 6 and "stopped at step 7: the loss is nan" in history.stopped
    assert f"the last good checkpoint (step 4) is {path}" in history.stopped
    assert ta.load(path)["step"] == 4
    assert all(np.isfinite(p.data).all() for p in model.parameters())  # no update from the NaN
    assert "stopped at step 7" in out.getvalue()


class InfiniteGradient(ta.autograd.Function):
    """The identity whose backward hands on inf: a finite loss with an exploding gradient."""

    @staticmethod
    def forward(ctx, x):
        return x.copy()

    @staticmethod
    def backward(ctx, g):
        return (np.full_like(g, np.inf),)


def test_an_infinite_gradient_stops_before_the_update():
    model, opt, _, _, loss_fn = make_run()

    def exploding(step):
        loss = loss_fn(step)
        return InfiniteGradient.apply(loss) if step == 3 else loss

    with np.errstate(all="ignore"):  # inf meeting the weights' zeros in the backward makes NaN too
        history = ta.train.fit(model, opt, exploding, 5, clip_grad_norm=1.0, stream=io.StringIO())
    assert history.steps_done == 2 and re.match(r"stopped at step 3: the gradient norm is (inf|nan)", history.stopped)
    assert all(np.isfinite(p.data).all() for p in model.parameters())


def test_evaluation_runs_every_n_steps_and_at_the_end_in_eval_mode():
    model, opt, _, _, loss_fn = make_run()
    seen = []

    def evaluate(step):
        seen.append((step, model.training))
        model.eval()
        return {"acc": step / 10}

    out = io.StringIO()
    history = ta.train.fit(model, opt, loss_fn, 10, evaluate=evaluate, evaluate_every=4, stream=out)
    assert [s for s, _ in seen] == [4, 8, 10] and all(training for _, training in seen)
    assert history.evaluations == {"acc": [(4, 0.4), (8, 0.8), (10, 1.0)]}
    assert model.training and "acc 1" in out.getvalue()


def test_ctrl_c_names_the_checkpoint_and_stops(tmp_path):
    model, opt, _, _, loss_fn = make_run()

    def interrupted(step):
        if step == 7:
            raise KeyboardInterrupt
        return loss_fn(step)

    out = io.StringIO()
    with pytest.raises(KeyboardInterrupt):
        ta.train.fit(model, opt, interrupted, 20, checkpoint=tmp_path / "run.npz", checkpoint_every=4, stream=out)
    assert f"interrupted at step 7; the checkpoint of step 4 is {tmp_path / 'run.npz'}" in out.getvalue()
    assert "resume=True" in out.getvalue() and ta.load(tmp_path / "run.npz")["step"] == 4


def test_resume_without_a_checkpoint_starts_fresh_and_missing_generators_are_named(tmp_path):
    _, _, history = run(tmp_path / "none.npz", 3, resume=True)
    assert history.resumed_from == 0 and history.steps_done == 3
    model, opt, _, _, loss_fn = make_run()
    with pytest.raises(ValueError, match=r"no state for the generators \['other'\]"):
        ta.train.fit(model, opt, loss_fn, 5, checkpoint=tmp_path / "none.npz", resume=True,
                     rngs={"other": np.random.default_rng()}, stream=io.StringIO())


def test_the_compile_notice_shows_only_when_a_tinyattn_kernel_compiles():
    import numba

    def kernel(x):
        return x * 2.0

    kernel.__module__ = "tinyattn.example"  # as if it were one of tinyattn's kernels
    compiled = numba.njit(kernel)
    other = numba.njit(lambda x: x + 1.0)   # someone else's kernel: no notice
    out = io.StringIO()
    with ta.train.compile_notice(out):
        other(1.0)
        assert out.getvalue() == ""
        compiled(1.0)   # compiles: one notice
        compiled(2.0)   # already compiled: nothing more
        compiled(3)     # a new signature compiles again, but the notice is shown once
    assert out.getvalue().count("Numba is compiling tinyattn's kernels") == 1
    compiled(4.5)
    assert out.getvalue().count("Numba") == 1  # outside the block: silent


def test_extending_a_finished_run_is_exact_when_the_last_evaluation_draws_from_the_data(tmp_path):
    """The evaluation a run makes only because it ends (not on its schedule) must not be in the
    checkpoint: a longer run never makes it, so resuming from that state would differ."""

    def run_with_validation(path, steps, resume=False):
        model, opt, schedule, data, loss_fn = make_run()

        def evaluate(step):  # a validation batch from the data's generator
            x = data.standard_normal((8, 4)).astype(np.float32)
            with ta.no_grad():
                return {"val": ((model(ta.tensor(x)) - ta.tensor(x.sum(1, keepdims=True))) ** 2).mean().item()}

        return ta.train.fit(model, opt, loss_fn, steps, checkpoint=path, checkpoint_every=4, resume=resume,
                            scheduler=schedule, rngs={"data": data}, evaluate=evaluate, evaluate_every=6,
                            stream=io.StringIO())

    straight = run_with_validation(tmp_path / "straight.npz", 12)
    finished = run_with_validation(tmp_path / "extended.npz", 8)   # ends at 8, evaluated there
    assert [step for step, _ in finished.evaluations["val"]] == [6, 8]
    extended = run_with_validation(tmp_path / "extended.npz", 12, resume=True)
    assert extended.losses == straight.losses
    assert extended.evaluations == straight.evaluations


def test_keep_best_writes_the_weights_of_the_lowest_evaluation_and_resume_keeps_it(tmp_path):
    figures = {2: 3.0, 4: 1.0, 6: 2.0, 8: 5.0, 10: 4.0}   # lowest at step 4, then worse
    weights_at = {}

    def evaluate(step):
        weights_at[step] = {k: v.copy() for k, v in model.state_dict().items()}
        return {"val": figures[step]}

    best = tmp_path / "best.npz"
    model, opt, schedule, data, loss_fn = make_run()
    history = ta.train.fit(model, opt, loss_fn, 6, checkpoint=tmp_path / "run.npz", checkpoint_every=2,
                           rngs={"data": data}, evaluate=evaluate, evaluate_every=2, stream=io.StringIO(),
                           keep_best="val", best_checkpoint=best)
    assert history.best == (4, 1.0)
    saved = ta.load(best)
    assert saved["step"] == 4 and saved["val"] == 1.0
    for key, value in weights_at[4].items():
        np.testing.assert_array_equal(saved["model"][key], value, err_msg=key)
    model, opt, schedule, data, loss_fn = make_run()        # another process continues to step 10
    history = ta.train.fit(model, opt, loss_fn, 10, checkpoint=tmp_path / "run.npz", checkpoint_every=2,
                           resume=True, rngs={"data": data}, evaluate=evaluate, evaluate_every=2,
                           stream=io.StringIO(), keep_best="val", best_checkpoint=best)
    assert history.best == (4, 1.0) and ta.load(best)["step"] == 4
    with pytest.raises(ValueError, match=r"keep_best='loss' is not a figure evaluate\(2\) returned \(it returned \['val'\]\)"):
        ta.train.fit(model, opt, loss_fn, 2, evaluate=evaluate, evaluate_every=2, stream=io.StringIO(),
                     keep_best="loss")


@pytest.mark.parametrize("loss_fn, error, message", [
    (lambda step: 1.5, TypeError, r"loss_fn\(1\) returned a float, not a Tensor"),
    (lambda step: ta.ones(2, requires_grad=True) * 2, ValueError, r"has shape \(2,\); reduce it"),
    (lambda step: ta.tensor(1.0), ValueError, "does not require grad"),
])
def test_fit_names_a_loss_it_cannot_use(loss_fn, error, message):
    model = nn.Linear(2, 1)
    with pytest.raises(error, match=message):
        ta.train.fit(model, ta.optim.SGD(model.parameters(), lr=0.1), loss_fn, steps=1, stream=io.StringIO())
