"""What a newcomer from PyTorch, NumPy and micrograd expects of the core (issue "First touch,
round four"): intermediate gradients on request, NumPy's AxisError, a 0-d repeat, the gradient
of x ** y at x = 0, and the target's gradient in the binary cross-entropies."""
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad import functional as F
from minigrad.gradcheck import gradcheck


def test_retain_grad_keeps_an_intermediate_gradient_as_pytorch():
    x = mg.tensor([1.0, -2.0, 0.5], requires_grad=True)
    y = x * 3.0
    y.retain_grad()
    (y * y).sum().backward()
    np.testing.assert_array_equal(y.grad, 2 * y.data)                 # ∂Σy²/∂y = 2y
    np.testing.assert_array_equal(x.grad, 6 * y.data)


def test_retained_gradients_add_up_over_passes_like_a_leafs():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.retain_grad()
    loss = y.sum()
    loss.backward(retain_graph=True)
    loss.backward()
    np.testing.assert_array_equal(y.grad, [2.0, 2.0])


def test_retain_grad_under_create_graph_keeps_a_tensor():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.retain_grad()
    (y * y).sum().backward(create_graph=True)
    assert isinstance(y.grad, mg.Tensor)
    np.testing.assert_array_equal(y.grad.data, 2 * y.data)


def test_reading_an_intermediates_grad_warns_and_names_retain_grad():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match=r"made by op 'mul'.*t\.retain_grad\(\)"):
        assert y.grad is None


def test_a_leaf_or_a_constant_reads_its_grad_silently():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    c = mg.tensor([1.0]) * 2                                           # no gradient: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is None and c.grad is None
    with pytest.raises(AttributeError, match="no attribute 'gard'"):
        x.gard


def test_retain_grad_on_a_tensor_without_grad_is_refused():
    with pytest.raises(RuntimeError, match="retain_grad: this tensor does not require grad"):
        (mg.tensor([1.0]) * 2).retain_grad()


@pytest.mark.parametrize("call", [lambda t: mg.sum(t, axis=2), lambda t: t.mean(axis=-3),
                                  lambda t: mg.swapaxes(t, 0, 5)])
def test_an_axis_out_of_range_is_numpys_axis_error(call):
    t = mg.tensor(np.ones((2, 3)))
    for kind in (np.exceptions.AxisError, IndexError, ValueError):
        with pytest.raises(kind, match="is out of range for a tensor of shape"):
            call(t)


def test_repeat_of_a_0d_tensor_along_axis_0_is_numpys():
    x = mg.tensor(2.0, requires_grad=True)
    r = mg.repeat(x, 3, axis=0)
    np.testing.assert_array_equal(r.data, np.repeat(np.float64(2.0), 3, axis=0))
    r.sum().backward()
    assert x.grad == 3.0


def test_the_exponents_gradient_at_a_zero_base_is_pytorchs():
    x = mg.tensor([0.0, 0.0, 0.0, 2.0], requires_grad=True)
    y = mg.tensor([-1.0, 0.0, 2.0, 3.0], requires_grad=True)
    with np.errstate(divide="ignore"):
        (x ** y).sum().backward()
    np.testing.assert_array_equal(y.grad, [-np.inf, 0.0, 0.0, 8 * np.log(2.0)])  # torch's


@pytest.mark.parametrize("loss", [F.binary_cross_entropy, F.binary_cross_entropy_with_logits])
def test_the_binary_cross_entropies_differentiate_their_target(loss):
    p = mg.tensor([0.3, 0.6, 0.9], requires_grad=True)
    t = mg.tensor([0.2, 0.9, 0.5], requires_grad=True)
    assert gradcheck(loss, [p, t])
    loss(p, t).backward()
    assert np.all(t.grad != 0)


def test_python_dash_m_minigrad_lists_what_there_is_to_run(capsys):
    from minigrad.__main__ import main
    assert main([]) == 0
    out = capsys.readouterr().out
    for command in ("python -m models", "python -m minigrad.exercises", "python -m minigrad.viz",
                    "python -m minigrad.gradcheck", "python -m attention"):
        assert command in out


def test_sparsemax_of_a_huge_score_is_exact_as_softmax_is():
    x = mg.tensor([1e308, 0.5], requires_grad=True)
    p = F.sparsemax(x)
    np.testing.assert_array_equal(p.data, [1.0, 0.0])
    (p * mg.tensor([1.0, 2.0])).sum().backward()
    assert np.isfinite(x.grad).all()
