"""Masked means not read, per query: with a per-query mask (B, T, S), a value vector holding
inf or NaN at a position masked for query t but readable by query t' reaches neither c_t nor
the gradients through query t (not even as 0 · NaN), in the fused ``read`` and the composed
``attend``, and in what builds on them; the queries that read it still get inf or NaN."""
import numpy as np
import pytest

import minigrad as mg
from attention import (Attention, DotScore, MultiHeadAttention, attend, read,
                       scaled_dot_product_attention, score_grad)
from attention.hard import hard_read
from attention.soft import masked_matmul

B, T, S, D = 2, 4, 5, 3
# the bad values: batch 0, position 1 (query 2 reads it); batch 1, position 3, entry 0 only
# (queries 0 and 3 read it); each is masked for the other queries of its batch
BAD = [(0, 1, slice(None)), (1, 3, 0)]
READERS = np.zeros((B, T), bool)
READERS[0, 2] = READERS[1, [0, 3]] = True
TOL = {np.float64: 1e-12, np.float32: 1e-5}


def per_query_mask() -> np.ndarray:
    mask = np.random.default_rng(5).random((B, T, S)) < 0.7              # (B, T, S)
    mask[0, :, 1] = False
    mask[0, 2, 1] = True
    mask[1, :, 3] = False
    mask[1, [0, 3], 3] = True
    mask[1, 1, :] = False  # a query that reads nothing: zeros
    return mask


def inputs(dtype, bad):
    """scores, mask, the values with ``bad`` at BAD and the same values with 0 there."""
    rng = np.random.default_rng(0)
    scores, values = rng.normal(size=(B, T, S)).astype(dtype), rng.normal(size=(B, S, D)).astype(dtype)
    poisoned, clean = values.copy(), values.copy()
    for b, j, d in BAD:
        poisoned[b, j, d], clean[b, j, d] = bad, 0.0
    return scores, per_query_mask(), poisoned, clean


def run(fn, scores, values, mask, weight):
    """context, ∂L/∂e, ∂L/∂h for L = Σ over the queries that read no bad value of c ⊙ weight."""
    s, v = mg.tensor(scores, requires_grad=True), mg.tensor(values, requires_grad=True)
    with np.errstate(invalid="ignore", over="ignore"):  # the composed readers' inf · 0
        c, _ = fn(s, v, mask)
        (mg.where(~READERS[..., None], c, 0.0) * weight).sum().backward()
    return c.data, s.grad, v.grad


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("fn", [read, attend], ids=["read", "attend"])
def test_a_value_masked_for_some_queries_reaches_only_the_others(fn, bad, dtype):
    scores, mask, poisoned, clean = inputs(dtype, bad)
    weight = np.random.default_rng(1).normal(size=(B, T, D))
    c, ge, gh = run(fn, scores, poisoned, mask, weight)
    c0, ge0, gh0 = run(fn, scores, clean, mask, weight)
    assert c.dtype == ge.dtype == gh.dtype == dtype
    others = ~READERS
    assert np.isfinite(c[others]).all() and np.isfinite(ge[others]).all() and np.isfinite(gh).all()
    np.testing.assert_allclose(c[others], c0[others], rtol=0, atol=TOL[dtype])
    np.testing.assert_allclose(ge[others], ge0[others], rtol=0, atol=TOL[dtype])
    np.testing.assert_allclose(gh, gh0, rtol=0, atol=TOL[dtype])
    assert (ge[~mask] == 0).all()  # masked: exactly 0, in the readers' rows too
    # the readers read it: c_t is inf or NaN where the bad entry is, as α_tj · bad makes it
    want = np.nan if np.isnan(bad) else bad
    np.testing.assert_array_equal(c[0, 2], np.full(D, want))
    np.testing.assert_array_equal(c[1, [0, 3], 0], [want, want])
    assert np.isfinite(c[1, [0, 3], 1:]).all()
    np.testing.assert_array_equal(c[1, 1], np.zeros(D))  # reads nothing


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_fused_and_composed_agree_also_where_the_upstream_gradient_is_not_finite(bad):
    """L = Σ c ⊙ c: the readers' g_t = 2 c_t is inf or NaN; it reaches the gradient of every
    value they read (inf or NaN, which of the two depending on the order of the sums), but no
    other, and never a masked score's."""
    scores, mask, poisoned, _ = inputs(np.float64, bad)
    out = []
    for fn in (read, attend):
        s, v = mg.tensor(scores, requires_grad=True), mg.tensor(poisoned, requires_grad=True)
        with np.errstate(invalid="ignore", over="ignore"):  # the composed readers' inf · 0
            c, _ = fn(s, v, mask)
            (c * c).sum().backward()
        out.append((c.data, s.grad, v.grad))
    for fused, composed in zip(*out):
        np.testing.assert_array_equal(np.isfinite(fused), np.isfinite(composed))
        finite = np.isfinite(fused)
        np.testing.assert_allclose(fused[finite], composed[finite], rtol=1e-12, atol=1e-12)
    _, ge, gh = out[0]
    assert (ge[~mask] == 0).all() and np.isfinite(ge[~READERS]).all()
    read_by_a_reader = (mask & READERS[..., None]).any(axis=1)             # (B, S)
    assert np.isfinite(gh[~read_by_a_reader]).all()
    assert not np.isfinite(gh[0, 1]).all() and not np.isfinite(gh[1, 3]).all()


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_score_grad_with_a_mask_gives_masked_positions_exactly_0(bad):
    scores, mask, poisoned, _ = inputs(np.float64, bad)
    c, w = read(scores, poisoned, mask)
    g = np.random.default_rng(2).normal(size=(B, T, D))
    plain = score_grad(w.data, poisoned, c.data, g)
    assert not np.isfinite(plain[~mask]).all()  # 0 · NaN without the mask
    grad = score_grad(w.data, poisoned, c.data, g, mask)
    assert (grad[~mask] == 0).all() and np.isfinite(grad[~READERS]).all()
    np.testing.assert_array_equal(grad[mask], plain[mask])
    with pytest.raises(ValueError, match="score_grad: mask"):
        score_grad(w.data, poisoned, c.data, g, mask[:, :, :2])


