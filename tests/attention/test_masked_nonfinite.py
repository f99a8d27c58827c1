"""inf and NaN near a mask. The contract (attention/read.py):

* values at masked positions must be finite: a masked weight is exactly 0, but 0 · inf = NaN,
  so (as in PyTorch) zeroing them is the caller's job; every reader refuses such values with a
  one-line ValueError naming itself, the values' shape and the position, checked only when the
  output is not finite;
* keys at masked positions must be finite too (the output is finite, but the backward's
  0 · NaN would reach q.grad): refused the same way by every reader that scores keys;
* inf or NaN at positions that are read reach the output as NumPy's arithmetic makes them;
* a query whose every key is masked reads zeros and passes back zero gradients, never NaN.
"""
import re
import warnings

import numpy as np
import pytest

import minigrad as mg
from attention import (AdditiveScore, Attention, ConcatScore, DotScore, GeneralScore,
                       LocalAttention, MultiHeadAttention, attend, read, scaled_dot_product_attention, score_grad)
from attention.hard import hard_read

B, T, S, D = 2, 4, 5, 3
BAD = (np.nan, np.inf, -np.inf)
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")


def per_query_mask() -> np.ndarray:
    """(B, T, S), True = may be read; query (1, 1) reads nothing."""
    mask = np.random.default_rng(5).random((B, T, S)) < 0.7
    mask[:, :, 0] = True
    mask[1, 1, :] = False
    return mask


# ---- masked values must be finite: the error --------------------------------------------------

@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("fn", [read, attend], ids=["read", "attend"])
def test_a_non_finite_value_at_a_masked_position_is_refused(fn, bad):
    rng = np.random.default_rng(0)
    scores, values = rng.normal(size=(B, S)), rng.normal(size=(B, S, D))
    mask = np.array([[True, True, False, True, True], [True] * S])
    values[0, 2, 1] = bad                                              # masked for batch 0
    name = fn.__name__
    with pytest.raises(ValueError) as info:
        fn(scores, values, mask)
    assert str(info.value) == (f"{name}: values (B=2, S=5, 3) hold inf or NaN at a masked "
                               f"position, values[0, 2]; values at masked positions must be "
                               f"finite (zero them before the read)")
    c, _ = fn(scores, np.where(mask[..., None], values, 0.0), mask)     # zeroed: read as usual
    assert np.isfinite(c.data).all()


@pytest.mark.parametrize("bad", BAD)
def test_a_value_masked_for_one_query_is_refused_even_if_another_reads_it(bad):
    """With per-query masks (B, T, S) the precondition is per query: a value that query t may
    not read must be finite, also when query t' may."""
    rng = np.random.default_rng(1)
    scores, values = rng.normal(size=(B, T, S)), rng.normal(size=(B, S, D))
    mask = np.ones((B, T, S), dtype=bool)
    mask[1, 2, 3] = False                                              # only query 2 of batch 1
    values[1, 3] = bad
    for fn in (read, attend):
        with pytest.raises(ValueError, match=re.escape(f"{fn.__name__}: values (B=2, S=5, 3) "
                                                       "hold inf or NaN at a masked position, "
                                                       "values[1, 3]")):
            fn(scores, values, mask)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_every_reader_built_on_the_read_refuses_them_and_names_itself(bad):
    rng = np.random.default_rng(2)
    q, keys = rng.normal(size=(B, T, D)), rng.normal(size=(B, S, D))
    values = rng.normal(size=(B, S, D))
    values[0, 4] = bad
    mask = np.array([[True] * 4 + [False], [True] * S])
    drop = Attention(DotScore(), dropout=0.5)
    drop.train()
    calls = {
        "Attention": lambda: Attention(DotScore())(q, keys, values, mask=mask),
        "Attention (with dropout)": lambda: drop(q, keys, values, mask=mask,
                                                      rng=np.random.default_rng(0)),
        "hard_read": lambda: hard_read(q @ keys.swapaxes(-1, -2), values, mask),
        "LocalAttention (local-m)": lambda: LocalAttention(DotScore(), 1)(q, keys, values, mask=mask),
        "LocalAttention": lambda: LocalAttention(GeneralScore(D, D, rng=rng), 1, True,
                                                 query_dim=D, rng=rng)(q, keys, values, mask=mask),
    }
    for who, call in calls.items():
        message = rf"^{who.split()[0]}: values \(B=2, S=5, 3\) hold inf or NaN at a masked"
        with pytest.raises(ValueError, match=message):
            call()


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("dropout", [0.0, 0.5])
def test_causal_attention_refuses_a_bad_value_that_an_earlier_query_may_not_see(bad, dropout):
    """Query t sees keys 0..t: a bad value at position 3 is masked for queries 0..2."""
    rng = np.random.default_rng(4)
    q, k, v = (rng.normal(size=(2, 2, 5, 4)) for _ in range(3))         # (B, h, T|S, d)
    v[1, 0, 3, 2] = bad
    who = "scaled_dot_product_attention"
    with pytest.raises(ValueError, match=re.escape(f"{who}: values (B=2, h=2, S=5, 4) hold inf "
                                                   "or NaN at a masked position, values[1, 0, 3]")):
        scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=dropout,
                                     rng=np.random.default_rng(7))
    mha = MultiHeadAttention(8, 2, rng=np.random.default_rng(0))
    x = rng.normal(size=(2, 5, 8))
    value = x.copy()
    value[:, 3] = bad
    with np.errstate(invalid="ignore"), pytest.raises(ValueError, match="^MultiHeadAttention: values"):
        mha(x, x, value, causal=True)                                  # inf − inf in W_v
    v[1, 0, 3, 2] = 0.0
    scaled_dot_product_attention(q, k, v, is_causal=True)             # finite: read as usual


