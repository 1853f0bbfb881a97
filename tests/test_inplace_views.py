"""In-place changes through views, as PyTorch makes them: an in-place op on one element or a
view reaches the tensor and rewrites the base's history (PyTorch's CopySlices), index assignment
writes where the same index reads, the copies kept for in-place changes die with the graph, writes
into an expanded tensor are refused where they would write one element twice, and the ops PyTorch
documents as returning a new tensor return one. Each test compares with PyTorch where it is installed."""
import gc
import tracemalloc

import numpy as np
import pytest

import tinyattn as ta


def _both(build):
    """build(lib) run with tinyattn and with torch (skipped without it): the two results as arrays."""
    torch = pytest.importorskip("torch")
    return [build(lib) for lib in (ta, torch)]


def _array(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "numpy") and not isinstance(t, ta.Tensor) else t.data)


def _contiguous(t):
    return t.data.flags.c_contiguous if isinstance(t, ta.Tensor) else t.is_contiguous()


# --- an in-place op on one element (or a view) reaches the tensor ------------------------------

def test_an_in_place_op_on_one_element_reaches_the_tensor():
    def build(lib):
        x = lib.tensor(np.zeros((3, 4)))
        x[1, 2].add_(1.0)
        x[0][1].fill_(7)
        x[2, 3].mul_(5)
        return _array(x).copy()
    ours, theirs = _both(build)
    np.testing.assert_array_equal(ours, theirs)


def test_an_in_place_op_on_a_piece_of_unbind_reaches_a_1d_tensor():
    def build(lib):
        y = lib.tensor(np.arange(3.0))
        lib.unbind(y, 0)[0].add_(10)
        return _array(y).copy()
    ours, theirs = _both(build)
    np.testing.assert_array_equal(ours, theirs)


def test_a_piece_of_unbind_or_split_of_a_graph_tensor_changed_in_place_is_refused_as_in_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (torch, ta):
        h = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True) * 2
        with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
            lib.unbind(h, 0)[1].mul_(3)
        with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
            h.split(1, dim=1)[2].add_(1)


def test_a_fully_indexed_element_is_a_0d_view_sharing_the_version_counter():
    x = ta.tensor(np.zeros((3, 4)))
    element = x[1, 2]
    assert element.shape == () and np.shares_memory(element.data, x.data)
    x.add_(1)
    assert element._version == x._version == 1 and element.item() == 1.0
    element.mul_(3)
    assert x._version == 2 and x.data[1, 2] == 3.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_an_in_place_op_on_an_element_of_a_graph_tensor_rewrites_its_history_as_pytorch(dtype):
    def build(lib):
        w = lib.tensor(np.arange(4.0, dtype=dtype), requires_grad=True)
        h = w * w
        h[2].mul_(100)
        (h * w).sum().backward()
        return _array(h).copy(), np.asarray(w.grad).copy()
    (h_ours, g_ours), (h_theirs, g_theirs) = _both(build)
    np.testing.assert_allclose(h_ours, h_theirs)
    np.testing.assert_allclose(g_ours, g_theirs, rtol=1e-6)


def test_in_place_ops_on_views_of_views_slices_and_transposes_match_pytorch():
    rng = np.random.default_rng(0)
    w0, v0, g0 = rng.normal(size=(3, 4)), rng.normal(size=2), rng.normal(size=(3, 4))

    def build(lib):
        w = lib.tensor(w0, requires_grad=True)
        v = lib.tensor(v0, requires_grad=True)
        h = w.tanh()                  # saves its output: the change below is of a copy, not h
        b = h * 1.0
        b.T[1][1:3].mul_(v)           # a view of a view of a view, with an operand in the graph
        b[0].add_(b[2].detach())      # a row, by another row's values
        b[2, 3].fill_(5.0)            # one element: no gradient to what was there
        out = (b * b).sum() + (b * lib.tensor(g0)).sum()
        out.backward()
        return _array(b).copy(), np.asarray(w.grad).copy(), np.asarray(v.grad).copy()
    ours, theirs = _both(build)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_a_view_of_a_tensor_outside_the_graph_changed_by_a_value_in_it_matches_pytorch():
    def build(lib):
        base = lib.zeros(3, 2, dtype=lib.float64)
        w = lib.tensor(np.array([1.0, 2.0]), requires_grad=True)
        base[0].copy_(w * 3)
        base[1].add_(w)
        (base * base).sum().backward()
        return _array(base).copy(), np.asarray(w.grad).copy()
    ours, theirs = _both(build)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b)


def test_a_saved_output_changed_through_one_element_raises_at_backward():
    torch = pytest.importorskip("torch")
    for lib in (torch, ta):
        w = lib.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
        y = w.exp()  # exp keeps its output for backward
        y[1].mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_a_view_of_a_leaf_that_requires_grad_is_refused_with_pytorchs_words():
    torch = pytest.importorskip("torch")
    for lib in (torch, ta):
        w = lib.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            w[1].add_(1)


def test_a_view_taken_before_its_base_changed_through_another_view_gets_pytorchs_gradient():
    """PyTorch regenerates the history of every view of a changed base: a view taken before the
    change and used after it passes its gradient through the change."""
    def build(lib):
        w = lib.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        h = w * w
        first_rows, column, flat = h[0:2], h[:, 1], h.T   # taken before the changes
        h[1, 1].mul_(100)
        column[2:].add_(w[0, 0])
        out = (first_rows * 1.0).sum() + (column * column).sum() + (flat @ lib.tensor(np.ones((3, 2)))).pow(2).sum()
        out.backward()
        return np.asarray(w.grad).copy()
    ours, theirs = _both(build)
    np.testing.assert_allclose(ours, theirs)


