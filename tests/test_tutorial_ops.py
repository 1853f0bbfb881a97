"""The ops a tutorial reaches for, beyond what test_tutorial_ops_parity.py compares with PyTorch:
x.max/x.min's two spellings, sampling and creation, one_hot, ModuleDict, clear errors, and the
AttributeError that names the nearest spelling."""
import subprocess
import sys

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F


def test_max_and_min_mean_what_they_mean_in_pytorch_and_numpy():
    x = ta.tensor([[1.0, 9.0, 2.0], [7.0, 0.0, 3.0]], requires_grad=True)
    values, indices = x.max(1)  # PyTorch: (values, indices); x.max(1)[0] is the values, not row 0
    assert values.data.tolist() == [9, 7] and indices.data.tolist() == [1, 0] and indices.dtype == np.int64
    assert x.max(1)[0].data.tolist() == [9, 7] and x.min(dim=0, keepdim=True).values.shape == (1, 3)
    assert x.max().shape == () and x.max().item() == 9 and x.min().item() == 0
    assert x.max(axis=1).data.tolist() == [9, 7] and x.min(axis=(0, 1), keepdims=True).shape == (1, 1)  # numpy's
    np.testing.assert_array_equal(x.max(ta.tensor([5.0, 5.0, 5.0])).data, [[5, 9, 5], [7, 5, 5]])
    assert repr(x.max(1)).startswith("max(values=tensor(")
    with pytest.raises(TypeError, match="max: dim=.0, 1. names several dims"):
        x.max((0, 1))
    with pytest.raises(TypeError, match="got both axis=0 and dim=1"):
        x.max(1, axis=0)
    with pytest.raises(ValueError, match="min: dim 1 of .2, 0. is empty"):
        ta.zeros(2, 0).min(1)
    assert ta.tensor([[3, 1]]).max(1).values.data.tolist() == [3]  # integers keep their dtype
    assert ta.tensor(np.array([3, 1, 2], np.uint8)).min().item() == 1  # no -x, which wraps around for uint8


def test_multinomial_draws_in_proportion_and_without_repeats():
    ta.manual_seed(0)
    probs = ta.tensor([0.1, 0.0, 0.6, 0.3])
    draws = ta.multinomial(probs, 4000, replacement=True)
    assert draws.dtype == np.int64 and draws.shape == (4000,)
    np.testing.assert_allclose(np.bincount(draws.data, minlength=4) / 4000, [0.1, 0, 0.6, 0.3], atol=0.03)
    rows = ta.multinomial(ta.tensor([[1.0, 1.0, 0.0], [0.0, 2.0, 5.0]]), 2, generator=np.random.default_rng(1))
    assert rows.shape == (2, 2) and all(sorted(r) == s for r, s in zip(rows.data.tolist(), ([0, 1], [1, 2])))
    with pytest.raises(ValueError, match="3 draws without replacement, but a row has only 2"):
        ta.multinomial(ta.tensor([1.0, 0.0, 1.0]), 3)
    first = [ta.multinomial(probs, 1, generator=np.random.default_rng(7)).item() for _ in range(5)]
    assert len(set(first)) == 1  # a generator makes the draw repeat


def test_creation_one_hot_and_their_dtypes():
    assert ta.eye(3).dtype == np.float32 and ta.eye(2, 3).data.tolist() == [[1, 0, 0], [0, 1, 0]]
    x = ta.zeros(2, 3, dtype=np.float64)
    assert ta.full_like(x, 7).dtype == np.float64 and ta.full_like(x, 7).data.max() == 7
    hot = F.one_hot(ta.tensor([2, 0]))
    assert hot.dtype == np.int64 and hot.data.tolist() == [[0, 0, 1], [1, 0, 0]]
    assert F.one_hot(np.array([[1]]), num_classes=4).shape == (1, 1, 4)
    with pytest.raises(ValueError, match=r"one_hot: class indices must lie in \[0, 2\)"):
        F.one_hot(np.array([2]), num_classes=2)


