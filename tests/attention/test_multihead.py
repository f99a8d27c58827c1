"""Scaled dot-product and multi-head attention: against NumPy, masks (key padding, causal),
gradchecks, and one head with identity projections = ScaledDotScore + attend."""
import numpy as np
import pytest

import minigrad as mg
from attention import (MultiHeadAttention, ScaledDotScore, attend, causal_mask,
                       scaled_dot_product_attention)
from minigrad.gradcheck import gradcheck, gradcheck_module


def np_sdpa(q, k, v, mask):
    e = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    z = np.where(mask, np.exp(e - e.max(-1, keepdims=True)), 0.0)
    a = z / np.maximum(z.sum(-1, keepdims=True), 1e-300)
    return a @ v, a


@pytest.mark.parametrize("heads", [False, True])
def test_sdpa_matches_numpy_with_padding_and_causal_masks(heads):
    rng = np.random.default_rng(0)
    lead = (2, 3) if heads else (2,)
    q, k, v = (rng.normal(size=lead + (4, 5)) for _ in range(3))       # T = S = 4
    pad = np.array([[True, True, True, False], [True, True, False, False]])
    full = pad.reshape((2,) + (1,) * (len(lead) - 1) + (1, 4)) & np.tril(np.ones((4, 4), bool))
    key_pad = pad.reshape((2,) + (1,) * len(lead) + (4,))              # (B, [1,] 1, S)
    out, w = scaled_dot_product_attention(q, k, v, attn_mask=key_pad, is_causal=True,
                                          return_weights=True)
    ref_out, ref_w = np_sdpa(q, k, v, full)
    np.testing.assert_allclose(out.data, ref_out, atol=1e-12)
    np.testing.assert_allclose(w.data, ref_w, atol=1e-12)
    assert np.all(w.data[..., np.triu_indices(4, 1)[0], np.triu_indices(4, 1)[1]] == 0)


def test_causal_output_does_not_see_the_future():
    rng = np.random.default_rng(1)
    q, k, v = (rng.normal(size=(1, 5, 3)) for _ in range(3))
    out = scaled_dot_product_attention(q, k, v, is_causal=True)
    k2, v2 = k.copy(), v.copy()
    k2[:, 3:], v2[:, 3:] = 9.0, -9.0                                   # change positions 3, 4
    out2 = scaled_dot_product_attention(q, k2, v2, is_causal=True)
    np.testing.assert_allclose(out2.data[:, :3], out.data[:, :3], atol=1e-15)


def test_sdpa_gradcheck_with_mask():
    rng = np.random.default_rng(2)
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 2))
    pad = np.array([[True] * 5, [True, True, False, True, False]])
    assert gradcheck(lambda q, k, v: scaled_dot_product_attention(q, k, v, pad[:, None, :]),
                     [q, k, v])


@pytest.mark.parametrize("causal", [False, True])
def test_multihead_gradcheck_self_attention(causal):
    rng = np.random.default_rng(3)
    mha = MultiHeadAttention(4, 2, rng=rng)
    x = mg.tensor(rng.normal(size=(2, 3, 4)), requires_grad=True)
    pad = np.array([[True, True, True], [True, True, False]])

    def fn(x):
        out, w = mha(x, x, x, mask=pad, causal=causal)
        return mg.concatenate([out.reshape(-1), w.reshape(-1)])

    assert gradcheck_module(mha, fn, [x])


def test_multihead_gradcheck_cross_attention():
    rng = np.random.default_rng(4)
    mha = MultiHeadAttention(6, 3, rng=rng)
    q = mg.tensor(rng.normal(size=(2, 2, 6)), requires_grad=True)
    kv = mg.tensor(rng.normal(size=(2, 4, 6)), requires_grad=True)
    pad = np.array([[True, True, True, True], [True, False, True, False]])
    assert gradcheck_module(mha, lambda q, kv: mha(q, kv, kv, mask=pad)[0], [q, kv])


def test_multihead_matches_a_per_head_numpy_reference():
    rng = np.random.default_rng(5)
    E, h = 6, 3
    mha = MultiHeadAttention(E, h, rng=rng)
    q, kv = rng.normal(size=(2, 3, E)), rng.normal(size=(2, 4, E))
    pad = np.array([[True, True, True, False], [True] * 4])
    out, w = mha(q, kv, kv, mask=pad)
    lin = lambda layer, x: x @ layer.weight.data.T + layer.bias.data
    Q, K, V = lin(mha.W_q, q), lin(mha.W_k, kv), lin(mha.W_v, kv)
    d = E // h
    heads, weights = [], []
    for i in range(h):
        cols = slice(i * d, (i + 1) * d)
        o, a = np_sdpa(Q[..., cols], K[..., cols], V[..., cols], pad[:, None, :])
        heads.append(o)
        weights.append(a)
    np.testing.assert_allclose(w.data, np.stack(weights, axis=1), atol=1e-12)
    np.testing.assert_allclose(out.data, lin(mha.W_o, np.concatenate(heads, -1)), atol=1e-12)
    assert w.shape == (2, h, 3, 4)


