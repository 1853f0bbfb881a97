"""gradcheck itself: it must catch a wrong backward and say where."""
import numpy as np
import pytest

import tinyattn as ta


class WrongSquare(ta.autograd.Function):
    """y = x^2 with a deliberately wrong backward (3x instead of 2x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_arrays
        return 3 * x * g


def test_gradcheck_fails_on_a_wrong_backward_and_names_the_place():
    x = ta.tensor(np.array([[0.5, -1.0], [2.0, 1.5]]), requires_grad=True)
    y = ta.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(ta.GradcheckError, match=r"output 1, input 0 \(shape \(2, 2\)\): worst element \(\d, \d\): analytic .* numeric"):
        ta.gradcheck(lambda x, y: (y * 2, WrongSquare.apply(x)), (x, y))


def test_gradcheck_rejects_float32_inputs():
    with pytest.raises(TypeError, match="float64"):
        ta.gradcheck(lambda x: x * 2, (ta.tensor([1.0], requires_grad=True),))


def test_gradcheck_leaves_inputs_and_their_grads_as_they_were():
    data = np.array([0.3, -0.7])
    x = ta.tensor(data, requires_grad=True)
    x.grad = np.array([5.0, 5.0])
    assert ta.gradcheck(lambda x: (x * x).tanh(), (x,))
    np.testing.assert_array_equal(x.data, data)
    np.testing.assert_array_equal(x.grad, [5.0, 5.0])


def test_gradcheck_samples_large_inputs_and_still_catches_errors():
    x = ta.tensor(np.random.default_rng(0).standard_normal(5000), requires_grad=True)
    with pytest.raises(ta.GradcheckError):
        ta.gradcheck(lambda x: WrongSquare.apply(x), (x,), max_elements=50)


def test_gradcheck_passes_module_style_parameters_closed_over():
    w = ta.tensor(np.random.default_rng(1).standard_normal((3, 2)), requires_grad=True)
    x = ta.tensor(np.random.default_rng(2).standard_normal((4, 3)))
    assert ta.gradcheck(lambda w: (x @ w).sigmoid(), (w,))


def test_gradcheck_fails_when_the_numeric_gradient_is_nan():
    class NanAtPositive(ta.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return np.where(x > 0, np.nan, x)

        @staticmethod
        def backward(ctx, g):
            return g

    x = ta.tensor(np.array([0.5, -1.0]), requires_grad=True)
    with pytest.raises(ta.GradcheckError, match="numeric nan"):
        ta.gradcheck(lambda x: NanAtPositive.apply(x), (x,))
