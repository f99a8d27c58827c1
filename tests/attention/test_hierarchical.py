"""Hierarchical attention (attention/hierarchical.py; source 003 §6, experience three): the two
levels are two ``Attention`` reads, gradchecked end to end, masks included; the demo trains."""
from __future__ import annotations

import numpy as np
import pytest

from attention.demos.hierarchical import CONTENT, hierarchical
from attention.hierarchical import HierarchicalAttention
from attention.read import read
from minigrad.gradcheck import gradcheck


def han(seed=0, dim=3, attn=4):
    return HierarchicalAttention(dim, attn, rng=np.random.default_rng(seed))


def test_the_two_levels_are_two_reads():
    rng = np.random.default_rng(1)
    m = han()
    h = rng.standard_normal((2, 3, 4, 3))                          # (B, K, L, D)
    d, alpha, beta = m(h)
    assert d.shape == (2, 3) and alpha.shape == (2, 3, 4) and beta.shape == (2, 3)
    np.testing.assert_allclose(alpha.data.sum(-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(beta.data.sum(-1), 1.0, atol=1e-12)
    words = h.reshape(6, 4, 3)                                      # by hand: u_w's scores, a read
    e_w = m.word.score(np.broadcast_to(m.u_word.data, (6, 3)), words)
    s, _ = read(e_w, words)
    e_s = m.sentence.score(np.broadcast_to(m.u_sentence.data, (2, 3)), s.data.reshape(2, 3, 3))
    d_hand, _ = read(e_s, s.data.reshape(2, 3, 3))
    np.testing.assert_allclose(d.data, d_hand.data, atol=1e-12)


def test_gradcheck_end_to_end_with_padding_and_an_empty_sentence():
    rng = np.random.default_rng(2)
    mask = np.ones((2, 3, 4), bool)
    mask[0, 2, 2:] = False                                         # padding
    mask[1, 1] = False                                             # a sentence with no word
    m = han(3)
    h = rng.standard_normal((2, 3, 4, 3))
    h[~mask] = 0.0                                                 # masked values finite
    assert gradcheck(lambda x: m(x, mask)[0] * np.array([1.0, -2.0, 0.5]), [h])
    d, alpha, beta = m(h, mask)
    assert beta.data[1, 1] == 0.0 and (alpha.data[1, 1] == 0).all()   # empty: no weight
    assert (alpha.data[0, 2, 2:] == 0).all()


def test_every_parameter_gradient_matches_central_differences():
    rng = np.random.default_rng(4)
    h = rng.standard_normal((2, 2, 3, 3))
    m = han(5)

    def loss():
        d, _, beta = m(h)
        return (d ** 2).sum() + (beta ** 2).sum()
    m.zero_grad()
    loss().backward()
    for name, p in m.named_parameters():
        flat = p.data.reshape(-1)
        for i in range(min(3, flat.size)):
            keep = flat[i]
            flat[i] = keep + 1e-6
            up = loss().item()
            flat[i] = keep - 1e-6
            down = loss().item()
            flat[i] = keep
            assert abs((up - down) / 2e-6 - p.grad.reshape(-1)[i]) < 1e-6, name


@pytest.mark.parametrize("bad, mask, message", [
    (np.zeros((2, 3, 3)), None, r"^HierarchicalAttention: h \(2, 3, 3\) does not fit \(B, K, L, D=3\)"),
    (np.zeros((2, 3, 4, 5)), None, r"h \(B=2, K=3, L=4, D=5\) does not fit \(B, K, L, D=3\)"),
    (np.zeros((2, 3, 4, 3)), np.ones((2, 3, 5), bool),
     r"mask \(B=2, K=3, L=5\) does not fit \(B=2, K=3, L=4\)"),
    (np.zeros((2, 3, 4, 3)), np.ones((2, 3, 4)), "mask must be boolean"),
])
def test_bad_input_is_refused_by_name(bad, mask, message):
    with pytest.raises(ValueError, match=message):
        han()(bad, mask)


def test_the_demo_trains_and_reports_where_the_weights_sit(tmp_path):
    result = hierarchical(out_dir=str(tmp_path))
    v = result.values
    assert v["accuracy"] > 0.95                                     # a range: kernels differ
    assert len(v["by_class"]) == CONTENT
    assert sum(b > 0.9 and a > 0.9 for b, a in v["by_class"]) >= 2
    assert "class(es)" in result.text and (tmp_path / "003_hierarchical.svg").exists()
