"""The ops a tutorial reaches for equal PyTorch's: outputs and gradients (random upstream, float64),
on transposed (non-contiguous) inputs and on 0-d or empty ones where the op takes them."""
import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn.functional as F
from tinyattn.autograd.tensor import wrap

torch = pytest.importorskip("torch")
TF = torch.nn.functional

R = np.random.default_rng(3)
A = R.standard_normal((4, 3)).T          # (3, 4), transposed: non-contiguous
B = R.standard_normal((2, 3, 4))
TIES = np.array([[1.0, 2.0, 2.0], [0.5, 0.5, -1.0]])
P = R.uniform(0.05, 0.95, (4, 3)).T
PW = R.uniform(0.5, 2.0, 4)
T01 = (R.random((3, 4)) > 0.5).astype(np.float64)
IDX = np.array([[0, 2], [3, 3], [1, 0]])
TARGET = np.array([0, 2, -100, 1])

# (name, tinyattn fn, torch fn, inputs): fns take the tensors of `inputs` in order
CASES = [
    ("tril", lambda x: x.tril(), lambda x: x.tril(), [A]),
    ("triu diagonal=1, batched", lambda x: ta.triu(x, diagonal=1), lambda x: torch.triu(x, diagonal=1), [B]),
    ("split int", lambda x: x.split(3, dim=1), lambda x: x.split(3, dim=1), [A]),
    ("split sizes", lambda x: ta.split(x, [1, 3], 1), lambda x: torch.split(x, [1, 3], 1), [A]),
    ("chunk", lambda x: x.chunk(3, dim=-1), lambda x: x.chunk(3, dim=-1), [A]),
    ("squeeze", lambda x: x.reshape(1, 3, 1, 4).squeeze(), lambda x: x.reshape(1, 3, 1, 4).squeeze(), [A]),
    ("squeeze dim", lambda x: x.reshape(1, 3, 1, 4).squeeze(2), lambda x: x.reshape(1, 3, 1, 4).squeeze(2), [A]),
    ("unsqueeze", lambda x: x.unsqueeze(-2), lambda x: x.unsqueeze(-2), [A]),
    ("flatten", lambda x: x.flatten(1), lambda x: x.flatten(1), [B]),
    ("flatten 0-d", lambda x: x.flatten(), lambda x: x.flatten(), [np.array(2.5)]),
    ("unflatten", lambda x: x.unflatten(1, (2, -1)), lambda x: x.unflatten(1, (2, -1)), [A]),
    ("expand", lambda x: x[:, :1].expand(2, -1, 5), lambda x: x[:, :1].expand(2, -1, 5), [A]),
    ("repeat", lambda x: x.repeat(2, 1, 2), lambda x: x.repeat(2, 1, 2), [A]),
    ("flip", lambda x: x.flip((0, 2)), lambda x: x.flip((0, 2)), [B]),
    ("min", lambda x: x.min(), lambda x: x.min(), [A]),
    ("max() ties share", lambda x: x.max(), lambda x: x.max(), [TIES]),
    ("max(dim) ties to the index", lambda x: tuple(x.max(1)), lambda x: tuple(x.max(1)), [TIES]),
    ("min(dim, keepdim)", lambda x: tuple(x.min(0, keepdim=True)), lambda x: tuple(x.min(0, keepdim=True)), [A]),
    ("maximum ties", lambda a, b: ta.maximum(a, b), lambda a, b: torch.maximum(a, b), [TIES, TIES[::-1]]),
    ("minimum broadcast", lambda a, b: ta.minimum(a, b), lambda a, b: torch.minimum(a, b), [A, A[0]]),
    ("clamp numbers", lambda x: x.clamp(min=-0.5, max=0.5), lambda x: x.clamp(min=-0.5, max=0.5), [A]),
    ("clip tensors", lambda x, lo: ta.clip(x, lo, lo + 0.5), lambda x, lo: torch.clip(x, lo, lo + 0.5), [A, A[0] * 0.3]),
    ("var", lambda x: x.var(1), lambda x: x.var(1), [A]),
    ("var unbiased=False keepdim", lambda x: x.var(0, False, True), lambda x: x.var(0, False, True), [A]),
    ("std correction=0", lambda x: x.std((0, 2), correction=0), lambda x: x.std((0, 2), correction=0), [B]),
    ("logsumexp", lambda x: x.logsumexp(1), lambda x: x.logsumexp(1), [A * 300]),
    ("logsumexp 0-d", lambda x: ta.logsumexp(x, 0), lambda x: torch.logsumexp(x, 0), [np.array(1.5)]),
    ("cumsum", lambda x: x.cumsum(1), lambda x: x.cumsum(1), [A]),
    ("cumsum empty", lambda x: x.cumsum(0), lambda x: x.cumsum(0), [np.zeros((0, 3))]),
    ("gather", lambda x: x.gather(1, IDX), lambda x: x.gather(1, torch.tensor(IDX)), [A]),
    ("einsum bij,bjk->bik", lambda a, b: ta.einsum("bij,bjk->bik", a, b), lambda a, b: torch.einsum("bij,bjk->bik", a, b),
     [B.transpose(0, 2, 1), B]),
    ("einsum bhqd,bhkd->bhqk", lambda a, b: ta.einsum("bhqd,bhkd->bhqk", a, b), lambda a, b: torch.einsum("bhqd,bhkd->bhqk", a, b),
     [R.standard_normal((2, 2, 3, 4)), R.standard_normal((2, 2, 5, 4))]),
    ("einsum i,j->ij", lambda u, v: ta.einsum("i,j->ij", u, v), lambda u, v: torch.einsum("i,j->ij", u, v), [A[0], A[:, 1]]),
    ("einsum trace", lambda x: ta.einsum("ii", x), lambda x: torch.einsum("ii", x), [A[:, :3]]),
    ("einsum sum ij->j", lambda x: ta.einsum("ij->j", x), lambda x: torch.einsum("ij->j", x), [A]),
    ("topk", lambda x: tuple(x.topk(2)), lambda x: tuple(x.topk(2)), [A]),
    ("topk smallest dim 0", lambda x: tuple(ta.topk(x, 2, dim=0, largest=False)), lambda x: tuple(torch.topk(x, 2, dim=0, largest=False)), [A]),
    ("F.pad", lambda x: F.pad(x, (1, 2, 0, 1), value=0.25), lambda x: TF.pad(x, (1, 2, 0, 1), value=0.25), [B]),
    ("F.pad negative", lambda x: F.pad(x, (-1, 2)), lambda x: TF.pad(x, (-1, 2)), [A]),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), lambda x: TF.leaky_relu(x, 0.2), [np.append(A.ravel(), 0.0)]),
    ("softplus", lambda x: F.softplus(x * 30, beta=0.5, threshold=5),
     lambda x: TF.softplus(x * 30, beta=0.5, threshold=5), [np.append(A.ravel(), [0.0, 800.0, -800.0])]),
    ("elu", lambda x: F.elu(x * 3, alpha=0.7), lambda x: TF.elu(x * 3, alpha=0.7), [np.append(A.ravel(), [0.0, 900.0])]),
    ("bce weight", lambda p, t: F.binary_cross_entropy(p, t, weight=ta.tensor(PW)),
     lambda p, t: TF.binary_cross_entropy(p, t, weight=torch.tensor(PW)), [P, T01]),
    ("bce sum", lambda p, t: F.binary_cross_entropy(p, t, reduction="sum"),
     lambda p, t: TF.binary_cross_entropy(p, t, reduction="sum"), [P, T01]),
    ("bce with logits, large, pos_weight", lambda z, t: F.binary_cross_entropy_with_logits(z * 50, t, reduction="none", pos_weight=ta.tensor(PW)),
     lambda z, t: TF.binary_cross_entropy_with_logits(z * 50, t, reduction="none", pos_weight=torch.tensor(PW)), [A, T01]),
    ("bce with logits at 0", lambda z, t: F.binary_cross_entropy_with_logits(z * 0, t),
     lambda z, t: TF.binary_cross_entropy_with_logits(z * 0, t), [A, T01]),
    ("cross_entropy mean, smoothing, ignore -100", lambda z: F.cross_entropy(z, TARGET, label_smoothing=0.2),
     lambda z: TF.cross_entropy(z, torch.tensor(TARGET), label_smoothing=0.2), [A.T]),
    ("cross_entropy none", lambda z: F.cross_entropy(z, TARGET, reduction="none"),
     lambda z: TF.cross_entropy(z, torch.tensor(TARGET), reduction="none"), [A.T]),
    ("cross_entropy sum, smoothing", lambda z: F.cross_entropy(z, TARGET, reduction="sum", label_smoothing=0.1),
     lambda z: TF.cross_entropy(z, torch.tensor(TARGET), reduction="sum", label_smoothing=0.1), [A.T]),
    ("add/sub alpha, mul, div, neg, pow", lambda a, b: a.add(b, alpha=2).sub(b, alpha=0.5).mul(b).div(b.pow(2) + 1).neg(),
     lambda a, b: a.add(b, alpha=2).sub(b, alpha=0.5).mul(b).div(b.pow(2) + 1).neg(), [A, A[0]]),
    ("norm", lambda x: x.norm(), lambda x: x.norm(), [A]),
    ("norm p=1 dim", lambda x: x.norm(1, dim=1, keepdim=True), lambda x: x.norm(1, dim=1, keepdim=True), [A]),
    ("norm p=3 dim", lambda x: x.norm(3, dim=0), lambda x: x.norm(3, dim=0), [A]),
    ("norm of zeros", lambda x: (x * 0).norm(dim=1), lambda x: (x * 0).norm(dim=1), [A]),
    ("contiguous", lambda x: x.contiguous(), lambda x: x.contiguous(), [A]),
]


