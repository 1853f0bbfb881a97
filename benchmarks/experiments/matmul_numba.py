"""Batched matrix product C = A @ B with numpy's broadcasting rules, as a register-tiled kernel.

An experiment, kept for readers and for measuring again: it lost to BLAS on every shape measured
(benchmarks/RESULTS.md, "Matmul"), so tinyattn's products call numpy's matmul (BLAS) and this
file is not part of the package. Run bench_matmul.py or test_matmul_numba.py beside it.

How the Numba kernel works (a GEMM with a 6x8 micro-tile, minus BLAS's k-blocking):

1. Micro-tile. A 6x8 block of C is held in 48 local variables while p runs over k. Each step
   loads 6 values of A (rows i0..i0+5, column p) and 8 contiguous values of B (row p), and does
   48 multiply-adds. LLVM packs each row of 8 locals into SIMD registers (AVX2), so the
   accumulators never touch memory and each output element is written once, after the loop.
2. Packing. B is copied into column panels of 8: b_packed[q, p, c] = B[p, 8q + c], zero-padded
   past column m, so the 8 values the tile needs per step are adjacent in memory whatever the
   stride of B. A transposed view of B (grad @ B.T in backward) is packed straight from its
   own memory order. A is read in place (a row-major copy if it came as a view); its last
   partial row tile reads a zero-padded copy.
3. Cache blocking. Column panels are visited in groups that fit in L2; each A row tile (6 x k,
   in L1) is reused across a whole group.

The multiply-adds are explicit fused multiply-adds (`_fma`, one rounding, like BLAS) rather
than `fastmath`, so inf/nan behave as IEEE says. Numba leaves LLVM's SLP vectorizer (the pass
that turns the 48 scalars into vectors) off by default, so it is switched on only while this
kernel compiles (`_run_kernel`); without it the kernel is ~10x slower. The kernel is serial
(RESULTS.md says what the benchmark found about threads and about BLAS).
"""
import math

import numba
import numpy as np
from numba.extending import intrinsic

MR = 6  # rows of C per micro-tile: 6 x 8 float64 = 12 of AVX2's 16 registers (6 in float32)
NR = 8  # columns of C per micro-tile
L2_BYTES = 512 * 1024  # budget for one group of packed B panels (half of a 1 MiB L2)


def matmul_reference(a, b):
    """The numpy/BLAS reference: (..., n, k) @ (..., k, m) -> (..., n, m)."""
    return np.matmul(a, b)


@intrinsic
def _fma(typingctx, x, y, z):
    """x * y + z rounded once (LLVM's llvm.fma). All three must share one float type."""
    if not (x == y == z and isinstance(x, numba.types.Float)):
        return None

    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic("llvm.fma", [args[0].type] * 3)
        return builder.call(fn, args)

    return x(x, x, x), codegen


