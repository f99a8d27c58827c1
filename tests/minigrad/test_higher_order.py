"""Higher-order gradients: ``grad(..., create_graph=True)`` and ``backward(create_graph=True)``.

The per-op second derivatives are checked by ``test_gradgradcheck`` in ``test_ops.py`` (the
op table, Hypothesis-drawn shapes). Here: closed forms, third derivatives of composites, the
API's defaults, what a first-order backward must not do, and the fused kernels' refusal.
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

import minigrad as mg
from attention import attend, read
from attention.scores import AdditiveScore
from minigrad import functional as F
from minigrad.gradcheck import GradcheckError, first_derivative, gradcheck, gradgradcheck
from models.kernels import use_kernels
from models.recurrent import GRUCell

RNG = np.random.default_rng(7)


def derivatives(f, x, n):
    """d^k Σ f(x) / dx^k for k = 1..n, elementwise (f acts elementwise), as arrays."""
    out, g = [], f(x)
    for _ in range(n):
        (g,) = mg.grad(g.sum(), [x], create_graph=True)
        out.append(g.data.copy())
    return out


def test_six_derivatives_of_tanh_match_the_closed_forms():
    """With t = tanh x every derivative is a polynomial in t: d/dx P(t) = P'(t) (1 − t²)."""
    x = mg.tensor(np.linspace(-3, 3, 13), requires_grad=True)
    t = np.tanh(x.data)
    poly = np.polynomial.Polynomial([0, 1])                  # P_0(t) = t
    dt = np.polynomial.Polynomial([1, 0, -1])                # 1 − t²
    for got in derivatives(mg.tanh, x, 6):
        poly = poly.deriv() * dt
        np.testing.assert_allclose(got, poly(t), rtol=1e-10, atol=1e-12)


def test_derivatives_of_exp_log_and_pow():
    x = mg.tensor([0.5, 1.0, 2.0], requires_grad=True)
    for d in derivatives(mg.exp, x, 3):
        np.testing.assert_allclose(d, np.exp(x.data))
    d1, d2, d3 = derivatives(mg.log, x, 3)
    np.testing.assert_allclose(d3, 2 / x.data ** 3)
    d1, d2, d3, d4 = derivatives(lambda v: v ** 3, x, 4)
    np.testing.assert_allclose(d2, 6 * x.data)
    np.testing.assert_allclose(d3, [6.0, 6.0, 6.0])
    np.testing.assert_array_equal(d4, [0.0, 0.0, 0.0])


def test_hessian_vector_product_equals_the_explicit_hessian():
    """L = Σ tanh(A x)² for a vector x: H = Aᵀ diag(2(1 − 3t²)(1 − t²)) A with t = tanh(Ax)."""
    A = RNG.standard_normal((5, 3))
    x = mg.tensor(RNG.standard_normal(3), requires_grad=True)
    loss = (mg.tanh(mg.tensor(A) @ x) ** 2).sum()
    (g,) = mg.grad(loss, [x], create_graph=True)
    t = np.tanh(A @ x.data)
    H = A.T @ np.diag(2 * (1 - 3 * t ** 2) * (1 - t ** 2)) @ A
    for v in np.eye(3):
        (hv,) = mg.grad(g, [x], grad_outputs=v, retain_graph=True)
        np.testing.assert_allclose(hv, H @ v, rtol=1e-10, atol=1e-12)


def test_backward_with_create_graph_leaves_differentiable_grads():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    w = mg.tensor([0.5, -1.0], requires_grad=True)
    (x * x * w).sum().backward(create_graph=True)
    assert isinstance(x.grad, mg.Tensor) and x.grad.requires_grad  # 2 x w, with its graph
    np.testing.assert_allclose(x.grad.data, 2 * x.data * w.data)
    gx, gw = mg.grad(x.grad.sum(), [x, w])                       # d/dx Σ 2xw = 2w, d/dw = 2x
    np.testing.assert_allclose(gx, 2 * w.data)
    np.testing.assert_allclose(gw, 2 * x.data)
    (x * x * w).sum().backward(create_graph=True)               # accumulates, as .grad does
    np.testing.assert_allclose(x.grad.data, 4 * x.data * w.data)