# --- t[0, :, idx] = v writes where t[0, :, idx] reads ----------------------------------------------

@pytest.mark.parametrize("idx", [[0, 2], [3, 1, 0]])
def test_index_assignment_mixing_integers_and_arrays_writes_where_it_reads(idx):
    def build(lib):
        t = lib.tensor(np.zeros((2, 3, 4)))
        value = lib.tensor(np.arange(3.0 * len(idx)).reshape(3, len(idx)))
        t[0, :, idx] = value
        return _array(t).copy(), _array(t[0, :, idx]).copy()
    (t_ours, read_ours), (t_theirs, read_theirs) = _both(build)
    np.testing.assert_array_equal(t_ours, t_theirs)
    np.testing.assert_array_equal(read_ours, read_theirs)


# --- the copies kept by in-place changes die with the graph -----------------------------------------

def test_copies_kept_by_in_place_changes_do_not_outlive_backward():
    w = ta.tensor(np.ones(2000), requires_grad=True)
    gc.collect()
    tracemalloc.start()
    try:
        y = w * 1.0
        for _ in range(400):
            y.add_(0.001)
        (y * y).sum().backward()
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    one_copy = 2000 * 8  # what remains is y, w.grad and a small record per change (as PyTorch's nodes)
    assert held < 30 * one_copy, f"{held / 1e6:.2f} MB held after backward (400 copies would be 6.4 MB)"
    np.testing.assert_allclose(w.grad, 2 * (1 + 400 * 0.001))


# --- clear errors ------------------------------------------------------------------------------------

def test_add_on_an_expanded_tensor_raises_pytorchs_error():
    torch = pytest.importorskip("torch")
    for lib in (torch, ta):
        x = lib.zeros(1, 3).expand(4, 3)
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single"):
            x.add_(1)


def test_index_assignment_into_an_expanded_tensor_writes_or_refuses_as_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (torch, ta):
        x = lib.zeros(1, 3).expand(4, 3)
        x[0] = 5.0  # a row: no element twice, so it writes the one row every row shows
        assert np.array_equal(_array(x), np.full((4, 3), 5.0))
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single"):
            x[:, 0] = lib.arange(4.0)


def test_add_on_an_expand_that_repeats_nothing_changes_the_source_as_pytorch():
    def build(lib):
        x = lib.tensor(np.arange(12.0).reshape(3, 4))
        x[:1].expand(1, 4).add_(100)   # the same shape: nothing repeated
        x[2].expand(1, 1, 4).mul_(-1)  # new leading dims of size 1
        return _array(x).copy()
    ours, theirs = _both(build)
    np.testing.assert_array_equal(ours, theirs)


def test_fill_with_a_tensor_of_several_elements_names_the_op_and_shape():
    torch = pytest.importorskip("torch")
    for lib in (torch, ta):
        x = lib.zeros(3)
        with pytest.raises(RuntimeError, match="fill_"):
            x.fill_(lib.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match=r"\(3,\)"):
        ta.zeros(3).fill_(ta.tensor([1.0, 2.0, 3.0]))


def test_fill_with_a_0d_tensor_of_another_float_dtype_fills_as_pytorch():
    def build(lib):
        x = lib.zeros(3, dtype=lib.float64)
        x.fill_(lib.tensor(2.5, dtype=lib.float32))
        return _array(x).copy()
    ours, theirs = _both(build)
    np.testing.assert_array_equal(ours, theirs)


# --- ops PyTorch documents as returning a new tensor return one -------------------------------------

NEW_TENSOR_OPS = {
    "flip": lambda lib, x: x.flip(1),
    "flip_both": lambda lib, x: x.flip((0, 1)),
    "repeat": lambda lib, x: x.repeat(2, 1),
    "tril": lambda lib, x: x.tril(),
    "triu": lambda lib, x: x.triu(1),
    "cat": lambda lib, x: lib.cat([x], 0),
    "stack": lambda lib, x: lib.stack([x], 0),
    "clone": lambda lib, x: x.clone(),
    "contiguous_of_transposed": lambda lib, x: x.T.contiguous(),
}


@pytest.mark.parametrize("name", sorted(NEW_TENSOR_OPS))
def test_ops_that_return_a_new_tensor_in_pytorch_return_one_that_views_and_writes_alone(name):
    def build(lib):
        source = lib.tensor(np.arange(12.0).reshape(3, 4))
        result = NEW_TENSOR_OPS[name](lib, source)
        flat = result.view(-1)           # a new tensor is laid out in order, as PyTorch's
        flat.add_(100)                   # writing into it ...
        return _array(source).copy(), _array(result).copy()
    (source_ours, result_ours), (source_theirs, result_theirs) = _both(build)
    np.testing.assert_array_equal(source_ours, np.arange(12.0).reshape(3, 4))  # ... leaves the source alone
    np.testing.assert_array_equal(source_ours, source_theirs)
    np.testing.assert_array_equal(result_ours, result_theirs)


@pytest.mark.parametrize("name", sorted(NEW_TENSOR_OPS))
def test_ops_that_return_a_new_tensor_do_so_for_a_transposed_source_too(name):
    def build(lib):
        source = lib.tensor(np.arange(12.0).reshape(4, 3)).T
        result = NEW_TENSOR_OPS[name](lib, source)
        result.add_(100)  # x.T.T.contiguous() is x.T itself, in both: the change reaches the source
        return _array(source).copy(), _contiguous(result)
    (source_ours, contiguous_ours), (source_theirs, contiguous_theirs) = _both(build)
    np.testing.assert_array_equal(source_ours, source_theirs)
    assert contiguous_ours == contiguous_theirs