def test_module_dict_names_and_registers_as_pytorch():
    d = nn.ModuleDict({"enc": nn.Linear(2, 3)})
    d["dec"] = nn.Linear(3, 1)
    assert [n for n, _ in d.named_parameters()] == ["enc.weight", "enc.bias", "dec.weight", "dec.bias"]
    assert list(d.state_dict()) == ["enc.weight", "enc.bias", "dec.weight", "dec.bias"]
    assert "enc" in d and len(d) == 2 and list(d) == ["enc", "dec"] and list(d.keys()) == ["enc", "dec"]
    assert d["dec"] is list(d.values())[1] and dict(d.items())["enc"] is d.enc
    del d["enc"]
    assert list(d) == ["dec"] and len(list(d.parameters())) == 2
    with pytest.raises(KeyError, match="not a method's name"):
        d["items"] = nn.Linear(1, 1)


def test_cross_entropy_defaults_are_pytorchs():
    z = ta.tensor(np.zeros((3, 4)))
    assert F.cross_entropy(z, np.array([1, -100, 2])).item() == pytest.approx(np.log(4))  # -100 ignored by default
    assert F.cross_entropy(z, np.array([1, 0, 2]), reduction="none").shape == (3,)
    with pytest.raises(ValueError, match="reduction must be 'mean', 'sum' or 'none'"):
        F.cross_entropy(z, np.array([1, 0, 2]), reduction="avg")
    # weight= (since issue 28; tests/test_math_ops_parity.py checks it against PyTorch): 1s change nothing
    assert F.cross_entropy(z, np.array([1, 0, 2]), weight=np.ones(4)).item() == pytest.approx(np.log(4))


def test_clear_errors_name_the_op_and_the_fix():
    x = ta.zeros(3, 4)
    with pytest.raises(IndexError, match=r"gather: index values must lie in \[0, 4\)"):
        x.gather(1, np.array([[4]]))
    with pytest.raises(ValueError, match=r"split: sizes \[1, 2\] must be >= 0 and add up to 4"):
        x.split([1, 2], dim=1)
    with pytest.raises(ta.ShapeError, match="expand: .3, 4. -> .3, 8.: dim 1 has size 4"):
        x.expand(3, 8)
    with pytest.raises(ValueError, match="topk: k=5 is out of range for 4 entries"):
        x.topk(5)
    with pytest.raises(ta.ShapeError, match="einsum: 'ij' names 2 dims, but that operand has shape .4,."):
        ta.einsum("ij,j->i", ta.zeros(4), ta.zeros(4))
    with pytest.raises(ta.ShapeError, match="tril: needs a matrix"):
        ta.zeros(3).tril()
    with pytest.raises(ValueError, match="binary_cross_entropy: input must be probabilities"):
        F.binary_cross_entropy(ta.tensor([1.5]), ta.tensor([1.0]))


def test_a_missing_pytorch_name_says_so_and_names_the_nearest_spelling():
    x = ta.zeros(2)
    with pytest.raises(AttributeError, match=r"Tensor has no attribute 'amax'.*write x.max\(axis=dims"):
        x.amax
    with pytest.raises(AttributeError):  # a misspelling: Python's own suggestion under the traceback
        x.sofmax
    shown = subprocess.run([sys.executable, "-c", "import tinyattn as ta; ta.zeros(2).sofmax"],
                           capture_output=True, text=True).stderr
    assert "Did you mean: 'softmax'?" in shown, shown
    with pytest.raises(AttributeError, match="module 'tinyattn' has no attribute 'zero_like'.*did you mean zeros_like"):
        ta.zero_like
    with pytest.raises(AttributeError, match="module 'tinyattn.nn' has no attribute 'ModuleDic'.*did you mean ModuleDict"):
        nn.ModuleDic
    with pytest.raises(AttributeError, match="tinyattn.nn.functional' has no attribute 'nll_loss'.*F.cross_entropy"):
        F.nll_loss
    assert not hasattr(x, "__array_interface__") and getattr(x, "cuda", None) is None  # probes still see a plain miss


def test_a_tensor_has_no_getattr_hook():
    """A __getattr__ anywhere in Tensor's classes sends every attribute read, found or not, down
    CPython's slow path (benchmarks/RESULTS.md, "three Tensor attribute reads, a subclass with a __getattr__"): the
    hints are class attributes."""
    assert not any("__getattr__" in vars(cls) for cls in type(ta.zeros(1)).__mro__)


def test_contiguous_copies_only_when_it_must():
    x = ta.tensor(np.ones((2, 3)))
    assert x.contiguous() is x and x.T.contiguous().data.flags.c_contiguous