def test_retain_graph_defaults_to_create_graph():
    x = mg.tensor(2.0, requires_grad=True)
    y = x ** 3
    (g,) = mg.grad(y, [x], create_graph=True)                    # keeps y's graph
    (g2,) = mg.grad(y, [x])                                      # so a second pass works ...
    assert g.item() == g2.item() == 12.0
    with pytest.raises(RuntimeError, match="op 'pow' a second time.*retain_graph=True"):
        mg.grad(y, [x])                                          # ... which freed it


def test_a_tensor_seed_is_part_of_the_graph():
    """grad_outputs=v with requires_grad: d/dv (vᵀ J) = J, the double-backward trick."""
    x = mg.tensor([0.3, -0.7], requires_grad=True)
    v = mg.tensor([1.0, 2.0], requires_grad=True)
    (vjp,) = mg.grad(mg.tanh(x), [x], grad_outputs=v, create_graph=True)   # v ⊙ (1 − t²)
    (jv,) = mg.grad(vjp, [v], grad_outputs=np.ones(2))
    np.testing.assert_allclose(jv, 1 - np.tanh(x.data) ** 2)


def test_mixed_float32_and_float64_under_create_graph():
    a = mg.tensor(np.array([0.5, 1.5], np.float32), requires_grad=True)
    b = mg.tensor([2.0, -1.0], requires_grad=True)
    ga, gb = mg.grad(mg.tanh(a * b).sum(), [a, b], create_graph=True)
    assert ga.dtype == np.float32 and gb.dtype == np.float64
    h = mg.grad(ga.sum(), [a, b])
    assert h[0].dtype == np.float32 and h[1].dtype == np.float64
    assert mg.astype(a, np.int64).requires_grad is False         # an integer cast is a constant


def test_an_input_the_gradient_does_not_depend_on_gets_zeros():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    (g,) = mg.grad((3 * x).sum(), [x], create_graph=True)       # constant 3: no graph left
    assert not g.requires_grad
    np.testing.assert_array_equal(g.data, [3.0, 3.0])


# ---- the first-order path records nothing ---------------------------------------------------------

def test_backward_without_create_graph_makes_no_tensor(monkeypatch):
    """An ordinary backward runs every VJP on arrays: not one Tensor is made, nothing recorded."""
    x = mg.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    w = mg.tensor(RNG.standard_normal((4, 5)), requires_grad=True)
    loss = F.cross_entropy(F.log_softmax(mg.tanh(x @ w) * 2, axis=0), np.array([0, 1, 4]))
    loss = loss + mg.logsumexp(x[np.array([0, 0, 2])], axis=1).mean() + mg.max(w ** 2)
    made = []
    tensor_module = sys.modules["minigrad.tensor"]
    original = tensor_module.Tensor._from_op
    monkeypatch.setattr(tensor_module.Tensor, "_from_op",
                        staticmethod(lambda *a: made.append(a[3]) or original(*a)))
    monkeypatch.setattr(tensor_module.Tensor, "__init__",
                        lambda self, *a, **k: made.append("Tensor()"))
    loss.backward()
    assert made == []
    assert type(x.grad) is np.ndarray and type(w.grad) is np.ndarray


# ---- third derivatives of composites --------------------------------------------------------------

def third_order_check(fn, inputs):
    """gradgradcheck of the first derivative: its recorded VJP is a third derivative of fn,
    checked against central differences of second derivatives."""
    rng = np.random.default_rng(3)
    return gradgradcheck(first_derivative(fn, inputs, rng), inputs, rng=rng)