@numba.njit(cache=True)
def _micro_tile(a, i0, b_panel):
    """a[i0:i0+6, :] @ b_panel, (6, k) x (k, 8) -> 6x8, as a flat row-major tuple of 48 values.

    The tile is returned rather than stored here: LLVM's SLP vectorizer needs the 48 values
    to leave the function as a unit; a store loop with computed indices makes it give up."""
    z = a.dtype.type(0)
    c00 = c01 = c02 = c03 = c04 = c05 = c06 = c07 = z
    c10 = c11 = c12 = c13 = c14 = c15 = c16 = c17 = z
    c20 = c21 = c22 = c23 = c24 = c25 = c26 = c27 = z
    c30 = c31 = c32 = c33 = c34 = c35 = c36 = c37 = z
    c40 = c41 = c42 = c43 = c44 = c45 = c46 = c47 = z
    c50 = c51 = c52 = c53 = c54 = c55 = c56 = c57 = z
    for p in range(a.shape[1]):
        b0, b1, b2, b3 = b_panel[p, 0], b_panel[p, 1], b_panel[p, 2], b_panel[p, 3]
        b4, b5, b6, b7 = b_panel[p, 4], b_panel[p, 5], b_panel[p, 6], b_panel[p, 7]
        x = a[i0, p]
        c00, c01, c02, c03 = _fma(x, b0, c00), _fma(x, b1, c01), _fma(x, b2, c02), _fma(x, b3, c03)
        c04, c05, c06, c07 = _fma(x, b4, c04), _fma(x, b5, c05), _fma(x, b6, c06), _fma(x, b7, c07)
        x = a[i0 + 1, p]
        c10, c11, c12, c13 = _fma(x, b0, c10), _fma(x, b1, c11), _fma(x, b2, c12), _fma(x, b3, c13)
        c14, c15, c16, c17 = _fma(x, b4, c14), _fma(x, b5, c15), _fma(x, b6, c16), _fma(x, b7, c17)
        x = a[i0 + 2, p]
        c20, c21, c22, c23 = _fma(x, b0, c20), _fma(x, b1, c21), _fma(x, b2, c22), _fma(x, b3, c23)
        c24, c25, c26, c27 = _fma(x, b4, c24), _fma(x, b5, c25), _fma(x, b6, c26), _fma(x, b7, c27)
        x = a[i0 + 3, p]
        c30, c31, c32, c33 = _fma(x, b0, c30), _fma(x, b1, c31), _fma(x, b2, c32), _fma(x, b3, c33)
        c34, c35, c36, c37 = _fma(x, b4, c34), _fma(x, b5, c35), _fma(x, b6, c36), _fma(x, b7, c37)
        x = a[i0 + 4, p]
        c40, c41, c42, c43 = _fma(x, b0, c40), _fma(x, b1, c41), _fma(x, b2, c42), _fma(x, b3, c43)
        c44, c45, c46, c47 = _fma(x, b4, c44), _fma(x, b5, c45), _fma(x, b6, c46), _fma(x, b7, c47)
        x = a[i0 + 5, p]
        c50, c51, c52, c53 = _fma(x, b0, c50), _fma(x, b1, c51), _fma(x, b2, c52), _fma(x, b3, c53)
        c54, c55, c56, c57 = _fma(x, b4, c54), _fma(x, b5, c55), _fma(x, b6, c56), _fma(x, b7, c57)
    tile = (c00, c01, c02, c03, c04, c05, c06, c07, c10, c11, c12, c13, c14, c15, c16, c17,
            c20, c21, c22, c23, c24, c25, c26, c27, c30, c31, c32, c33, c34, c35, c36, c37,
            c40, c41, c42, c43, c44, c45, c46, c47, c50, c51, c52, c53, c54, c55, c56, c57)
    return tile


