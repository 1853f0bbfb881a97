"""Each element-wise kernel of the fast path against PyTorch's own op, one thread each, interleaved.

    python benchmarks/bench_kernels_vs_torch.py [--rounds 9]

The kernels are the compiled ones of fast_path.TABLE (tinyattn/ops/kernels/), called directly,
also where the door sends a dtype to the reference instead (float64 gate forwards); torch's side
is the ATen op its autograd calls on CPU, without autograd where ATen has one:

    GELU forward / backward        F.gelu / aten.gelu_backward               (32, 64, 256), GPT's MLP
    softmax forward (causal mask)  masked_fill + torch._softmax              (32, 4, 64, 64), GPT's attention
    log_softmax forward            torch._log_softmax                        (32 * 64, 94), GPT's loss
    softmax backward               torch._softmax_backward_data              (32, 4, 64, 64), GPT's attention
    LayerNorm forward / backward   torch.native_layer_norm / aten.native_layer_norm_backward, dx only
                                                                             (32 * 64, 64), GPT's blocks
    GRU / LSTM gates               ATen's CPU GRUCell / LSTMCell arithmetic after the two products
                                   (RNN.cpp: add, chunk, sigmoid, tanh, ...), forward; backward is
                                   torch's autograd through those ops (CPU has no fused cell)
                                                                             batch 64, hidden 64, the demos'
    Adam's update                  torch._fused_adam_ (Adam(fused=True)'s kernel) and the default
                                   foreach path (torch._foreach_* as Adam(foreach=True) runs them)
                                                                             1e4 and 1e5 elements

Both engines get the same numbers. Each round times every case once per engine, the engine that
goes first alternating round by round, then the kernel's numpy reference (the door's fallback: a
kernel that does not beat it leaves the table). A timing is the best of --repeats loops of calls
long enough to take --min-time, by the thread's CPU time (the machine is shared: CPU time counts
what a call computes, not how long it waited for a core; --wall for wall clock). The table gives
each engine's median over rounds with its range, and the median and range of the per-round ratio
tinyattn / torch (< 1: tinyattn faster). benchmarks/write_results.py puts the table into
benchmarks/RESULTS.md's section "Kernels against PyTorch's own ops".

A speed ratio compares two computations only if they compute the same thing: a second table gives
each side's float32 GELU against the exact value (x Phi(x) in float64 from math.erfc), on 10^6
points spread over [-13, 13] where the exact value is a normal float32 number. torch's CPU GELU
computes 0.5 x (1 + erf(x / sqrt 2)), which cancels for x below about -3 (and is 0 from about -6);
tinyattn's kernel keeps 1e-6 relative error everywhere (tinyattn/ops/kernels/gelu.py), and pays for
it in time. The header names torch's CPU capability: ATen's kernels use 512-bit vectors on an
AVX-512 CPU where LLVM, and so Numba, prefers 256-bit ones.
"""
import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # before Numba loads: kernels on one thread, as torch
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import math  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _timing import markdown_table  # noqa: E402

from tinyattn.ops import fast_path, reference  # noqa: E402
from tinyattn.ops.kernels import gelu, layer_norm, recurrent_gates  # noqa: E402

def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def _both(rng, shape, dtype, scale=1.0):
    a = (rng.standard_normal(shape) * scale).astype(dtype)
    return a, torch.from_numpy(a.copy())


def cases(dtype):
    """(label, (kernel call, numpy reference call), torch call) at the models' shapes, in `dtype`."""
    rng, name = np.random.default_rng(0), np.dtype(dtype).name
    return [case for group in (_gelu, _softmax, _layer_norm, _gru, _lstm, _adam) for case in group(rng, dtype, name)]


def _ours(name, *args):
    """(the compiled kernel `name` on args, its numpy reference on the same args), as calls."""
    kernel, reference_function = fast_path.kernel(name), fast_path.reference(name)
    return (lambda: kernel(*args)), (lambda: reference_function(*args))