def test_masked_matmul_matches_the_sum_over_read_entries():
    """Against a plain loop over Σ_{j: m_tj} w_tj x_jd, with ±inf and NaN mixed in, a weight
    that underflowed to 0 at a readable entry (0 · inf = NaN) and +inf meeting −inf."""
    rng = np.random.default_rng(3)
    w, m, x = rng.random((2, 3, 6)), rng.random((2, 3, 6)) < 0.6, rng.normal(size=(2, 6, 4))
    w[~m] = 0.0
    x[0, 1, 0], x[0, 2, 0], x[1, 4, 2], x[1, 5, :] = np.inf, -np.inf, np.nan, np.inf
    m[0, 0, [1, 2]] = m[1, 2, 5] = True
    w[1, 2, 5] = 0.0  # readable, weight 0: reads inf as NaN
    want = np.zeros((2, 3, 4))
    with np.errstate(invalid="ignore"):
        for b in range(2):
            for t in range(3):
                for j in np.flatnonzero(m[b, t]):
                    want[b, t] += w[b, t, j] * x[b, j]
    np.testing.assert_allclose(masked_matmul(w, m, x), want, rtol=1e-12, atol=1e-12, equal_nan=True)
    assert np.isnan(want[0, 0, 0]) and np.isnan(want[1, 2]).all()


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("dropout", [0.0, 0.5])
def test_causal_attention_never_reads_a_later_bad_value(bad, dropout):
    """scaled_dot_product_attention and MultiHeadAttention, causal (query t reads 0..t), with
    and without dropout: a bad value at position 3 reaches queries 3.. only."""
    rng = np.random.default_rng(4)
    q, k, v = (rng.normal(size=(2, 2, 5, 4)) for _ in range(3))         # (B, h, T|S, d)
    results = []
    for x in (bad, 0.0):
        v[:, :, 3] = x
        qt, vt = mg.tensor(q, requires_grad=True), mg.tensor(v, requires_grad=True)
        with np.errstate(invalid="ignore"):  # the readers' inf · 0 in the dropout read
            out, _ = scaled_dot_product_attention(qt, k, vt, causal=True, dropout=dropout,
                                                  rng=np.random.default_rng(7))
            out[:, :, :3].sum().backward()
        results.append((out.data[:, :, :3], qt.grad[:, :, :3], vt.grad))  # queries 0..2
        assert np.isfinite(out.data[:, :, 3:]).all() == (x == 0)  # queries 3, 4 read it
    for poisoned, clean in zip(*results):
        assert np.isfinite(poisoned).all()
        np.testing.assert_allclose(poisoned, clean, rtol=0, atol=1e-12)

    mha = MultiHeadAttention(8, 2, rng=np.random.default_rng(0))
    x = rng.normal(size=(2, 5, 8))
    value = x.copy()
    value[:, 3] = bad
    with np.errstate(invalid="ignore"):  # inf − inf in the value projection
        out, _ = mha(x, x, value, causal=True)
    clean, _ = mha(x, x, np.where(np.arange(5)[:, None] == 3, 0.0, x), causal=True)
    assert np.isfinite(out.data[:, :3]).all() and not np.isfinite(out.data[:, 3:]).any()
    np.testing.assert_allclose(out.data[:, :3], clean.data[:, :3], rtol=0, atol=1e-12)


@pytest.mark.parametrize("fused", [True, False])
def test_windowed_attention_with_dropout_and_hard_read(fused):
    """A window of 0 (query t reads position t only) gives per-query masks; dropout reads
    again with the dropped weights, and the hard read with one-hot weights."""
    rng = np.random.default_rng(8)
    query, keys = rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 4, 3))
    values = rng.normal(size=(2, 4, 3))
    values[:, 2] = np.nan
    att = Attention(DotScore(), fused=fused, dropout=0.5, window=0)
    att.train()
    context, _ = att(query, keys, values, rng=np.random.default_rng(9))
    assert np.isfinite(context.data[:, [0, 1, 3]]).all()
    mask = np.eye(4, dtype=bool)[None]                                   # (1, T, S)
    c, _ = hard_read(rng.normal(size=(2, 4, 4)), values, mask)
    assert np.isfinite(c.data[:, [0, 1, 3]]).all() and np.isnan(c.data[:, 2]).all()