def test_the_samples_include_non_contiguous_0d_and_empty_inputs():
    arrays = [a for case in CASES for a in case[3]]
    assert any(not a.flags.c_contiguous for a in arrays) and any(a.ndim == 0 for a in arrays)
    assert any(a.size == 0 for a in arrays)


@pytest.mark.parametrize("name, ours, theirs, arrays", CASES, ids=[c[0] for c in CASES])
def test_forward_and_gradients_equal_pytorchs(name, ours, theirs, arrays):
    mine = [wrap(a).requires_grad_() for a in arrays]  # wrap keeps a transposed layout as it is
    yours = [torch.tensor(np.ascontiguousarray(a), requires_grad=True) for a in arrays]
    out, expected = ours(*mine), theirs(*yours)
    out = out if isinstance(out, tuple) else (out,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(out) == len(expected)
    rng = np.random.default_rng(5)
    ups = []
    for o, e in zip(out, expected):
        np.testing.assert_allclose(o.data, e.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=name)
        assert o.data.shape == tuple(e.shape) and o.data.dtype == e.detach().numpy().dtype, name
        ups.append(rng.standard_normal(o.data.shape) if o.data.dtype.kind == "f" else None)
    pairs = [(o, e, u) for o, e, u in zip(out, expected, ups) if u is not None and o.requires_grad]
    ta.backward([o for o, _, _ in pairs], [u for _, _, u in pairs])
    torch.autograd.backward([e for _, e, _ in pairs], [torch.tensor(u) for _, _, u in pairs])
    for i, (m, y) in enumerate(zip(mine, yours)):
        expected_grad = np.zeros(m.shape) if y.grad is None else y.grad.numpy()
        got = np.zeros(m.shape) if m.grad is None else m.grad
        np.testing.assert_allclose(got, expected_grad, rtol=1e-9, atol=1e-12, err_msg=f"{name}: d/d input {i}")
