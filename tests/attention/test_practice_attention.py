"""Source 003 §6's options on the attention read: temperature, attention dropout and the
truncated window, each gradchecked (dropout with a fixed mask)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
from attention import AdditiveScore, Attention, GeneralScore, LocalAttention, masked_softmax
from attention.kernels import KERNELS
from attention.masking import window_mask
from attention_checks import finite, read_inputs
from minigrad.gradcheck import gradcheck, gradcheck_module
from minigrad.kernels import swap


@settings(deadline=None)
@given(st.data(), finite(0.2, 5.0))
def test_masked_softmax_with_temperature_gradchecks_over_broadcast_masks(data, T):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=3, max_dims=3,
                                                         max_side=4))
    e_shape, m_shape = shapes.input_shapes
    scores = data.draw(hnp.arrays(np.float64, shapes.result_shape, elements=finite(-4, 4)))
    mask = data.draw(hnp.arrays(np.bool_, m_shape))
    expect = masked_softmax(scores / T, mask).data
    np.testing.assert_allclose(masked_softmax(scores, mask, temperature=T).data, expect,
                               rtol=0, atol=1e-14)
    gradcheck(lambda e: (masked_softmax(e, mask, temperature=T) ** 2).sum(),
              [mg.tensor(scores, requires_grad=True)])


def test_lower_temperature_sharpens_and_sqrt_d_is_a_temperature():
    e = np.array([[1.5232, 0.9640, 0.2335]])                      # source 004 §6, state A
    top = [masked_softmax(e, temperature=T).data.max() for T in (0.25, 0.5, 1, 2, 4)]
    assert all(a > b for a, b in zip(top, top[1:]))               # smaller divisor, sharper
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((5, 16)), rng.standard_normal((5, 7, 16))
    raw = np.einsum("bd,bsd->bs", q, k)
    np.testing.assert_allclose(masked_softmax(raw, temperature=4.0).data,
                               masked_softmax(raw / np.sqrt(16)).data, atol=1e-15)
    for bad in (0.0, -1.0, np.inf, np.nan):
        with pytest.raises(ValueError, match="masked_softmax: temperature"):
            masked_softmax(e, temperature=bad)


@settings(deadline=None, max_examples=8)
@given(read_inputs(with_t=True), st.integers(0, 2 ** 16), finite(0.3, 3.0),
       st.sampled_from([None, 0, 1, 2]), st.booleans())
def test_attention_with_temperature_and_window_gradchecks(inputs, seed, T, W, kernels):
    scores, values, mask = inputs
    rng = np.random.default_rng(seed)
    B, Tq, S = scores.shape
    score = AdditiveScore(3, values.shape[-1], 3, rng=rng)
    att = Attention(score, temperature=T, window=W)
    if kernels:
        swap(att, KERNELS)
    q = mg.tensor(rng.standard_normal((B, Tq, 3)), requires_grad=True)
    h = mg.tensor(values, requires_grad=True)
    c, w = att(q, h, mask=mask)
    e = score(q, h).data / T
    keep = mask[:, None, :] & (True if W is None else window_mask(np.arange(Tq), S, W))
    np.testing.assert_allclose(w.data, masked_softmax(e, np.broadcast_to(keep, e.shape)).data,
                               atol=1e-12)
    assert gradcheck_module(att, lambda a, b: (att(a, b, mask=mask)[0] ** 2).sum(), (q, h))


def test_the_window_matches_local_m_and_needs_a_position_for_one_query():
    rng = np.random.default_rng(1)
    score = GeneralScore(4, 5, rng=rng)
    q, h = rng.standard_normal((3, 4)), rng.standard_normal((3, 8, 5))
    for t in (0, 3, 7, 10):
        c, w = Attention(score, window=2)(q, h, position=t)
        c_local, w_local = LocalAttention(score, window=2)(q, h, position=t)
        np.testing.assert_allclose(w.data, w_local.data, atol=1e-15)
        np.testing.assert_allclose(c.data, c_local.data, atol=1e-15)
    with pytest.raises(ValueError, match="Attention: window"):
        Attention(score, window=2)(q, h)
    for bad in (-1, 1.5, "2"):
        with pytest.raises(ValueError, match="Attention: window"):
            Attention(score, window=bad)


def test_dropout_on_the_weights_only_in_training_and_training_needs_a_generator():
    rng = np.random.default_rng(2)
    score = AdditiveScore(3, 4, 3, rng=rng)
    att = Attention(score, dropout=0.4)
    q = mg.tensor(rng.standard_normal((2, 3, 3)), requires_grad=True)
    h = mg.tensor(rng.standard_normal((2, 6, 4)), requires_grad=True)
    with pytest.raises(ValueError, match=r"^Attention: dropout=0\.4 in training mode needs rng="):
        att(q, h)                                                     # never silently undropped
    c_plain, w = att.eval()(q, h)                                     # eval: no dropout, no rng
    att.train()
    c_drop, w_drop = att(q, h, rng=np.random.default_rng(9))
    np.testing.assert_array_equal(w.data, w_drop.data)                # the weights returned: α
    keep = np.random.default_rng(9).random(w.shape) >= 0.4            # the mask it drew
    np.testing.assert_allclose(c_drop.data, np.einsum("bts,bsd->btd", w.data * keep / 0.6, h.data),
                               atol=1e-12)                            # c = Σ_j α_j m_j/(1−p) h_j
    assert not np.allclose(c_drop.data, c_plain.data)
    fixed = lambda a, b: (att(a, b, rng=np.random.default_rng(9))[0] ** 2).sum()
    assert gradcheck_module(att, fixed, (q, h))                       # a fixed dropout mask
    att.eval()
    np.testing.assert_array_equal(att(q, h, rng=np.random.default_rng(9))[0].data, c_plain.data)
    for bad in (-0.1, 1.0, np.nan):
        with pytest.raises(ValueError, match="Attention: dropout"):
            Attention(score, dropout=bad)
    with pytest.raises(ValueError, match="Attention: temperature"):
        Attention(score, temperature=0)
