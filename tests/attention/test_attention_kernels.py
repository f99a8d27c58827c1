"""attention's kernels (attention/kernels.py): each equals its core module to 1e-12 in float64,
forward and every gradient; the table holds attention's own kernels and switches both ways in
place (the one switch over every table is models.kernels.use_kernels); the fused op is
gradchecked and refuses create_graph, where the core score differentiates twice."""
import numpy as np
import pytest

import minigrad as mg
from attention import AdditiveScore, Attention, ConcatScore
from attention.kernels import KERNELS, FusedAdditiveScore, FusedConcatScore, additive_tanh
from attention.scores import additive
from minigrad.gradcheck import gradcheck, gradgradcheck
from minigrad.kernels import swap

B, T, S, DQ, DK, A = 3, 2, 5, 4, 6, 7
CORES = {
    "additive": lambda rng: AdditiveScore(DQ, DK, A, rng=rng),
    "additive-nobias": lambda rng: AdditiveScore(DQ, DK, A, bias=False, rng=rng),
    "additive-linear": lambda rng: AdditiveScore(DQ, DK, A, activation=None, rng=rng),
    "concat": lambda rng: ConcatScore(DQ, DK, A, rng=rng),
}


def loss_and_grads(module, q, keys, values, mask, g):
    """Context, weights and the gradients of every parameter, the query and the keys for
    L = g·c + Σ w² through ``Attention(module)``."""
    qt, kt = mg.tensor(q, requires_grad=True), mg.tensor(keys, requires_grad=True)
    module.zero_grad()
    c, w = Attention(module)(qt, kt, values, mask=mask)
    ((c * g).sum() + (w * w).sum()).backward()
    return [c.data, w.data, qt.grad, kt.grad] + [p.grad for p in module.parameters()]


@pytest.mark.parametrize("t", [None, T], ids=["query (B, Dq)", "queries (B, T, Dq)"])
@pytest.mark.parametrize("name", list(CORES))
def test_each_kernel_equals_its_core_forward_and_gradients(name, t):
    rng = np.random.default_rng(0)
    module = CORES[name](rng)
    lead = (B,) if t is None else (B, t)
    q, keys = rng.normal(size=lead + (DQ,)), rng.normal(size=(B, S, DK))
    values = rng.normal(size=(B, S, 3))
    mask = np.array([[True] * S, [True, True, False, True, False], [False] * S])
    g = rng.normal(size=lead + (3,))
    core = loss_and_grads(module, q, keys, values, mask, g)
    swap(module, KERNELS)
    assert type(module) is KERNELS[type(CORES[name](rng))]
    fused = loss_and_grads(module, q, keys, values, mask, g)
    for i, (a, b) in enumerate(zip(core, fused)):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12, err_msg=f"output/gradient {i}")


def test_the_table_names_attentions_kernels_and_switches_in_place_both_ways():
    assert KERNELS == {AdditiveScore: FusedAdditiveScore, ConcatScore: FusedConcatScore}
    score = AdditiveScore(DQ, DK, A, rng=np.random.default_rng(1))
    att = Attention(score)
    params, attributes = [id(p) for p in att.parameters()], dict(vars(score))
    assert swap(att, KERNELS) is att and type(att.score) is FusedAdditiveScore
    att(np.zeros((2, DQ)), np.zeros((2, S, DK)))
    assert vars(score) == attributes                          # a kernel adds no attributes
    assert [id(p) for p in att.parameters()] == params
    assert swap(att, KERNELS, back=True) is att and type(att.score) is AdditiveScore


@pytest.mark.parametrize("q_shape", [(3, 4), (3, 2, 4)], ids=["query (B, A)", "queries (B, T, A)"])
def test_additive_tanh_equals_the_composed_energy(q_shape):
    rng = np.random.default_rng(len(q_shape))
    arrays = [rng.standard_normal(q_shape), rng.standard_normal((3, 5, 4)), rng.standard_normal(4)]
    g = rng.standard_normal(q_shape[:-1] + (5,))
    results = []
    for fn in (additive_tanh, additive):
        leaves = [mg.tensor(a, requires_grad=True) for a in arrays]
        out = fn(*leaves)
        out.backward(g)
        results.append([out.data] + [t.grad for t in leaves])
    for i, (a, b) in enumerate(zip(*results)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=f"output/gradient {i}")


@pytest.mark.parametrize("q_shape", [(2, 3), (2, 2, 3)])
def test_additive_tanh_gradcheck(q_shape):
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(q_shape), rng.standard_normal((2, 4, 3)), rng.standard_normal(3)]
    assert gradcheck(additive_tanh, arrays, full_jacobian=True)


def test_the_kernel_refuses_create_graph_and_the_core_score_differentiates_twice():
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal((2, 3)), rng.standard_normal((2, 4, 5))
    score = AdditiveScore(3, 5, 6, rng=rng)
    assert gradgradcheck(lambda q, k: score(q, k), [q, k])
    swap(score, KERNELS)
    qt = mg.tensor(q, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"op 'additive_tanh'.*core AdditiveScore"):
        mg.grad(score(qt, k).sum(), [qt], create_graph=True)
    mg.grad(score(qt, k).sum(), [qt])                         # first order works
