"""Luong's local attention: local-m (p_t = t) and local-p (p_t = S·σ(v_pᵀ tanh(W_p q_t)),
gaussian exp(−(s − p_t)²/(2σ²)), σ = D/2), against NumPy and gradchecked."""
import numpy as np
import pytest

import minigrad as mg
from attention import Attention, DotScore, GeneralScore, LocalAttention
from minigrad.gradcheck import gradcheck_module

S, D = 9, 2


def data(rng, t=None, dq=4):
    q = rng.normal(size=(2, dq) if t is None else (2, t, dq))
    h = rng.normal(size=(2, S, 4))
    mask = np.ones((2, S), bool)
    mask[1, 6:] = False                                   # example 1 has 6 real tokens
    return q, h, mask


def np_softmax(e, keep):
    z = np.where(keep, np.exp(e - e.max(-1, keepdims=True)), 0.0)
    return z / z.sum(-1, keepdims=True)


def test_local_m_reads_only_the_window_and_renormalises_inside_it():
    rng = np.random.default_rng(0)
    q, h, mask = data(rng)
    t = np.array([1, 5])
    c, w = LocalAttention(DotScore(), D)(q, h, mask=mask, position=t)
    s = np.arange(S)
    window = (np.abs(s - t[:, None]) <= D) & mask                       # [p_t − D, p_t + D]
    e = np.einsum("bd,bsd->bs", q, h)
    np.testing.assert_allclose(w.data, np_softmax(e, window), atol=1e-12)
    assert np.all(w.data[~window] == 0)
    np.testing.assert_allclose(c.data, np.einsum("bs,bsd->bd", w.data, h), atol=1e-12)


def test_local_m_with_a_window_wider_than_the_source_is_global_attention():
    rng = np.random.default_rng(1)
    q, h, mask = data(rng)
    local = LocalAttention(DotScore(), window=S)(q, h, mask=mask, position=3)
    glob = Attention(DotScore())(q, h, mask=mask)
    np.testing.assert_allclose(local[1].data, glob[1].data, atol=1e-12)


def test_local_m_past_the_source_end_cuts_the_window_then_reads_nothing():
    """A decoder may step past the source (free decoding): not an error, as documented."""
    rng = np.random.default_rng(7)
    q, h, _ = data(rng)
    att = LocalAttention(DotScore(), D)
    _, w = att(q, h, position=S - 1 + D)                                # window [S−1, S−1+2D]
    np.testing.assert_allclose(w.data[:, -1], 1.0)
    c, w = att(q, h, position=S + D)                                    # nothing inside
    assert np.all(w.data == 0) and np.all(c.data == 0)


def test_local_m_for_a_block_of_queries_uses_p_t_equal_to_t():
    rng = np.random.default_rng(2)
    q, h, mask = data(rng, t=4)
    att = LocalAttention(DotScore(), 1)
    _, w = att(q, h, mask=mask)                                         # (B, T, S)
    for t in range(4):
        _, w_t = att(q[:, t], h, mask=mask, position=t)
        np.testing.assert_allclose(w.data[:, t], w_t.data, atol=1e-12)


def test_local_p_predicts_the_position_and_multiplies_by_a_gaussian():
    rng = np.random.default_rng(3)
    q, h, mask = data(rng)
    att = LocalAttention(DotScore(), D, predictive=True, query_dim=4, rng=rng)
    _, w = att(q, h, mask=mask)
    length = mask.sum(-1)                                               # S per example: 9 and 6
    p = length / (1 + np.exp(-(np.tanh(q @ att.W_p.data.T) @ att.v_p.data)))
    s = np.arange(S)
    window = (np.abs(s - p[:, None]) <= D) & mask
    sigma = D / 2
    align = np_softmax(np.einsum("bd,bsd->bs", q, h), window)
    expected = align * np.exp(-(s - p[:, None]) ** 2 / (2 * sigma ** 2))
    np.testing.assert_allclose(w.data, expected, atol=1e-12)
    np.testing.assert_allclose(att.predict_position(q, length).data, p, atol=1e-12)
    assert np.all(w.data[~window] == 0) and np.all(w.data.sum(-1) <= 1 + 1e-12)


@pytest.mark.parametrize("predictive", [False, True])
@pytest.mark.parametrize("t", [None, 3])
def test_local_attention_gradcheck(predictive, t):
    rng = np.random.default_rng(4)
    q, h, mask = data(rng, t=t, dq=3)
    score = GeneralScore(3, 4, rng=rng)
    att = LocalAttention(score, D, predictive=predictive, query_dim=3, rng=rng)
    position = None if predictive or t is not None else np.array([2, 4])

    def fn(q, h):
        c, w = att(q, h, mask=mask, position=position)
        return mg.concatenate([c.reshape(-1), w.reshape(-1)])

    assert gradcheck_module(att, fn, [mg.tensor(q, requires_grad=True),
                                      mg.tensor(h, requires_grad=True)])


def test_local_p_position_gets_a_gradient_through_the_gaussian():
    rng = np.random.default_rng(5)
    q, h, mask = data(rng)
    att = LocalAttention(DotScore(), D, predictive=True, query_dim=4, rng=rng)
    c, _ = att(q, h, mask=mask)
    c.sum().backward()
    assert np.abs(att.W_p.grad).max() > 0 and np.abs(att.v_p.grad).max() > 0


def test_local_attention_bad_configuration():
    with pytest.raises(ValueError, match="query_dim"):
        LocalAttention(DotScore(), 2, predictive=True)
    with pytest.raises(ValueError, match="window"):
        LocalAttention(DotScore(), -1)
    rng = np.random.default_rng(6)
    q, h, mask = data(rng)
    with pytest.raises(ValueError, match="needs position"):
        LocalAttention(DotScore(), 2)(q, h)
    with pytest.raises(ValueError, match="position of shape"):
        LocalAttention(DotScore(), 2)(q, h, position=np.array([1, 2, 3]))
    with pytest.raises(ValueError, match="do not pass position"):
        LocalAttention(DotScore(), 2, predictive=True, query_dim=4)(q, h, position=1)
