"""Score functions: each against its formula written in NumPy, gradchecked end to end in
float64 (parameters and inputs, through softmax and the read), with (B, Dq) and (B, T, Dq)
queries, and with the key projection computed once and reused."""
import numpy as np
import pytest

import minigrad as mg
from attention import (AdditiveScore, Attention, ConcatScore, DotScore, GeneralScore,
                       ScaledDotScore, attend)
from minigrad.gradcheck import gradcheck_module

B, T, S, DQ, DK, A = 2, 3, 4, 3, 5, 4


def make(name, rng, dq=DQ, dk=DK, dtype=np.float64):
    return {
        "additive": lambda: AdditiveScore(dq, dk, A, rng=rng, dtype=dtype),
        "additive-nobias": lambda: AdditiveScore(dq, dk, A, bias=False, rng=rng, dtype=dtype),
        "additive-linear": lambda: AdditiveScore(dq, dk, A, activation=None, rng=rng, dtype=dtype),
        "concat": lambda: ConcatScore(dq, dk, A, rng=rng, dtype=dtype),
        "general": lambda: GeneralScore(dq, dk, rng=rng, dtype=dtype),
        "dot": lambda: DotScore(),
        "scaled": lambda: ScaledDotScore(),
        "scaled-2.5": lambda: ScaledDotScore(scale=2.5),
    }[name]()


NAMES = ["additive", "additive-nobias", "additive-linear", "concat", "general", "dot",
         "scaled", "scaled-2.5"]
SAME_WIDTH = {"dot", "scaled", "scaled-2.5"}


def reference(name, m, q, h):
    """The score written as its formula, one (query, key) pair at a time: q (Dq,), h (Dk,)."""
    if name.startswith("additive"):
        pre = m.W_q.data @ q + m.W_k.data @ h + (m.b.data if m.b is not None else 0)
        return m.v.data @ (pre if m.activation is None else np.tanh(pre))
    if name == "concat":
        return m.v.data @ np.tanh(m.W.data @ np.concatenate([q, h]))     # vᵀ tanh(W [q; h])
    if name == "general":
        return q @ m.W.data @ h                                            # qᵀ W h
    return q @ h / {"dot": 1.0, "scaled": np.sqrt(len(h)), "scaled-2.5": 2.5}[name]


def inputs(name, rng, t=None):
    dk = DQ if name in SAME_WIDTH else DK
    q = rng.normal(size=(B, DQ) if t is None else (B, t, DQ))
    return q, rng.normal(size=(B, S, dk))


@pytest.mark.parametrize("name", NAMES)
def test_scores_match_their_formula_for_2d_and_3d_queries(name):
    rng = np.random.default_rng(0)
    m = make(name, rng, dk=DQ if name in SAME_WIDTH else DK)
    q, h = inputs(name, rng, t=T)
    e3 = m(q, h).data                                                     # (B, T, S)
    expected = np.array([[[reference(name, m, q[b, t], h[b, s]) for s in range(S)]
                          for t in range(T)] for b in range(B)])
    np.testing.assert_allclose(e3, expected, rtol=1e-12, atol=1e-12)
    for t in range(T):                                                    # (B, Dq) -> (B, S)
        np.testing.assert_allclose(m(q[:, t], h).data, e3[:, t], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("t", [None, 2])
def test_gradcheck_end_to_end_through_the_read(name, t):
    """∂(context, weights)/∂(parameters, query, keys, values) against finite differences."""
    rng = np.random.default_rng(1)
    m = make(name, rng, dk=DQ if name in SAME_WIDTH else DK)
    q, h = inputs(name, rng, t=t)
    values = rng.normal(size=(B, S, 2))
    mask = np.array([[True, True, False, True], [True, True, True, True]])
    att = Attention(m)

    def fn(q, h, v):
        c, w = att(q, h, v, mask=mask)
        return mg.concatenate([c.reshape(-1), w.reshape(-1)])

    assert gradcheck_module(m, fn, [mg.tensor(q, requires_grad=True),
                                    mg.tensor(h, requires_grad=True),
                                    mg.tensor(values, requires_grad=True)])


@pytest.mark.parametrize("name", NAMES)
def test_projected_keys_are_reused_and_give_the_same_scores_and_gradients(name):
    rng = np.random.default_rng(2)
    m = make(name, rng, dk=DQ if name in SAME_WIDTH else DK)
    q, h = inputs(name, rng, t=T)
    keys = mg.tensor(h, requires_grad=True)
    projected = m.project_keys(keys)                     # once per source batch
    steps = [m(q[:, t], keys, projected=projected) for t in range(T)]   # every decoder step
    mg.stack(steps, axis=1).sum().backward()
    grad_reused = keys.grad
    keys2 = mg.tensor(h, requires_grad=True)
    direct = m(q, keys2)
    direct.sum().backward()
    np.testing.assert_allclose(mg.stack(steps, axis=1).data, direct.data, atol=1e-12)
    np.testing.assert_allclose(grad_reused, keys2.grad, atol=1e-12)


def test_additive_score_of_source_004_section_6():
    score = AdditiveScore(1, 2, 2, rng=np.random.default_rng(0))
    score.W_q.data[...], score.W_k.data[...] = [[1.0], [1.0]], np.eye(2)
    score.b.data[...], score.v.data[...] = 0.0, [1.0, -1.0]
    h = np.array([[[2.0, 0.0], [1.0, -1.0], [0.0, -2.0]]] * 2)
    e = score(np.array([[-1.0], [1.0]]), h)
    c, w = attend(e, h)
    np.testing.assert_allclose(e.data, [[1.5232, 0.9640, 0.2335], [0.2335, 0.9640, 1.5232]],
                               atol=5e-5)
    np.testing.assert_allclose(w.data, [[0.5414, 0.3095, 0.1491], [0.1491, 0.3095, 0.5414]],
                               atol=5e-5)
    np.testing.assert_allclose(c.data, [[1.392334, -0.607666], [0.607666, -1.392334]], atol=5e-7)


@pytest.mark.parametrize("name", ["additive", "concat", "general"])
def test_parameters_are_initialised_like_pytorch_linear(name):
    m = make(name, np.random.default_rng(3), dq=7, dk=9)
    fan_in = {"additive": {"W_q": 7, "W_k": 9, "b": 9, "v": A}, "concat": {"W": 16, "v": A},
              "general": {"W": 9}}[name]
    for pname, p in m.named_parameters():
        bound = 1 / np.sqrt(fan_in[pname])
        assert np.all(np.abs(p.data) <= bound) and np.abs(p.data).max() > 0.5 * bound


@pytest.mark.parametrize("name", NAMES)
def test_float32_stays_float32(name):
    rng = np.random.default_rng(4)
    m = make(name, rng, dk=DQ if name in SAME_WIDTH else DK, dtype=np.float32)
    q, h = (x.astype(np.float32) for x in inputs(name, rng, t=T))
    c, w = Attention(m)(q, h)
    assert c.dtype == np.float32 and w.dtype == np.float32