@numba.njit(cache=True)
def _matmul_kernel(a3, b3, b_transposed, a_index, b_index, b_packed, out):
    """out[t] = a3[a_index[t]] @ B[b_index[t]] for each batch entry t of out (nb, n, m).

    a3 holds each distinct A (n, k); b3 each distinct B (k, m), or B.T (m, k) when
    b_transposed; all C-contiguous. b_packed (len(b3), ceil(m / 8), k, 8) is scratch space."""
    n, m = out.shape[1], out.shape[2]
    k = a3.shape[2]
    col_panels = b_packed.shape[1]
    # Pack every distinct B once, even when broadcasting uses it for many batch entries.
    for s in range(b3.shape[0]):
        for q in range(col_panels):
            used = min(NR, m - q * NR)  # the last panel may be partly padding
            for p in range(k):
                for c in range(NR):
                    if c >= used:
                        b_packed[s, q, p, c] = 0
                    elif b_transposed:
                        b_packed[s, q, p, c] = b3[s, q * NR + c, p]
                    else:
                        b_packed[s, q, p, c] = b3[s, p, q * NR + c]
    n_full = n - n % MR  # rows covered by whole tiles; the rest come from a padded copy
    a_edge = np.zeros((MR, k), out.dtype)
    # Column panels per group: as many as fit in the L2 budget (at least one). Each row
    # tile (6 x k, in L1) then meets the whole group while the group stays in L2.
    group = max(1, L2_BYTES // max(1, k * NR * out.itemsize))
    for t in range(out.shape[0]):
        a, b_panels = a3[a_index[t]], b_packed[b_index[t]]
        for i in range(n_full, n):  # element loop: an array assignment costs 2 s of compile
            for p in range(k):
                a_edge[i - n_full, p] = a[i, p]
        for g0 in range(0, col_panels, group):
            for i0 in range(0, n, MR):
                a_src, a_row = (a, i0) if i0 < n_full else (a_edge, 0)
                for jp in range(g0, min(col_panels, g0 + group)):
                    j0 = jp * NR
                    tile = _micro_tile(a_src, a_row, b_panels[jp])
                    if i0 < n_full and j0 + NR <= m:
                        for r in range(MR):  # whole tile: constant trip counts, so LLVM
                            for c in range(NR):  # unrolls and each tile[...] is a register
                                out[t, i0 + r, j0 + c] = tile[r * NR + c]
                    else:  # edge tile: drop the padding
                        for r in range(min(MR, n - i0)):
                            for c in range(min(NR, m - j0)):
                                out[t, i0 + r, j0 + c] = tile[r * NR + c]


def _run_kernel(*args):
    """_matmul_kernel(*args) with LLVM's SLP vectorizer on (numba's default is off), which
    matters only if this call compiles the kernel: a cached kernel never reads the flag."""
    previous = numba.config.SLP_VECTORIZE
    numba.config.SLP_VECTORIZE = 1
    try:
        _matmul_kernel(*args)
    finally:
        numba.config.SLP_VECTORIZE = previous


_scratch_buffers = {}  # dtype -> 1-D buffer reused for packed panels (keeps its largest size)


def _scratch(dtype, shape):
    """A reused buffer viewed as `shape`: a fresh multi-MB allocation costs more in page
    faults than packing into it. Safe across Python threads because the kernel holds the
    GIL from packing to the last store."""
    size = math.prod(shape)
    buffer = _scratch_buffers.get(dtype)
    if buffer is None or buffer.size < size:
        buffer = _scratch_buffers[dtype] = np.empty(size, dtype)
    return buffer[:size].reshape(shape)


def _stack(x, batch_shape):
    """x (..., r, c) -> (its distinct matrices as a C-contiguous (count, r, c) array, and for
    each entry of the broadcast batch the index of the matrix it uses)."""
    count = math.prod(x.shape[:-2])
    stack = np.ascontiguousarray(x).reshape(count, x.shape[-2], x.shape[-1])
    index = np.arange(count)
    if x.shape[:-2] != batch_shape:  # numpy broadcasting of the batch axes
        index = np.broadcast_to(index.reshape(x.shape[:-2]), batch_shape).ravel()
    return stack, index


def matmul_numba(a, b):
    """Always the Numba kernel; same semantics as matmul_reference."""
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError(f"matmul needs operands with ndim >= 2, got {a.shape} and {b.shape}")
    batch_shape = a.shape[:-2]
    if b.shape[:-2] != batch_shape:
        batch_shape = np.broadcast_shapes(batch_shape, b.shape[:-2])
    n, m = a.shape[-2], b.shape[-1]
    out = np.empty(batch_shape + (n, m), dtype=a.dtype)
    if out.size == 0:
        return out
    # A must be row-major (n, k): a transposed view is copied, O(n k) against the O(n k m)
    # product. B is passed in its own memory order, (k, m) or, for a transposed view such
    # as B.swapaxes(-1, -2), (m, k); packing reads either.
    a3, a_index = _stack(a, batch_shape)
    b_transposed = b.strides[-2] < b.strides[-1] and not b.flags.c_contiguous
    b3, b_index = _stack(b.swapaxes(-1, -2) if b_transposed else b, batch_shape)
    b_packed = _scratch(a.dtype, (len(b3), -(-m // NR), a.shape[-1], NR))
    _run_kernel(a3, b3, b_transposed, a_index, b_index, b_packed, out.reshape(-1, n, m))
    return out