# one function per kernel: the lambdas close over its own arrays
def _gelu(rng, dtype, name):
    out = []
    x, xt = _both(rng, (32, 64, 256), dtype, 1.5)
    g, gt = _both(rng, x.shape, dtype)
    _, cdf = gelu.gelu(x, "none")
    out.append((f"GELU forward (32, 64, 256) {name}", _ours("gelu", x, "none"), lambda: F.gelu(xt)))
    out.append((f"GELU backward (32, 64, 256) {name}", _ours("gelu_backward", x, cdf, g, "none"),
                lambda: torch.ops.aten.gelu_backward(gt, xt)))
    return out


def _softmax(rng, dtype, name):
    out = []
    s, st = _both(rng, (32, 4, 64, 64), dtype, 2.0)
    causal = np.tril(np.ones((64, 64), bool))  # True = may attend, as tinyattn's masks
    excluded = torch.from_numpy(~causal)
    out.append((f"softmax forward, causal (32, 4, 64, 64) {name}", _ours("softmax", s, causal),
                lambda: torch._softmax(st.masked_fill(excluded, float("-inf")), -1, False)))
    logits, logits_t = _both(rng, (32 * 64, 94), dtype, 2.0)
    out.append((f"log_softmax forward (2048, 94) {name}", _ours("log_softmax", logits),
                lambda: torch._log_softmax(logits_t, -1, False)))
    y = reference.softmax(s)
    yt = torch.from_numpy(y.copy())
    g, gt = _both(rng, s.shape, dtype)
    torch_dtype = yt.dtype
    out.append((f"softmax backward (32, 4, 64, 64) {name}", _ours("softmax_backward", y, g),
                lambda: torch._softmax_backward_data(gt, yt, -1, torch_dtype)))
    return out


def _layer_norm(rng, dtype, name):
    out = []
    x, xt = _both(rng, (32 * 64, 64), dtype, 2.0)
    w, wt = _both(rng, (64,), dtype)
    b, bt = _both(rng, (64,), dtype)
    g, gt = _both(rng, x.shape, dtype)
    _, x_hat, inv_std = layer_norm.layer_norm(x, (1,), w, b, 1e-5)
    _, mean_t, rstd_t = torch.native_layer_norm(xt, (64,), wt, bt, 1e-5)
    out.append((f"LayerNorm forward (2048, 64) {name}", _ours("layer_norm", x, (1,), w, b, 1e-5),
                lambda: torch.native_layer_norm(xt, (64,), wt, bt, 1e-5)))
    out.append((f"LayerNorm backward (2048, 64) {name}",
                _ours("layer_norm_backward", g, (1,), x_hat, inv_std, w),
                lambda: torch.ops.aten.native_layer_norm_backward(gt, xt, (64,), mean_t, rstd_t, wt, bt,
                                                                  [True, False, False])))
    return out


B, H = 64, 64


def _gru(rng, dtype, name):
    out = []
    gi, git = _both(rng, (B, 3 * H), dtype, 2.0)
    gh, ght = _both(rng, (B, 3 * H), dtype, 2.0)
    h, ht = _both(rng, (B, H), dtype)
    g, gt = _both(rng, (B, H), dtype)
    _, r, z, n = recurrent_gates.gru_gates(gi, gh, h, None)

    def torch_gru(gi, gh, h):  # ATen's GRUCell after its two products (aten/src/ATen/native/RNN.cpp)
        i_r, i_z, i_n = gi.chunk(3, 1)
        h_r, h_z, h_n = gh.chunk(3, 1)
        reset, update = (h_r + i_r).sigmoid(), (h_z + i_z).sigmoid()
        new = (i_n + h_n * reset).tanh()
        return (h - new) * update + new

    leaves = [t.clone().requires_grad_() for t in (git, ght, ht)]
    gru_out = torch_gru(*leaves)
    out.append((f"GRU gates forward (64, 64) {name}", _ours("gru_gates", gi, gh, h, None),
                lambda: torch_gru(git, ght, ht)))
    out.append((f"GRU gates backward (64, 64) {name}",
                _ours("gru_gates_backward", g, h, r, z, n, gh, None),
                lambda: torch.autograd.grad(gru_out, leaves, gt, retain_graph=True)))
    return out


