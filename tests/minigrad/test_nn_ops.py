"""layer_norm and gelu (composed, the core): forward against NumPy, the kernels' fused ops
against them to 1e-12 (``minigrad.kernels``),
float64 gradchecks over Hypothesis-drawn shapes (weight and bias broadcast over the leading
axes), float32 end to end, and clear errors."""
from __future__ import annotations

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given

import minigrad as mg
from minigrad.gradcheck import gradcheck
from minigrad.nn import LayerNorm
from minigrad.kernels import KERNELS, FusedLayerNorm, fused_gelu, fused_layer_norm, swap
from minigrad.nn_ops import gelu, layer_norm

SHAPES = hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=5)


def values(data, shape, lo=-3.0, hi=3.0):
    return data.draw(hnp.arrays(np.float64, shape, elements=st.floats(lo, hi)))


@given(shape=SHAPES, data=st.data())
def test_layer_norm_forward_matches_numpy(shape, data):
    x, w, b = values(data, shape), values(data, shape[-1:]), values(data, shape[-1:])
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(layer_norm(x, w, b).data, (x - mu) / np.sqrt(var + 1e-5) * w + b,
                               rtol=1e-10, atol=1e-10)


@given(shape=SHAPES, data=st.data())
def test_layer_norm_kernel_equals_core_forward_and_backward(shape, data):
    x, w, b, g = (values(data, s) for s in (shape, shape[-1:], shape[-1:], shape))
    x = x + np.linspace(0, 1, shape[-1])  # keep σ² away from 0, where 1/√ε magnifies rounding
    grads = []
    for fn in (fused_layer_norm, layer_norm):
        leaves = [mg.tensor(a, requires_grad=True) for a in (x, w, b)]
        out = fn(*leaves)
        out.backward(g)
        grads.append([out.data] + [leaf.grad for leaf in leaves])
    for fused, composed in zip(*grads):
        np.testing.assert_allclose(fused, composed, rtol=1e-12, atol=1e-12)


@given(shape=SHAPES, data=st.data())
def test_gelu_kernel_equals_core_forward_and_backward(shape, data):
    x, g = values(data, shape), values(data, shape)
    results = []
    for fn in (fused_gelu, gelu):
        leaf = mg.tensor(x, requires_grad=True)
        out = fn(leaf)
        out.backward(g)
        results.append((out.data, leaf.grad))
    for fused, composed in zip(*results):
        np.testing.assert_allclose(fused, composed, rtol=1e-12, atol=1e-12)


def test_the_table_swaps_layer_norm_and_swaps_it_back():
    ln = LayerNorm(4)
    x = np.random.default_rng(0).standard_normal((2, 4))
    core = ln(x).data
    assert type(swap(ln, KERNELS)) is FusedLayerNorm and ln(x)._op == "layer_norm"
    np.testing.assert_allclose(ln(x).data, core, rtol=1e-12, atol=1e-12)
    assert type(swap(ln, KERNELS, back=True)) is LayerNorm and ln(x)._op != "layer_norm"


@given(shape=SHAPES, data=st.data(), affine=st.booleans())
def test_layer_norm_gradcheck(shape, data, affine):
    x = values(data, shape)
    x = x + np.linspace(0, 1, shape[-1])  # keep the variance away from 0 (x̂ = 0/√ε there)
    inputs = [x, values(data, shape[-1:]), values(data, shape[-1:])] if affine else [x]
    assert gradcheck(lambda *a: layer_norm(*a) * 1.0, inputs, atol=1e-5, rtol=1e-4)


@given(shape=SHAPES, data=st.data())
def test_gelu_matches_numpy_and_gradchecks(shape, data):
    x = values(data, shape)
    ref = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(gelu(x).data, ref, rtol=1e-12, atol=1e-12)
    assert gradcheck(gelu, [x])


def test_gelu_is_close_to_x_times_normal_cdf():
    from math import erf
    x = np.linspace(-4, 4, 33)
    exact = np.array([0.5 * v * (1 + erf(v / np.sqrt(2))) for v in x])
    np.testing.assert_allclose(gelu(x).data, exact, atol=1e-3)


@pytest.mark.parametrize("fn", [lambda x: layer_norm(x, np.ones(4, np.float32), np.zeros(4, np.float32)),
                                lambda x: fused_layer_norm(x, np.ones(4, np.float32), np.zeros(4, np.float32)),
                                gelu, fused_gelu])
def test_float32_stays_float32(fn):
    x = mg.tensor(np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32),
                  requires_grad=True)
    out = fn(x)
    out.backward(np.ones(out.shape, np.float32))
    assert out.dtype == np.float32 and x.grad.dtype == np.float32


def test_layer_norm_module_normalises_and_learns():
    ln = LayerNorm(6)
    x = np.random.default_rng(1).standard_normal((3, 6)) * 5 + 2
    y = ln(x).data
    np.testing.assert_allclose(y.mean(-1), 0, atol=1e-12)
    np.testing.assert_allclose(y.var(-1), 1, atol=1e-4)
    assert [n for n, _ in ln.named_parameters()] == ["weight", "bias"]


def test_layer_norm_of_a_constant_row_is_zero_not_nan():
    out = layer_norm(np.full((2, 5), 3.0))
    assert np.array_equal(out.data, np.zeros((2, 5)))


@pytest.mark.parametrize("args, message", [
    (dict(x=np.ones((2, 3)), weight=np.ones(4)), r"layer_norm: weight of shape \(4,\) and input of shape \(2, 3\) do not fit"),
    (dict(x=np.ones((2, 3)), bias=np.ones((1, 3))), r"layer_norm: bias of shape \(1, 3\) and input"),
    (dict(x=np.ones((2, 0))), r"layer_norm: input \(2, 0\) needs a last axis"),
    (dict(x=np.ones(3), eps=0.0), r"layer_norm: eps must be > 0"),
])
def test_layer_norm_errors_name_the_op_role_and_shapes(args, message):
    with pytest.raises(ValueError, match=message):
        layer_norm(**args)