def test_huge_but_finite_masked_values_pass():
    """Only inf and NaN are refused: a masked weight is exactly 0, and 0 · 1e300 = 0."""
    rng = np.random.default_rng(3)
    scores, values = rng.normal(size=(B, S)), rng.normal(size=(B, S, D))
    mask = np.array([[True, False, True, True, True], [True] * S])
    values[0, 1] = 1e300
    c, _ = read(scores, values, mask)
    np.testing.assert_allclose(c.data, read(scores, np.where(mask[..., None], values, 0.0),
                                            mask)[0].data, rtol=0, atol=1e-12)


# ---- inf and NaN where they are read: as NumPy makes them ---------------------------------------

@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("shape", [(B, S), (B, T, S)], ids=["(B,S)", "(B,T,S)"])
def test_a_non_finite_value_that_is_read_propagates_as_numpy_makes_it(shape, bad):
    rng = np.random.default_rng(6)
    scores, values = rng.normal(size=shape), rng.normal(size=(B, S, D))
    mask = np.array([[True, True, False, True, True], [True] * S])
    values[0, 1, 0] = bad                                              # read by batch 0
    a = mg.functional.softmax(mg.tensor(scores), mask=mask if len(shape) == 2
                              else mask[:, None]).data                 # (B, [T,] S)
    with np.errstate(invalid="ignore"):
        want = np.einsum("b...s,bsd->b...d", a, values)                # NumPy's Σ_j α_j h_j
        g = rng.normal(size=want.shape)
        for fn in (read, attend):
            e, h = mg.tensor(scores, requires_grad=True), mg.tensor(values, requires_grad=True)
            c, w = fn(e, h, mask)
            c.backward(g)
            np.testing.assert_allclose(c.data, want, rtol=1e-12, atol=1e-12, equal_nan=True)
            assert not np.isfinite(c.data[0, ..., 0]).any() and np.isfinite(c.data[1]).all()
            np.testing.assert_allclose(e.grad, score_grad(a, values, c.data, g), rtol=1e-12,
                                       atol=1e-12, equal_nan=True)
            assert np.isfinite(e.grad[1]).all() and np.isfinite(h.grad[1]).all()


# ---- a query that reads nothing: zeros, never NaN ----------------------------------------------

@pytest.mark.parametrize("fn", [read, attend], ids=["read", "attend"])
def test_a_query_whose_every_key_is_masked_reads_zeros_with_zero_gradients(fn):
    rng = np.random.default_rng(7)
    mask = per_query_mask()
    e = mg.tensor(rng.normal(size=(B, T, S)), requires_grad=True)
    h = mg.tensor(rng.normal(size=(B, S, D)), requires_grad=True)
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        c, w = fn(e, h, mask)
        ((c * c).sum() + (w * w).sum()).backward()
    assert (c.data[1, 1] == 0).all() and (w.data[1, 1] == 0).all() and (e.grad[1, 1] == 0).all()
    assert np.isfinite(e.grad).all() and np.isfinite(h.grad).all()
    assert (e.grad[~mask] == 0).all()                                 # masked: exactly 0


def test_multihead_and_causal_reads_of_nothing_are_zeros_too():
    """A key padding mask that hides every key of example 0: its output is the projections'
    bias alone, its weights zeros, and every gradient finite."""
    rng = np.random.default_rng(8)
    mha = MultiHeadAttention(8, 2, rng=rng)
    x = mg.tensor(rng.normal(size=(2, 5, 8)), requires_grad=True)
    pad = np.array([[False] * 5, [True] * 3 + [False] * 2])
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        out, w = mha(x, x, x, mask=pad, causal=True)
        (out * out).sum().backward()
    assert (w.data[0] == 0).all()
    np.testing.assert_allclose(out.data[0], np.broadcast_to(mha.W_o.bias.data, (5, 8)), atol=1e-12)
    assert np.isfinite(x.grad).all()