def _lstm(rng, dtype, name):
    out = []
    h, _ = _both(rng, (B, H), dtype)
    g, gt = _both(rng, (B, H), dtype)
    gates, gates_t = _both(rng, (B, 4 * H), dtype, 2.0)
    c, ct = _both(rng, (B, H), dtype)
    lstm = recurrent_gates.lstm_gates(gates, c, h, None)

    def torch_lstm(gates, c):  # ATen's LSTMCell after its products
        i, f, g, o = gates.chunk(4, 1)
        i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
        c_new = f * c + i * g
        return o * c_new.tanh(), c_new

    lstm_leaves = [t.clone().requires_grad_() for t in (gates_t, ct)]
    h_t, c_t = torch_lstm(*lstm_leaves)
    out.append((f"LSTM gates forward (64, 64) {name}", _ours("lstm_gates", gates, c, h, None),
                lambda: torch_lstm(gates_t, ct)))
    out.append((f"LSTM gates backward (64, 64) {name}",
                _ours("lstm_gates_backward", g, g, c, *lstm[2:], None),
                lambda: torch.autograd.grad((h_t, c_t), lstm_leaves, (gt, gt), retain_graph=True)))
    return out


def _adam(rng, dtype, name):
    out = []
    for size in (10_000, 100_000):
        p, pt = _both(rng, (size,), dtype)
        g, gt = _both(rng, (size,), dtype)
        m, v = np.zeros_like(p), np.zeros_like(p)
        mt, vt = torch.zeros_like(pt), torch.zeros_like(pt)
        step_t = torch.tensor(1.0)
        t = dtype
        args = ((t(0.9), t(0.1)), (t(0.999), t(0.001)), t(1e-3 / 0.1), t(np.sqrt(0.001)), t(1e-8), t(0.0))

        def torch_foreach(pt=pt, gt=gt, mt=mt, vt=vt):  # Adam(foreach=True)'s arithmetic, capturable=False
            torch._foreach_lerp_([mt], [gt], 0.1)
            torch._foreach_mul_([vt], 0.999)
            torch._foreach_addcmul_([vt], [gt], [gt], 0.001)
            denom = torch._foreach_sqrt([vt])
            torch._foreach_div_(denom, float(np.sqrt(0.001)))
            torch._foreach_add_(denom, 1e-8)
            torch._foreach_addcdiv_([pt], [mt], denom, -1e-2)

        out.append((f"Adam update ({size:,},) {name} vs fused",
                    _ours("adam_update", p, g, m, v, *args),
                    lambda pt=pt, gt=gt, mt=mt, vt=vt, step_t=step_t: torch._fused_adam_(
                        [pt], [gt], [mt], [vt], [], [step_t], lr=1e-3, beta1=0.9, beta2=0.999, weight_decay=0.0,
                        eps=1e-8, amsgrad=False, maximize=False)))
        out.append((f"Adam update ({size:,},) {name} vs foreach",
                    _ours("adam_update", p, g, m, v, *args), torch_foreach))
    return out


CLOCK = time.thread_time  # --wall: time.perf_counter


def _time_us(fn, loops, repeats=1):
    """The best of `repeats` timings of `loops` calls, in us a call."""
    best = float("inf")
    for _ in range(repeats):
        start = CLOCK()
        for _ in range(loops):
            fn()
        best = min(best, CLOCK() - start)
    return best / loops * 1e6


def _loops(fn, min_time):
    fn()
    loops = 1
    while _time_us(fn, loops) * loops < min_time * 1e6:
        loops *= 2
    return loops


