"""Properties of soft attention, stated as the math states them (Hypothesis draws the cases).

    softmax(e + c) = softmax(e)                    shift invariance, per row
    α_j ≥ 0, Σ_j α_j = 1, min_j h_j ≤ c ≤ max_j h_j   the read is a convex combination
    read(π e, π h) = read(e, h), weights permuted   permutation equivariance over sources
    masked keys and values do not matter            mask invariance
    Var(q·k) = d, Var(q·k/√d) = 1                   for q, k ~ N(0, I_d)
    without tanh the weights do not depend on q     source 004 §5's ablation
"""
import warnings

import numpy as np
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

from attention import (AdditiveScore, Attention, DotScore, ScaledDotScore, attend, masked_softmax,
                       read)
from attention.kernels import KERNELS
from attention_checks import expand_mask, finite, read_inputs
from minigrad.kernels import swap

READS = (read, attend)


@given(read_inputs(score_range=30.0), st.data())
def test_softmax_is_shift_invariant_per_row_without_overflow(inputs, data):
    scores, _, mask = inputs
    shift = data.draw(hnp.arrays(np.float64, scores.shape[:-1] + (1,), elements=finite(-1e3, 1e3)))
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        shifted = masked_softmax(scores + shift, mask).data
        plain = masked_softmax(scores, mask).data
    assert np.all(np.isfinite(shifted))
    np.testing.assert_allclose(shifted, plain, rtol=0, atol=1e-12)


@given(read_inputs())
def test_the_read_is_a_convex_combination(inputs):
    scores, values, mask = inputs
    keep = expand_mask(mask, scores)                                   # (B, [T,] S)
    live = keep.any(-1)                                                # rows with a real key
    for fn in READS:
        c, w = (x.data for x in fn(scores, values, mask))
        assert np.all(w >= 0)
        np.testing.assert_allclose(w.sum(-1)[live], 1.0, rtol=0, atol=1e-12)
        h = values[:, None] if scores.ndim == 3 else values            # (B, [1,] S, D)
        lo = np.where(keep[..., None], h, np.inf).min(-2)              # min over real j
        hi = np.where(keep[..., None], h, -np.inf).max(-2)
        assert np.all((c >= lo - 1e-12)[live]) and np.all((c <= hi + 1e-12)[live])


@given(read_inputs(), finite(-3, 3))
def test_equal_sources_are_read_back_exactly(inputs, value):
    scores, values, mask = inputs
    same = np.full_like(values, value)                                 # h_j = h for every j
    live = expand_mask(mask, scores).any(-1)
    for fn in READS:
        c = fn(scores, same, mask)[0].data
        np.testing.assert_allclose(c[live], value, rtol=0, atol=1e-12)


@st.composite
def attention_case(draw):
    """An additive-score attention problem: seeds for the data, B, S, widths, a mask."""
    B, S = draw(st.integers(1, 3)), draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    att = Attention(AdditiveScore(3, 2, 4, rng=rng))
    q, keys, values = rng.normal(size=(B, 3)), rng.normal(size=(B, S, 2)), rng.normal(size=(B, S, 5))
    mask = draw(hnp.arrays(np.bool_, (B, S)))
    return att, q, keys, values, mask


@given(attention_case(), st.data())
def test_permuting_the_sources_permutes_the_weights_and_keeps_the_context(case, data):
    att, q, keys, values, mask = case
    perm = np.array(data.draw(st.permutations(range(keys.shape[1]))))
    c, w = att(q, keys, values, mask=mask)
    c_p, w_p = att(q, keys[:, perm], values[:, perm], mask=mask[:, perm])
    np.testing.assert_allclose(w_p.data, w.data[:, perm], rtol=0, atol=1e-12)
    np.testing.assert_allclose(c_p.data, c.data, rtol=0, atol=1e-12)


@given(attention_case(), st.integers(0, 2**32 - 1))
def test_keys_and_values_at_masked_positions_change_nothing(case, seed):
    att, q, keys, values, mask = case
    rng = np.random.default_rng(seed)
    keys2, values2 = keys.copy(), values.copy()
    keys2[~mask] = rng.normal(scale=10, size=keys2[~mask].shape)
    values2[~mask] = rng.normal(scale=10, size=values2[~mask].shape)
    for back in (False, True):                                 # attention's kernels, then the core
        swap(att, KERNELS, back=back)
        c, w = att(q, keys, values, mask=mask)
        c2, w2 = att(q, keys2, values2, mask=mask)
        np.testing.assert_array_equal(w2.data, w.data)
        np.testing.assert_allclose(c2.data, c.data, rtol=0, atol=1e-15)


def test_dot_product_variance_is_d_and_scaled_variance_is_1():
    """Var(q·k) = Σ_i Var(q_i k_i) = d. Fixed seed; the sample variance of 20 000 scores has a
    relative standard deviation of √((2 + 6/d)/20000) ≤ 2 %, so 10 % cannot flake."""
    rng = np.random.default_rng(12345)
    for d in (1, 8, 64, 512):
        q, k = rng.standard_normal((20000, d)), rng.standard_normal((20000, 1, d))
        raw = DotScore()(q, k).data[:, 0]
        scaled = ScaledDotScore()(q, k).data[:, 0]
        assert abs(raw.var() / d - 1) < 0.1
        assert abs(scaled.var() - 1) < 0.1
        np.testing.assert_allclose(scaled, raw / np.sqrt(d), rtol=1e-12)


@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 4))
def test_without_tanh_the_weights_do_not_depend_on_the_query(seed, S, T):
    rng = np.random.default_rng(seed)
    att = Attention(AdditiveScore(3, 4, 5, activation=None, rng=rng))
    keys = rng.normal(size=(2, S, 4))
    w1 = att(rng.normal(size=(2, T, 3)), keys)[1].data
    w2 = att(rng.normal(scale=5, size=(2, T, 3)), keys)[1].data
    np.testing.assert_allclose(w1, w2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(w1, w1[:, :1].repeat(T, axis=1), rtol=0, atol=1e-12)
