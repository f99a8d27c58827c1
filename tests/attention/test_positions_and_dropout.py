"""Positional encodings (the formula, relative offsets as rotations, learned ones gradcheck)
and multi-head attention's pieces for the Transformer: attention dropout and the cached read
(``project_kv`` + ``attend``) equal to ``forward``."""
from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
from attention import MultiHeadAttention
from attention.positional import LearnedPositions, sinusoidal_encoding
from minigrad.gradcheck import gradcheck_module


def test_sinusoids_follow_the_formula():
    pe = sinusoidal_encoding(7, 6)
    for pos in range(7):
        for i in range(3):
            angle = pos / 10000 ** (2 * i / 6)
            assert pe[pos, 2 * i] == pytest.approx(np.sin(angle))
            assert pe[pos, 2 * i + 1] == pytest.approx(np.cos(angle))
    assert sinusoidal_encoding(3, 5).shape == (3, 5)                      # odd D
    np.testing.assert_allclose(sinusoidal_encoding(4, 6, start=3), pe[3:7])


def test_an_offset_is_the_same_rotation_at_every_position():
    """PE(pos + k) = R_k PE(pos) with R_k block-diagonal 2×2 rotations, independent of pos."""
    D, k = 8, 3
    pe = sinusoidal_encoding(20, D)
    freq = 1 / 10000 ** (np.arange(0, D, 2) / D)
    for pos in (0, 5, 11):
        for i, w in enumerate(freq):
            c, s = np.cos(k * w), np.sin(k * w)
            sin_, cos_ = pe[pos, 2 * i], pe[pos, 2 * i + 1]
            np.testing.assert_allclose(pe[pos + k, 2 * i: 2 * i + 2],
                                       [s * cos_ + c * sin_, c * cos_ - s * sin_], atol=1e-12)


def test_learned_positions_gradcheck_and_refuse_past_max_len():
    pos = LearnedPositions(5, 3, np.random.default_rng(0))
    w = np.random.default_rng(1).standard_normal((4, 3))
    assert gradcheck_module(pos, lambda: (pos(4, start=1) * w).sum())
    with pytest.raises(ValueError, match=r"LearnedPositions: positions 3\.\.5 go past the 5"):
        pos(3, start=3)


def mha(dropout=0.0):
    return MultiHeadAttention(8, 2, rng=np.random.default_rng(0), dropout=dropout)


def test_attend_over_projected_keys_equals_forward():
    rng = np.random.default_rng(2)
    q, kv = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 5, 8))
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    m = mha()
    out, w = m(q, kv, kv, mask=mask)
    out2, w2 = m.attend(mg.tensor(q), *m.project_kv(mg.tensor(kv), mg.tensor(kv)),
                        mask=mask)
    np.testing.assert_allclose(out2.data, out.data, rtol=1e-12)
    np.testing.assert_allclose(w2.data, w.data, rtol=1e-12)


def test_attention_dropout_keeps_the_expected_read_and_is_off_in_eval():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 4, 8))
    m = mha(dropout=0.3)
    with pytest.raises(ValueError, match="dropout: pass rng"):
        m(x, x, x)
    draws = [m(x, x, x, rng=np.random.default_rng(s))[0].data for s in range(1500)]
    m.eval()
    clean, _ = m(x, x, x)
    assert not np.allclose(draws[0], clean.data)
    np.testing.assert_allclose(np.mean(draws, axis=0), clean.data, atol=0.05)
    assert gradcheck_module(m.train(), lambda: (m(x, x, x, rng=np.random.default_rng(0))[0]
                                                ** 2).sum())
    with pytest.raises(ValueError, match=r"MultiHeadAttention: dropout must be a number in \[0, 1\)"):
        mha(dropout=1.0)