def run(rounds, min_time, dtypes, repeats):
    torch.set_num_threads(1)
    all_cases = [(label, ours[0], theirs, ours[1]) for dtype in dtypes for label, ours, theirs in cases(dtype)]
    loops = [[_loops(fn, min_time) for fn in fns] for _, *fns in all_cases]
    times = [([], [], []) for _ in all_cases]
    for r in range(rounds):
        for k, (_, *fns) in enumerate(all_cases):
            order = (0, 1, 2) if (r + k) % 2 == 0 else (1, 0, 2)  # tinyattn and torch take turns going first
            for side in order:
                times[k][side].append(_time_us(fns[side], loops[k][side], repeats))
    rows = []
    for (label, *_), (ours, theirs, numpy_reference) in zip(all_cases, times):
        ratios = sorted(a / b for a, b in zip(ours, theirs))
        rows.append({"kernel": label,
                     "tinyattn us": f"{statistics.median(ours):.1f} ({min(ours):.1f}-{max(ours):.1f})",
                     "torch us": f"{statistics.median(theirs):.1f} ({min(theirs):.1f}-{max(theirs):.1f})",
                     "ratio": f"**{statistics.median(ratios):.2f}** ({ratios[0]:.2f}-{ratios[-1]:.2f})",
                     "numpy reference us": f"{statistics.median(numpy_reference):.1f}"})
    return rows


def gelu_accuracy(points=10**6):
    """Rows for float32 GELU's error against the exact value, tinyattn's kernel and torch's F.gelu."""
    x = np.random.default_rng(0).uniform(-13, 13, points).astype(np.float32)
    wide = x.astype(np.float64)
    exact = wide * 0.5 * np.array([math.erfc(-v / math.sqrt(2)) for v in wide])
    normal = np.abs(exact) >= np.finfo(np.float32).tiny
    rows = []
    for engine, y in (("tinyattn", gelu.gelu(x, "none")[0]), ("torch", F.gelu(torch.from_numpy(x)).numpy())):
        relative = np.abs(y[normal] - exact[normal]) / np.abs(exact[normal])
        zero = x[normal & (y == 0)]
        rows.append({"engine": engine, "max relative error": f"{relative.max():.1e}",
                     "share above 1e-6": f"{(relative > 1e-6).mean():.1%}",
                     "worst x": f"{x[normal][relative.argmax()]:.2f}",
                     "largest x given 0": f"{zero.max():.2f}" if zero.size else "never"})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--min-time", type=float, default=0.02, help="seconds per timing")
    parser.add_argument("--dtype", choices=["float32", "float64", "both"], default="both")
    parser.add_argument("--repeats", type=int, default=3, help="timings per round and side; the best counts")
    parser.add_argument("--wall", action="store_true", help="wall-clock time instead of the thread's CPU time")
    args = parser.parse_args()
    dtypes = [np.float32, np.float64] if args.dtype == "both" else [getattr(np, args.dtype)]
    global CLOCK
    CLOCK = time.perf_counter if args.wall else time.thread_time
    load_before, started = os.getloadavg()[0], datetime.datetime.now()
    rows = run(args.rounds, args.min_time, dtypes, args.repeats)
    load_after = os.getloadavg()[0]
    table = markdown_table(rows, ["kernel", "tinyattn us", "torch us", "ratio", "numpy reference us"])
    command = "python benchmarks/bench_kernels_vs_torch.py " + " ".join(sys.argv[1:])
    header = (f"Measured {started:%Y-%m-%d %H:%M} by `{command.strip()}` on {cpu_model()} ({os.cpu_count()} cores), "
              f"numpy {np.__version__}, torch {torch.__version__}, one thread each; 1-minute load average "
              f"{load_before:.1f} before, {load_after:.1f} after. {args.rounds} interleaved rounds, each "
              f"the best of {args.repeats} timings of >= {args.min_time * 1e3:g} ms by "
              f"{'wall clock' if args.wall else 'the thread CPU time'}: times are medians (range) over rounds, "
              f"the ratio tinyattn / torch is the median (range) of the per-round ratios (< 1: tinyattn faster).")
    accuracy = markdown_table(gelu_accuracy(), ["engine", "max relative error", "share above 1e-6", "worst x",
                                                "largest x given 0"])
    print(header + f" torch's CPU capability: {torch.backends.cpu.get_cpu_capability()}.\n\n" + table
          + "\n\nfloat32 GELU against the exact value, 10^6 points in [-13, 13] (normal results only):\n\n"
          + accuracy)


if __name__ == "__main__":
    main()
