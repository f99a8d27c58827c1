"""Gradients computed by the faster paths the benchmarks asked for, held to the plain formulas:
the embedding's VJP (one-hot matmul for small tables, sorted runs for large ones) against
``np.add.at``; matmul's VJP for 1-D operands, contracted dims of 1 and a weight shared by a
batch, against ``g bᵀ`` / ``aᵀ g`` written out with einsum; and the engine's in-place
accumulation of a gradient that arrives many times."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import functional as F
from minigrad.gradcheck import gradcheck


@pytest.mark.parametrize("V, ids_shape", [(5, (4, 3)), (64, (7,)), (300, (6, 5)), (1000, (0,))],
                         ids=["one-hot", "one-hot, 64 rows", "sorted runs", "no ids"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_embedding_vjp_accumulates_repeated_ids_like_add_at(V, ids_shape, dtype):
    rng = np.random.default_rng(V)
    ids = rng.integers(0, min(V, 4), size=ids_shape)  # few distinct ids: many repeats
    weight = mg.tensor(rng.standard_normal((V, 3)).astype(dtype), requires_grad=True)
    g = rng.standard_normal(ids_shape + (3,)).astype(dtype)
    F.embedding(ids, weight).backward(g)
    want = np.zeros((V, 3), dtype=dtype)
    np.add.at(want, ids.reshape(-1), g.reshape(-1, 3))
    assert weight.grad.dtype == dtype
    np.testing.assert_allclose(weight.grad, want, rtol=1e-6 if dtype == np.float32 else 1e-13)


def test_embedding_gradcheck_large_table():
    rng = np.random.default_rng(0)
    ids = np.array([[3, 99, 3], [0, 99, 99]])
    assert gradcheck(lambda w: F.embedding(ids, w), [rng.standard_normal((100, 2))])


MATMUL_SHAPES = [
    ((4, 5, 6), (6,)),        # (B, S, A) @ v: the additive score's shape
    ((6,), (4, 6, 5)),        # 1-D a against a batch
    ((4, 1, 6), (4, 6, 5)),   # one query per example: gb's contracted dim is 1
    ((4, 5, 1), (4, 1, 3)),   # contracted dim 1 in the forward: an outer product
    ((2, 3, 4, 6), (6, 5)),   # a batch sharing one 2-D b: folded into one matmul
    ((6,), (6,)),             # a dot product
    ((3, 6), (6, 1)),
]


@pytest.mark.parametrize("a_shape, b_shape", MATMUL_SHAPES, ids=str)
def test_matmul_vjp_fast_paths(a_shape, b_shape):
    rng = np.random.default_rng(len(a_shape) * 7 + len(b_shape))
    a_np, b_np = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    a, b = mg.tensor(a_np, requires_grad=True), mg.tensor(b_np, requires_grad=True)
    out = a @ b
    g = rng.standard_normal(out.shape)
    out.backward(g)
    # the plain formulas, with 1-D operands promoted and batch dims summed where broadcast
    A = a_np if a_np.ndim > 1 else a_np[None, :]
    B = b_np if b_np.ndim > 1 else b_np[:, None]
    G = g.reshape(np.broadcast_shapes(A.shape[:-2], B.shape[:-2]) + (A.shape[-2], B.shape[-1]))
    ga = np.einsum("...nm,...km->...nk", G, np.broadcast_to(B, G.shape[:-2] + B.shape[-2:]))
    gb = np.einsum("...nk,...nm->...km", np.broadcast_to(A, G.shape[:-2] + A.shape[-2:]), G)
    ga = ga.reshape((-1,) + A.shape).sum(axis=0) if ga.ndim > A.ndim else ga
    gb = gb.reshape((-1,) + B.shape).sum(axis=0) if gb.ndim > B.ndim else gb
    np.testing.assert_allclose(a.grad, ga.reshape(a_shape), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b.grad, gb.reshape(b_shape), rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda x, y: x @ y, [a_np, b_np])


def test_gradient_arriving_many_times_accumulates_without_touching_the_vjps_arrays():
    """A tensor read by many ops gets its gradient summed in place from the third arrival on;
    arrays that a VJP handed over (here the same g to both parents of an add) stay intact."""
    x = mg.tensor(np.arange(3.0), requires_grad=True)
    y = x * 1.0
    total = y + y                                     # add's VJP gives the same g to both
    for k in range(2, 6):
        total = total + y * float(k)
    seed = np.ones(3)
    total.backward(seed)
    np.testing.assert_array_equal(x.grad, np.full(3, 2.0 + 2 + 3 + 4 + 5))
    np.testing.assert_array_equal(seed, np.ones(3))
    x.grad[0] = 99.0                                  # the leaf owns its .grad
    assert y.data[0] == 0.0


# ---- the kernels' in-place tanh and σ (minigrad/kernels.py) -----------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kernel_tanh_and_sigmoid_equal_numpys_everywhere_without_warnings(dtype):
    """float64's tanh from exp is within 2⁻⁵¹ of np.tanh from 0 to far past overflow of e^2x,
    keeps the sign (and −0.0), and σ = 1 / (1 + e^−a), clipped, equals the stable sigmoid (and
    in float64 to 4 ulp relatively down to σ(−708), the last normal e^−a)."""
    from minigrad.kernels import sigmoid_, tanh_
    from minigrad.ops import sigmoid_array
    x = np.concatenate([np.linspace(-30, 30, 2001), [0.0, -0.0, 1e-300, -1e-12, 19.9, 20.1, 400, -800, 3e38],
                        np.linspace(-760, 760, 301), [36.0, 37.0, -745.0, -746.0, -3e38, np.inf, -np.inf],
                        np.random.default_rng(0).standard_normal(500)]).astype(dtype)
    tol = 2 ** -51 if dtype == np.float64 else 2 ** -23
    with np.errstate(all="raise"):
        t, s = tanh_(x.copy()), sigmoid_(x.copy())
    assert t.dtype == s.dtype == dtype
    np.testing.assert_allclose(t, np.tanh(x), rtol=0, atol=tol)
    np.testing.assert_array_equal(np.signbit(t), np.signbit(np.tanh(x)))
    np.testing.assert_allclose(s, sigmoid_array(x), rtol=0, atol=tol)
    if dtype == np.float64:
        normal = x >= -708                                           # σ ≥ e^−708, a normal number
        np.testing.assert_allclose(s[normal], sigmoid_array(x)[normal], rtol=4 * 2 ** -52, atol=0)
    with np.errstate(all="raise"):
        assert np.isnan(sigmoid_(np.array([np.nan, 1.0], dtype))).tolist() == [True, False]
        assert np.isnan(tanh_(np.array([np.nan, -np.inf], dtype))).tolist() == [True, False]
    view = np.stack([x, x])[:, ::3]                                  # a strided view, in place
    tanh_(view)
    np.testing.assert_allclose(view, np.tanh(np.stack([x, x])[:, ::3]), rtol=0, atol=tol)
