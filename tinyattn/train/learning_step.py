"""fit's step when it gets its batches as arguments: loss, zero_grad and backward, compiled or not.

With `fit(..., batches=..., compile=True)` the batch is an argument of the step, so ta.compile
captures the step once and replays it (tinyattn/compile/); a loss_fn(step) that draws its batch
inside could not be captured (the batch would be frozen). Clipping reads the gradient norm into
Python and the update may be skipped (a NaN), so fit runs both after the step, eagerly.
"""
from ..compile import compile as compile_step


def learning_step(loss_fn, optimizer, compiled, checked):
    """(*batch) -> loss, after zero_grad and backward; `checked` is fit's check of the loss."""
    def learn(*batch):
        loss = checked(loss_fn(*batch), "batch")
        optimizer.zero_grad()
        loss.backward()
        return loss
    return compile_step(learn) if compiled else learn
