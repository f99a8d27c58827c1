"""sparsemax (Martins & Astudillo 2016), the normaliser beside softmax (source 004 §4: "改变归一化
方法，就改变了具体的读取算子"): the Euclidean projection onto the probability simplex.

Checked against a NumPy reference written from the definition (the projection, found by
bisection on τ, not by the sort the library uses), its gradient against central differences
over Hypothesis-drawn shapes and axes, and its Jacobian against the closed form
diag(s) − s sᵀ / |S|."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
from minigrad import functional as F
from minigrad.gradcheck import gradcheck, gradgradcheck


def projection_ref(z: np.ndarray) -> np.ndarray:
    """argmin_p ||p − z||² over the simplex, last axis: p = max(z − τ, 0) with Σ p = 1, τ found
    by bisection (Σ max(z − τ, 0) falls from ≥ 1 at τ = max z − 1 to 0 at τ = max z)."""
    lo, hi = z.max(axis=-1, keepdims=True) - 1.0, z.max(axis=-1, keepdims=True)
    for _ in range(200):
        mid = (lo + hi) / 2
        big = np.maximum(z - mid, 0).sum(axis=-1, keepdims=True) > 1
        lo, hi = np.where(big, mid, lo), np.where(big, hi, mid)
    return np.maximum(z - (lo + hi) / 2, 0)


def _tau(z: np.ndarray) -> np.ndarray:
    p = projection_ref(z)
    support = p > 0
    return ((z * support).sum(axis=-1, keepdims=True) - 1) / support.sum(axis=-1, keepdims=True)


shapes_and_axis = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5).flatmap(
    lambda s: st.tuples(st.just(s), st.integers(-len(s), len(s) - 1)))


def draw(data, dtype=np.float64):
    shape, axis = data.draw(shapes_and_axis, label="shape, axis")
    x = data.draw(hnp.arrays(dtype, shape, elements=st.floats(-3, 3, width=64 if dtype == np.float64 else 32)),
                  label="x")
    moved = np.moveaxis(x.astype(np.float64), axis, -1)
    assume(np.min(np.abs(moved - _tau(moved))) > 1e-3)  # away from a kink (finite differences)
    return x, axis


def test_the_worked_example_and_exact_zeros():
    # sorted 1, 0.5, −1: k = 2 (1 + 2·0.5 = 2 > 1.5; 1 + 3·(−1) < 0.5), τ = (1.5 − 1)/2 = 0.25
    p = F.sparsemax(mg.tensor([1.0, 0.5, -1.0]))
    np.testing.assert_array_equal(p.data, [0.75, 0.25, 0.0])
    # source 004 §6's scores for state A: softmax gives every source some weight, sparsemax not
    e = np.array([1.5232, 0.9640, 0.2335])
    assert (F.softmax(mg.tensor(e)).data > 0).all()
    np.testing.assert_allclose(F.sparsemax(mg.tensor(e)).data, [0.7796, 0.2204, 0.0], atol=1e-12)


@given(data=st.data())
def test_matches_the_projection_onto_the_simplex(data):
    x, axis = draw(data)
    p = F.sparsemax(mg.tensor(x), axis=axis)
    expected = np.moveaxis(projection_ref(np.moveaxis(x, axis, -1)), -1, axis)
    np.testing.assert_allclose(p.data, expected, atol=1e-12)
    np.testing.assert_allclose(p.data.sum(axis=axis), 1.0, atol=1e-12)
    assert (p.data >= 0).all()


@given(data=st.data())
def test_gradcheck(data):
    x, axis = draw(data)
    w = np.random.default_rng(0).standard_normal(x.shape)  # a loss that weighs every output
    assert gradcheck(lambda t: F.sparsemax(t, axis=axis) * w, [x])


@given(data=st.data())
def test_gradgradcheck(data):
    x, axis = draw(data)
    assert gradgradcheck(lambda t: F.sparsemax(t, axis=axis) * F.sparsemax(t, axis=axis), [x])


@given(data=st.data())
def test_float32_stays_float32(data):
    x, axis = draw(data, np.float32)
    t = mg.tensor(x, requires_grad=True)
    p = F.sparsemax(t, axis=axis)
    assert p.dtype == np.float32
    p.backward(np.ones(p.shape, np.float32))
    assert t.grad.dtype == np.float32


def test_jacobian_is_diag_s_minus_s_st_over_k():
    z = np.array([0.9, -0.3, 0.4, 2.0, 1.2])
    x = mg.tensor(z, requires_grad=True)
    jac = np.stack([mg.grad(F.sparsemax(x)[i], x) for i in range(5)])   # rows ∂p_i/∂z
    s = (projection_ref(z) > 0).astype(float)
    np.testing.assert_allclose(jac, np.diag(s) - np.outer(s, s) / s.sum(), atol=1e-15)


@pytest.mark.parametrize("bad, message", [
    (np.zeros((2, 0)), "sparsemax"),
])
def test_an_empty_axis_is_refused_by_name(bad, message):
    with pytest.raises(ValueError, match=message):
        F.sparsemax(mg.tensor(bad))