def test_third_derivatives_of_a_two_layer_network_loss():
    x, w1, w2 = (RNG.standard_normal(s) for s in [(4, 3), (5, 3), (2, 5)])
    targets = np.array([0, 1, 1, 0])

    def loss(x, w1, w2):
        return F.cross_entropy(F.linear(mg.tanh(F.linear(x, w1)), w2), targets)
    assert third_order_check(loss, [x, w1, w2])


def test_third_derivatives_of_the_composed_attention_read():
    scores, values = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 3))
    mask = np.array([[True, True, False, True], [True, False, True, True]])
    assert third_order_check(lambda e, h: attend(e, h, mask)[0], [scores, values])


def test_third_derivatives_of_softmax_logsumexp_and_max():
    x = RNG.permutation(12).reshape(3, 4) / 3.0             # no ties for max
    def f(t):
        return F.softmax(t) * mg.logsumexp(t, axis=0) + mg.max(t, 1)[:, None]
    assert third_order_check(f, [x])


# ---- the core differentiates twice; the kernels refuse create_graph, naming the core ----------

def test_the_core_gru_cell_differentiates_twice_and_its_kernel_refuses():
    cell = GRUCell(3, 4, rng=np.random.default_rng(0))
    h0 = RNG.standard_normal((2, 4))
    assert gradgradcheck(lambda x, h: cell(x, h), [RNG.standard_normal((2, 3)), h0])
    fused = use_kernels(GRUCell(3, 4, rng=np.random.default_rng(0)))
    x = mg.tensor(RNG.standard_normal((2, 3)), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"op 'gru_step' can be differentiated only once"):
        mg.grad(fused(x).sum(), [x], create_graph=True)
    mg.grad(fused(x).sum(), [x])                              # first order still works


def test_read_differentiates_twice_like_attend():
    e, h = RNG.standard_normal((2, 5)), RNG.standard_normal((2, 5, 3))
    assert gradgradcheck(lambda e, h: read(e, h)[0], [e, h])
    assert gradgradcheck(lambda e, h: attend(e, h)[0], [e, h])


def test_the_core_additive_score_differentiates_twice_and_its_kernel_refuses():
    kw = dict(rng=np.random.default_rng(1))
    q, k = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 4, 5))
    core = AdditiveScore(3, 5, 6, **kw)
    assert gradgradcheck(lambda q, k: core(q, k), [q, k])
    score = use_kernels(AdditiveScore(3, 5, 6, **kw))
    qt = mg.tensor(q, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"op 'additive_tanh'.*AdditiveScore"):
        mg.grad(score(qt, k).sum(), [qt], create_graph=True)


def test_layer_norm_and_gelu_differentiate_twice_and_their_kernels_refuse():
    from minigrad.kernels import fused_gelu, fused_layer_norm
    from minigrad.nn_ops import gelu, layer_norm
    x = mg.tensor(RNG.standard_normal((2, 4)), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"op 'layer_norm' can be differentiated only once.*"
                                           r"nn_ops.layer_norm"):
        mg.grad(fused_layer_norm(x).sum(), [x], create_graph=True)
    with pytest.raises(RuntimeError, match=r"op 'gelu' can be differentiated only once.*nn_ops.gelu"):
        mg.grad(fused_gelu(x).sum(), [x], create_graph=True)
    assert gradgradcheck(lambda x: layer_norm(x), [x.data])
    assert gradgradcheck(gelu, [x.data])


def test_gradgradcheck_catches_a_vjp_that_drops_the_graph():
    def square_detached(x):  # right once; reads x as a constant, so d²/dx² comes out 0
        return mg.Tensor._from_op(x.data ** 2, (x,),
                                  lambda xp, g, out, x: (g * 2 * np.asarray(x),), "sq")
    assert gradcheck(square_detached, [np.array([1.0, 2.0])])
    with pytest.raises(GradcheckError, match=r"gradgradcheck: the second derivative .* of "
                                             r"input 0 \(shape \(2,\)\) is wrong at element"):
        gradgradcheck(square_detached, [np.array([1.0, 2.0])])