# ---- keys at masked positions must be finite too: never a NaN in q.grad -------------------------

def _key_readers(rng):
    """name -> (who the error names, role, call(q (B, T, D), keys (B, S, D), values, mask))."""
    mha = MultiHeadAttention(D, 1, rng=rng)
    return {
        "Attention(dot)": ("Attention", "keys", lambda q, k, v, m: Attention(DotScore())(q, k, v, mask=m)),
        "Attention(general)": ("Attention", "keys", lambda q, k, v, m: Attention(
            GeneralScore(D, D, rng=rng))(q, k, v, mask=m)),
        "Attention(additive)": ("Attention", "keys", lambda q, k, v, m: Attention(
            AdditiveScore(D, D, 6, rng=rng))(q, k, v, mask=m)),
        "Attention(concat)": ("Attention", "keys", lambda q, k, v, m: Attention(
            ConcatScore(D, D, 6, rng=rng))(q, k, v, mask=m)),
        "Attention(window)": ("Attention", "keys", lambda q, k, v, m: Attention(
            DotScore(), window=1)(q, k, v, mask=m)),
        "LocalAttention(local-m)": ("LocalAttention", "keys", lambda q, k, v, m: LocalAttention(
            DotScore(), 1)(q, k, v, mask=m)),
        "LocalAttention(local-p)": ("LocalAttention", "keys", lambda q, k, v, m: LocalAttention(
            GeneralScore(D, D, rng=rng), 1, True, query_dim=D, rng=rng)(q, k, v, mask=m)),
        "scaled_dot_product_attention": ("scaled_dot_product_attention", "k", lambda q, k, v, m:
            scaled_dot_product_attention(q, k, v, attn_mask=m[:, None, :])),
        "MultiHeadAttention": ("MultiHeadAttention", "k", lambda q, k, v, m: mha(
            q, k, v, mask=m)),
    }


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("name", list(_key_readers(np.random.default_rng(0))))
def test_a_non_finite_key_at_a_masked_position_is_refused(name, bad):
    """Today's bug: the output was finite (weight 0) but q.grad got 0 · NaN = NaN."""
    rng = np.random.default_rng(10)
    who, role, call = _key_readers(np.random.default_rng(0))[name]
    q, keys, values = rng.normal(size=(B, T, D)), rng.normal(size=(B, S, D)), rng.normal(size=(B, S, D))
    mask = np.array([[True, True, True, True, False], [True] * S])
    keys[0, 4, 1] = bad                                                # masked for batch 0
    if name in ("Attention(additive)", "Attention(concat)") and not np.isnan(bad):
        qt = mg.tensor(q, requires_grad=True)           # tanh(±inf) = ±1: a finite score, and
        out, _ = call(qt, mg.tensor(keys), mg.tensor(values), mask)  # 1 − tanh² = 0 keeps
        (out * out).sum().backward()                    # q.grad finite (checks.check_masked)
        assert np.isfinite(out.data).all() and np.isfinite(qt.grad).all()
        return
    with pytest.raises(ValueError) as info:
        call(mg.tensor(q, requires_grad=True), mg.tensor(keys), mg.tensor(values), mask)
    message = str(info.value)
    assert message.startswith(f"{who}: {role} (B=2, ") and "\n" not in message
    assert f"hold inf or NaN at a masked position, {role}[0, " in message
    assert f"{role} at masked positions must be finite" in message
    keys[0, 4] = 0.0                                                   # zeroed: read as usual
    qt = mg.tensor(q, requires_grad=True)
    out, _ = call(qt, mg.tensor(keys), mg.tensor(values), mask)
    (out * out).sum().backward()
    assert np.isfinite(out.data).all() and np.isfinite(qt.grad).all()


def test_a_non_finite_key_that_is_read_is_not_refused():
    """Only masked positions are the caller's job; a key that is read propagates as NumPy
    makes it (NaN scores, NaN weights), as values do."""
    rng = np.random.default_rng(11)
    q, keys = rng.normal(size=(B, T, D)), rng.normal(size=(B, S, D))
    mask = np.array([[True, True, True, True, False], [True] * S])
    keys[1, 4, 0] = np.nan                                             # read by batch 1
    with np.errstate(invalid="ignore"):
        c, w = Attention(DotScore())(q, keys, rng.normal(size=(B, S, D)), mask=mask)
    assert np.isnan(w.data[1]).all() and np.isfinite(w.data[0]).all()
