"""The demos of the sources' practical advice: 000 §4.3 (untrained vs trained alignment) and
004 §4 (hard vs soft attention), and the hard read itself."""
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from attention.demos import hard as hard_demo
from attention.demos import temperature, untrained
from attention.demos.toy import train_toy
from attention.hard import hard_read
from attention.read import read
from minigrad.gradcheck import gradcheck, numerical_grad
from minigrad.tensor import Tensor


def test_000_untrained_alignment_is_near_uniform_and_the_trained_one_diagonal(tmp_path):
    r = untrained.alignment(out_dir=tmp_path)
    before, after = r.values["untrained"], r.values["trained"]
    assert before.shape == after.shape == (6, 6)
    np.testing.assert_allclose(before.sum(-1), 1.0)
    assert np.abs(before - 1 / 6).max() < 0.1               # near uniform
    assert r.values["stats"]["untrained"]["entropy"] > 0.95 * np.log(6)
    assert np.all(after.argmax(-1) == np.arange(6))          # the diagonal
    assert r.values["stats"]["trained"]["diagonal"] > 0.9
    assert r.values["accuracy"] > 0.95
    assert "0.17" in r.text and "1.00" in r.text
    for f in r.files:
        assert ET.parse(f).getroot().tag.endswith("svg")


def test_toy_training_is_deterministic():
    a, b = train_toy(3, steps=20), train_toy(3, steps=20)
    for p, q in zip(a.model.parameters(), b.model.parameters()):
        np.testing.assert_array_equal(p.data, q.data)


def test_004_hard_reads_argmax_and_its_score_gradient_is_zero(tmp_path):
    r = hard_demo.hard(out_dir=tmp_path)
    v = r.values
    np.testing.assert_array_equal(v["hard"], [[2.0, 0.0], [0.0, -2.0]])   # h_I, h_cats
    np.testing.assert_allclose(v["soft"], [[1.392334, -0.607666], [0.607666, -1.392334]],
                               atol=1e-6)
    assert np.all(v["fd_hard"] == 0)
    assert np.abs(v["fd_soft"]).min() > 0.1
    assert v["random"]["zero_share"] == 1.0
    tie = v["random"]["at_tie"]
    np.testing.assert_allclose([tie[e] * e for e in tie], 0.75, rtol=1e-6)  # ~ 1/ε: no limit
    for name in ("trained", "untrained"):
        assert v["toy"][name]["score_grad"]["hard"] == 0
        assert v["toy"][name]["score_grad"]["soft"] > 0
    assert v["toy"]["trained"]["accuracy"]["hard"] > 0.95
    c = v["curve"]["hard"][:, 0]                              # piecewise constant in s
    assert set(np.unique(c)) <= {0.0, 1.0, 2.0} and len(np.unique(c)) == 3
    assert ET.parse(r.files[0]).getroot().tag.endswith("svg")


@settings(max_examples=20, deadline=None)
@given(B=st.integers(1, 3), T=st.integers(1, 3), S=st.integers(1, 5), D=st.integers(1, 4),
       seed=st.integers(0, 2 ** 16))
def test_hard_read_is_the_argmax_value_and_gradchecks_in_the_values(B, T, S, D, seed):
    rng = np.random.default_rng(seed)
    e = rng.standard_normal((B, T, S))
    h = Tensor(rng.standard_normal((B, S, D)), requires_grad=True)
    mask = rng.random((B, S)) < 0.7
    c, w = hard_read(e, h, mask)
    for b in range(B):
        for t in range(T):
            if mask[b].any():
                j = np.flatnonzero(mask[b])[np.argmax(e[b, t, mask[b]])]
                np.testing.assert_array_equal(c.data[b, t], h.data[b, j])
                assert w.data[b, t].sum() == 1 and w.data[b, t, j] == 1
            else:
                assert np.all(c.data[b, t] == 0) and np.all(w.data[b, t] == 0)
    gradcheck(lambda v: (hard_read(e, v, mask)[0] ** 2).sum(), [h])
    # away from ties, finite differences wrt the scores are exactly 0; the soft read's are not
    fd = numerical_grad(lambda s: (hard_read(s, h.data, mask)[0] ** 2).sum(), [Tensor(e)])[0]
    assert np.all(fd == 0)


def test_hard_read_checks_shapes():
    with pytest.raises(ValueError, match="hard_read"):
        hard_read(np.zeros((2, 3)), np.zeros((2, 4, 5)))
    with pytest.raises(ValueError, match="hard_read: mask"):
        hard_read(np.zeros((2, 3)), np.zeros((2, 3, 5)), np.ones((2, 4), bool))


def test_hard_read_matches_a_soft_read_with_one_hot_scores():
    e = np.array([[50.0, 0.0, 0.0]])                         # softmax is one-hot to 1e-21
    h = np.random.default_rng(0).standard_normal((1, 3, 2))
    np.testing.assert_allclose(hard_read(e, h)[0].data, read(e, h)[0].data, atol=1e-15)


def test_a_fully_masked_row_is_zero_here_and_uniform_with_the_sources_minus_1e9():
    """Source 000's listing fills masked scores with -1e9 and takes softmax: a row whose every
    key is masked holds S equal scores, softmax ignores the common shift, so it gives 1/S on
    every (padding) key. Here masked keys are left out of the sum: the row is all zeros."""
    from attention.masking import masked_softmax
    from minigrad import functional as F
    e = np.array([[0.3, -1.2, 2.0, 0.7], [1.0, 2.0, 3.0, 4.0]])
    mask = np.array([[True, True, False, True], [False, False, False, False]])
    ours = masked_softmax(e, mask).data
    source = F.softmax(np.where(mask, e, -1e9)).data              # masked_fill(mask == 0, -1e9)
    np.testing.assert_allclose(ours[0], source[0], atol=1e-15)   # the same where a key is real
    assert np.all(ours[1] == 0)
    np.testing.assert_allclose(source[1], 0.25)                  # uniform over the padding


def test_003_temperature_lower_sharpens_higher_flattens(tmp_path):
    r = temperature.temperature(out_dir=tmp_path)
    for rows in (r.values["example"], r.values["trained"]):
        Ts = sorted(rows)
        top = [rows[T].max(-1).mean() for T in Ts]
        ent = [temperature.entropy(rows[T]).mean() for T in Ts]
        assert all(a >= b for a, b in zip(top, top[1:])) and top[0] > top[-1]
        assert all(a <= b for a, b in zip(ent, ent[1:])) and ent[0] < ent[-1]
    np.testing.assert_allclose(r.values["example"][1.0], [[0.5414, 0.3095, 0.1491]], atol=5e-5)
    assert r.values["sqrt_d_gap"] < 1e-12
    assert "0.25   0.899     0.348" in r.text and "bracket says larger" in r.text
    assert len(r.files) == 3 and all(ET.parse(f).getroot().tag.endswith("svg") for f in r.files)
