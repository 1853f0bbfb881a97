"""`fit`: the training loop every demo and test uses.

    history = ta.train.fit(model, optimizer, loss_fn, steps=400,
                           checkpoint="out/model.ckpt.npz", resume=True, rngs={"data": data.rng})

Each step: loss = loss_fn(step); zero the gradients; backward; clip (optional); optimizer.step().
Around that sit the things a run needs to be trusted with an afternoon of work:

  * a progress line (ta.train.Progress) with the loss and any evaluation figures;
  * a checkpoint every `checkpoint_every` steps and at the end, written atomically (ta.save):
    model, optimizer, schedule, tinyattn's random state, the state of every generator in
    `rngs` (where the data stream is), the step and the loss history;
  * `resume=True` continues from that checkpoint exactly: the same batches, the same dropout
    masks, bit-identical parameters, as if the run had never stopped;
  * a clean stop when the loss or the gradient norm turns NaN or inf: no update is made from
    it, nothing is written over the last good checkpoint, and the history says why;
  * Ctrl-C names the checkpoint to resume from, then stops as Python does (KeyboardInterrupt);
  * a one-line notice when Numba compiles tinyattn's kernels (a machine's first run only);
  * `keep_best="val_loss"`: the model's weights at that evaluation figure's lowest so far are
    written to `best_checkpoint`, so a run that starts to overfit keeps its best model.
"""
import contextlib
import math
import os
import sys
import warnings
from dataclasses import dataclass, field

from ..autograd.creation import get_rng_state, set_rng_state
from ..autograd.tensor import Tensor
from ..nn.utils import clip_grad_norm_
from ..ops.blas_threads import set_blas_threads
from ..ops.memory import keep_freed_memory
from .checkpoint import load, save
from .compile_notice import compile_notice
from .learning_step import learning_step
from .progress import Progress


@dataclass
class History:
    """What a run did: the loss of every step so far (a resumed run's earlier ones included),
    evaluation figures by name, and why it stopped early."""

    losses: list = field(default_factory=list)
    evaluations: dict = field(default_factory=dict)  # name -> [(step, value), ...]
    stopped: str = None                              # None when every step ran
    resumed_from: int = 0                            # the step a resumed run started after
    best: tuple = None                               # (step, value) of keep_best's lowest evaluation
    compiled: object = None                          # with compile=True: the compiled step (.explain())

    @property
    def steps_done(self):
        return len(self.losses)


def fit(model, optimizer, loss_fn, steps, *, checkpoint=None, checkpoint_every=100, resume=False,
        clip_grad_norm=None, scheduler=None, rngs=None, evaluate=None, evaluate_every=None,
        label="", stream=None, keep_best=None, best_checkpoint=None, batches=None, compile=False, blas_threads=1):
    """Train for `steps` steps; returns a History. See the module docstring for the guarantees.

    loss_fn(step) -> scalar loss Tensor: draws its own batch (step counts from 1).
    batches: batches(step) -> a tuple of arguments; with it, loss_fn(*batch) computes the loss.
    compile: with batches, run forward and backward as a compiled step (ta.compile): the batch is
      an argument of the step, so it is not frozen into the capture. Without batches, loss_fn(step)
      makes its batch inside the step, which a capture cannot follow: compile is then ignored.
    checkpoint: path of the checkpoint file (its folder must exist), or None for no checkpoints.
    rngs: {name: numpy Generator} whose states belong in the checkpoint (the data's generator).
    evaluate(step) -> {name: number}: called every `evaluate_every` steps and at the last step
      (under no_grad if it wishes); its figures go to the progress line and to the History.
    scheduler: a schedule from ta.optim, stepped once per step and saved with the checkpoint.
    keep_best: the name of an evaluation figure, lower is better; history.best is (step, value) of its
      lowest, and each new lowest writes {"model": state_dict, "step": step, keep_best: value} to
      best_checkpoint (a path, or None to only record it).
    blas_threads: numpy's BLAS threads while training (ta.set_blas_threads), the count before
      restored after; None leaves them as they are. 1: the products are small (ops/blas_threads.py).
    """
    # a block, not a setting: fit leaves the process's thread count as it found it
    with set_blas_threads(blas_threads) if blas_threads is not None else contextlib.nullcontext():
        keep_freed_memory()  # reuse each step's freed arrays: no page faults; mallopt has no getter to restore from
        rngs = dict(rngs or {})
        history = History()
        start = 0
        if resume and checkpoint and os.path.exists(checkpoint):
            start = _restore(load(checkpoint), model, optimizer, scheduler, rngs, history)
            print(f"{label or 'fit'}: resumed from {checkpoint} at step {start}", file=stream or sys.stdout)
        progress = Progress(steps, label=label, stream=stream, start=start)
        if compile and batches is None:
            warnings.warn("fit(compile=True) without batches=: loss_fn(step) makes its batch inside the step, which a "
                          "capture would freeze; pass batches=lambda step: ... and loss_fn(*batch). Training eagerly",
                          stacklevel=2)
        learn = learning_step(loss_fn, optimizer, compile, _checked_loss) if batches is not None else None
        history.compiled = learn if compile and learn is not None else None
        saved = start if start else None
        figures = {}
        step = start
        model.train()
        with compile_notice(stream):  # explains a slow first step, on a machine's first run only
            try:
                for step in range(start + 1, steps + 1):
                    loss = learn(*batches(step)) if learn else _checked_loss(loss_fn(step), step)  # learn: + backward
                    value = loss.item()
                    if learn is None and math.isfinite(value):
                        optimizer.zero_grad()
                        loss.backward()
                    if not math.isfinite(value):
                        history.stopped = _stop_note("the loss", value, step, checkpoint, saved)
                        break
                    norm = clip_grad_norm_(optimizer.params, clip_grad_norm if clip_grad_norm else math.inf)
                    if not math.isfinite(norm):
                        history.stopped = _stop_note("the gradient norm", norm, step, checkpoint, saved)
                        break
                    optimizer.step()
                    if scheduler is not None:
                        scheduler.step()
                    history.losses.append(value)
                    scheduled = evaluate is not None and evaluate_every and step % evaluate_every == 0
                    if scheduled:
                        figures = _evaluate(evaluate, step, model, history, keep_best, best_checkpoint)
                    state = None
                    if checkpoint and (step % checkpoint_every == 0 or step == steps):
                        # taken before the evaluation made only because the run ends here: a longer
                        # run does not make it, and it may draw from the generators resume restores
                        state = _state(model, optimizer, scheduler, rngs, step, history)
                    if evaluate is not None and step == steps and not scheduled:
                        figures = _evaluate(evaluate, step, model, history, keep_best, best_checkpoint)
                    progress.update(step, loss=value, **figures)
                    if state is not None:
                        save(state, checkpoint)
                        saved = step
            except KeyboardInterrupt:
                where = (f"the checkpoint of step {saved} is {checkpoint}; fit(..., resume=True) continues from it"
                         if saved else "no checkpoint was written yet")
                print(f"\n{label or 'fit'}: interrupted at step {step}; {where}", file=stream or sys.stdout)
                raise
        if history.stopped:
            print(f"\n{label or 'fit'}: {history.stopped}", file=stream or sys.stdout)
        return history