def test_one_head_with_identity_projections_equals_scaled_dot_score_and_attend():
    rng = np.random.default_rng(6)
    mha = MultiHeadAttention(5, 1, rng=rng)
    for layer in (mha.W_q, mha.W_k, mha.W_v, mha.W_o):
        layer.weight.data[...] = np.eye(5)
        layer.bias.data[...] = 0.0
    q, k, v = rng.normal(size=(2, 3, 5)), rng.normal(size=(2, 4, 5)), rng.normal(size=(2, 4, 5))
    pad = np.array([[True, False, True, True], [True] * 4])
    out, w = mha(q, k, v, mask=pad)
    context, weights = attend(ScaledDotScore()(q, k), v, pad)
    np.testing.assert_allclose(out.data, context.data, atol=1e-12)
    np.testing.assert_allclose(w.data[:, 0], weights.data, atol=1e-12)


def test_multihead_float32_end_to_end():
    rng = np.random.default_rng(7)
    mha = MultiHeadAttention(4, 2, rng=rng, dtype=np.float32)
    x = mg.tensor(rng.normal(size=(2, 3, 4)).astype(np.float32), requires_grad=True)
    out, w = mha(x, x, x, causal=True)
    out.sum().backward()
    assert out.dtype == w.dtype == x.grad.dtype == np.float32
    assert all(p.grad.dtype == np.float32 for p in mha.parameters())


def test_pytorchs_mask_names_and_positions_are_refused_not_read_the_other_way():
    """PyTorch's key_padding_mask / attn_mask mean True = ignore; ours (mask) True = attend."""
    mha = MultiHeadAttention(4, 2, rng=np.random.default_rng(8))
    x, pad = np.zeros((2, 3, 4)), np.array([[False, False, True], [False] * 3])
    for name in ("key_padding_mask", "attn_mask"):
        with pytest.raises(TypeError, match=rf"^MultiHeadAttention: {name} is PyTorch's "
                                            rf"\(True = ignore\).*mask=~{name}"):
            mha(x, x, x, **{name: pad})
    with pytest.raises(TypeError):
        mha(x, x, x, pad)                       # PyTorch's 4th positional: keyword-only here
    with pytest.raises(ValueError, match=r"dropout must be a number in \[0, 1\).*rng is keyword-only"):
        MultiHeadAttention(4, 2, np.random.default_rng(0))  # PyTorch's 3rd positional is dropout
    assert MultiHeadAttention(4, 2, 0.25, rng=np.random.default_rng(0)).dropout == 0.25


def test_sdpa_has_pytorchs_call_form_and_returns_the_output_only():
    """(query, key, value, attn_mask, dropout_p, is_causal, scale): a 2-D attn_mask is (T, S),
    True = takes part; is_causal is top-left aligned when T ≠ S; scale defaults to 1/√d."""
    rng = np.random.default_rng(9)
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 2))
    allowed = rng.random((3, 5)) < 0.7
    allowed[:, 0] = True
    out = scaled_dot_product_attention(q, k, v, allowed, 0.0, False, 0.5)
    assert isinstance(out, mg.Tensor)
    ref, _ = np_sdpa(q * 0.5 * np.sqrt(4), k, v, allowed)              # np_sdpa divides by √d
    np.testing.assert_allclose(out.data, ref, atol=1e-12)
    out, w = scaled_dot_product_attention(q, k, v, is_causal=True, return_weights=True)
    ref, ref_w = np_sdpa(q, k, v, np.tril(np.ones((3, 5), bool)))      # PyTorch's tril(L, S)
    np.testing.assert_allclose(out.data, ref, atol=1e-12)
    np.testing.assert_allclose(w.data, ref_w, atol=1e-12)
    with pytest.raises(ValueError, match=r"attn_mask \(True = may be attended\) must be boolean"):
        scaled_dot_product_attention(q, k, v, np.zeros((3, 5)))        # no additive float masks
    with pytest.raises(ValueError, match=r"attn_mask \(2, 5\) does not broadcast to scores "
                                         r"\(B=2, T=3, S=5\) \(key padding \(B, S\) is \(2, 1, 5\)"):
        scaled_dot_product_attention(q, k, v, np.ones((2, 5), bool))


def test_the_two_causal_alignments():
    """top-left (PyTorch's is_causal): j ≤ t; bottom-right (a cached decoder's last T of S
    positions): j ≤ t + S − T; the same for T = S."""
    lower = np.tril(np.ones((3, 5), bool))
    np.testing.assert_array_equal(causal_mask(3, 5, align="top-left"), lower)
    np.testing.assert_array_equal(causal_mask(3, 5), np.tril(np.ones((3, 5), bool), k=2))
    np.testing.assert_array_equal(causal_mask(4, align="top-left"), causal_mask(4))


@pytest.mark.parametrize("scale", [float("inf"), float("-inf"), float("nan")])
def test_sdpa_refuses_a_scale_that_is_not_finite(scale):
    q = np.ones((1, 2, 3))
    with pytest.raises(ValueError, match=r"^scaled_dot_product_attention: scale must be a finite"):
        scaled_dot_product_attention(q, q, q, scale=scale)
