"""``python -m minigrad.higher``: the tanh derivatives, the Hessian-vector product and
Newton vs gradient descent, each checked against what it claims."""
from __future__ import annotations

import numpy as np

from minigrad import higher


def test_six_tanh_derivatives_equal_the_closed_forms():
    x, curves = higher.tanh_derivatives(points=41)
    assert len(curves) == 7
    for got, want in zip(curves, higher.closed_forms(x)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_the_hessian_vector_product_three_ways():
    X, y = higher.logistic_problem()
    w, v = np.array([0.3, -0.2, 0.1]), np.array([1.0, -2.0, 0.5])
    H = higher.explicit_hessian(w, X, y)
    np.testing.assert_allclose(higher.hvp(w, v, X, y), H @ v, rtol=1e-12, atol=1e-14)
    eps = 1e-6
    diff = (higher.gradient(w + eps * v, X, y) - higher.gradient(w - eps * v, X, y)) / (2 * eps)
    np.testing.assert_allclose(diff, H @ v, rtol=1e-6)


def test_newton_reaches_the_minimum_long_before_gradient_descent():
    newton, gd = higher.newton_vs_gd(*higher.logistic_problem(), steps=6)
    best = min(newton + gd)
    assert newton[4] - best < 1e-12
    assert gd[-1] - best > 1e-4 and all(b <= a for a, b in zip(gd, gd[1:]))


def test_the_command_draws_and_writes_its_pictures(tmp_path, capsys):
    assert higher.main(["--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "largest gap to the closed forms" in out and "double backward" in out
    for name in ("tanh_derivatives.svg", "newton_vs_gd.svg"):
        assert (tmp_path / name).read_text().startswith("<svg")
