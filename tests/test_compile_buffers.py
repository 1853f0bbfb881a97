"""ta.compile's memory plan lends a dead array to a later numpy ufunc of its shape and dtype
(out=, tinyattn/compile/buffers.py): the same bits as eager, and never memory the user can
still see (a parameter or a view of one, an input, a .grad, a tensor the step returned). The
steps here are compiled with fuse=False: fusion turns these element-wise chains into loops,
leaving no ufunc to lend to."""
import warnings

import numpy as np
import pytest

import tinyattn as ta

SHAPE = (64, 48)  # big enough that a sum over another memory order rounds differently


def _chain(w, x):
    """Same-shape element-wise work, each array dead soon after: lending has material. The
    product's arrays are C-ordered whatever the inputs' order; x * w follows x and w's."""
    h = (x @ (w.T @ w) * 0.01).tanh()
    z = h * h + h.exp()
    y = (x * w).tanh() * x
    return ((z - y) * (y + w)).sum(1).sum()


def _run(step, w, calls, dtype, order="C"):
    """(loss, w.grad) of `calls` calls, each on a new batch."""
    rng = np.random.default_rng(0)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(calls):
            x = np.asarray(rng.standard_normal(SHAPE).astype(dtype), order=order)
            w.grad = None  # outside the step: a replay does not run the step's Python
            out.append((step(ta.tensor(x)).item(), w.grad.copy()))
    return out


def _step(w):
    def step(x):
        loss = _chain(w, x)
        loss.backward()
        return loss
    return step


def _params(dtype, order="C"):
    ta.manual_seed(0)
    return ta.tensor(np.asarray(np.random.default_rng(1).standard_normal(SHAPE).astype(dtype), order=order),
                     requires_grad=True)


@pytest.mark.parametrize("fuse", [False, "exact"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ufuncs_write_into_dead_arrays_and_give_eagers_bits(dtype, fuse):
    """Unfused, the ufuncs write into dead arrays; fused (the chain, and w's gradient with it,
    computed in generated loops), the same bits as eager too."""
    results = {}
    for compiled in (False, True):
        w = _params(dtype)
        run = ta.compile(_step(w), fuse=fuse) if compiled else _step(w)
        results[compiled] = _run(run, w, 5, dtype)
    for (la, ga), (lb, gb) in zip(results[False], results[True]):
        assert la == lb
        np.testing.assert_array_equal(ga, gb)
    plan = next(iter(run.entries.values())).plans[0]
    if fuse:
        assert plan.fused, "no run was fused"
    else:
        assert plan.borrow, "no ufunc was given a dead array to write into"
        assert "out=r" in plan.source


def test_what_the_user_can_see_is_never_lent():
    """A parameter, a view of it, the input, the .grad and the returned tensors keep their values
    after later replays: only the step's own dead arrays are written into."""
    w = _params(np.float64)

    def step(x):
        row = w[0]                              # a view of the parameter, dead after the next line
        kept = (x * row).tanh()                 # returned: lives on after the step
        loss = ((kept * kept + x) * (kept - x)).sum()
        loss.backward()
        return loss, kept
    run = ta.compile(step, fuse=False)
    rng = np.random.default_rng(0)
    seen = []
    for _ in range(6):
        x = ta.tensor(rng.standard_normal(SHAPE))
        x_before, w_before = x.data.copy(), w.data.copy()
        w.grad = None
        loss, kept = run(x)
        seen.append((loss, kept, kept.data.copy(), w.grad, w.grad.copy()))
        np.testing.assert_array_equal(x.data, x_before)
        np.testing.assert_array_equal(w.data, w_before)
    assert next(iter(run.entries.values())).replays >= 3
    for loss, kept, kept_copy, grad, grad_copy in seen:
        np.testing.assert_array_equal(kept.data, kept_copy)   # later replays did not write into it
        np.testing.assert_array_equal(grad, grad_copy)
    plan = next(iter(run.entries.values())).plans[0]
    assert plan.borrow
    lent = {reg for reg in plan.borrow.values()}
    inputs = {reg for _, _, reg in plan.inputs}
    assert not lent & inputs


def test_a_parameter_in_another_order_at_replay_runs_eagerly_with_eagers_bits():
    """out= writes in C order where numpy alone follows its inputs' order (a later sum could then
    round differently): a parameter or input whose order changed since the capture fails the
    plan's layout guard, and the step runs as eager runs it."""
    results = {}
    for compiled in (False, True):
        w = _params(np.float32)
        run = ta.compile(_step(w), fuse=False) if compiled else _step(w)
        first = _run(run, w, 4, np.float32)
        replays = sum(entry.replays for entry in run.entries.values()) if compiled else 0
        w.data = np.asfortranarray(w.data)
        results[compiled] = first + _run(run, w, 3, np.float32, order="F")
    for (la, ga), (lb, gb) in zip(results[False], results[True]):
        assert la == lb
        np.testing.assert_array_equal(ga, gb)
    # the C-order plan did not replay on F-ordered arrays: calls 5 and 6 captured the new order, 7 replayed it
    assert sum(entry.replays for entry in run.entries.values()) - replays == 1


def test_two_registers_of_one_array_are_lent_once():
    """x.astype(its dtype, copy=False) is x itself: two registers, one memory. Lent twice, two
    live results would share it."""
    from tinyattn.compile.buffers import lend
    from tinyattn.compile.capture import Reg
    from tinyattn.compile.plan import reads_of

    a, b = np.ones(4), np.ones(4)
    values = [a, b, b] + [np.ones(4) for _ in range(4)]

    def host(function, args, reg):
        return ("host", function, args, {}, (reg,), ((4,),), "one")
    code = [host(np.negative, (Reg(0),), 1), host(np.asarray, (Reg(1),), 2), host(np.negative, (Reg(2),), 3),
            host(np.negative, (Reg(0),), 4), host(np.negative, (Reg(0),), 5), host(np.add, (Reg(4), Reg(5)), 6)]
    written = [ins[4] for ins in code]
    last = {}
    for index, ins in enumerate(code):
        last.update(dict.fromkeys(reads_of(ins), index))
    borrow = lend(code, written, last, {6}, [0], values, reads_of)
    lent = [values[reg] for reg in borrow.values()]
    assert borrow and not any(x is y for i, x in enumerate(lent) for y in lent[i + 1:]), borrow