def _evaluate(evaluate, step, model, history, keep_best, best_checkpoint):
    figures = evaluate(step)
    model.train()  # evaluate may have switched to eval mode
    for name, figure in figures.items():
        history.evaluations.setdefault(name, []).append((step, figure))
    if keep_best is not None:
        if keep_best not in figures:
            raise ValueError(f"fit: keep_best={keep_best!r} is not a figure evaluate({step}) returned "
                           f"(it returned {sorted(figures)}); name one of them")
        if history.best is None or figures[keep_best] < history.best[1]:
            history.best = (step, figures[keep_best])
            if best_checkpoint:
                save({"model": model.state_dict(), "step": step, keep_best: figures[keep_best]}, best_checkpoint)
    return figures


def _stop_note(what, value, step, checkpoint, saved):
    kept = (f"the last good checkpoint (step {saved}) is {checkpoint}" if checkpoint and saved
            else "no checkpoint was written")
    return (f"stopped at step {step}: {what} is {value}; no update was made from it and {kept}. "
            "Try a smaller learning rate or gradient clipping (clip_grad_norm=1.0).")


def _state(model, optimizer, scheduler, rngs, step, history):
    return {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict() if scheduler is not None else None,
            "rng": get_rng_state(), "rngs": {name: rng.bit_generator.state for name, rng in rngs.items()},
            "step": step, "losses": list(history.losses), "best": list(history.best) if history.best else None,
            "evaluations": {name: [list(pair) for pair in pairs] for name, pairs in history.evaluations.items()}}


def _restore(state, model, optimizer, scheduler, rngs, history):
    missing = sorted(set(rngs) - set(state["rngs"]))
    if missing:
        raise ValueError(f"fit: the checkpoint has no state for the generators {missing}; "
                         "resume with the same rngs= names the run was started with")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    if scheduler is not None and state["scheduler"] is not None:
        scheduler.load_state_dict(state["scheduler"])
    set_rng_state(state["rng"])
    for name, rng in rngs.items():
        rng.bit_generator.state = state["rngs"][name]
    history.losses = list(state["losses"])
    history.evaluations = {name: [tuple(pair) for pair in pairs] for name, pairs in state["evaluations"].items()}
    history.best = tuple(state["best"]) if state.get("best") else None  # older checkpoints have no "best"
    history.resumed_from = int(state["step"])
    return int(state["step"])


def _checked_loss(loss, step):
    """The loss as loss_fn returned it, if it is a one-element Tensor that backward can start from."""
    if not isinstance(loss, Tensor):
        raise TypeError(f"fit: loss_fn({step}) returned a {type(loss).__name__}, not a Tensor; return the loss "
                        "tensor itself (not loss.item() or a number), so that fit can call loss.backward()")
    if loss.data.size != 1 or not loss.requires_grad:
        why = (f"has shape {loss.shape}; reduce it to one number, e.g. loss.mean()" if loss.data.size != 1 else
               "does not require grad: was it computed under ta.no_grad(), or from the data alone?")
        raise ValueError(f"fit: the loss loss_fn({step}) returned {why}")
    return loss
