"""``python -m minigrad.higher``: derivatives of derivatives, shown and checked.

Three demos of ``grad(..., create_graph=True)`` (``minigrad/engine.py`` explains how it works):

1. **tanh and its first six derivatives on [−7, 7]**, each taken by differentiating the
   previous one's graph; with t = tanh x every derivative is a polynomial in t, since
   d/dx P(t) = P'(t) (1 − t²), and the demo prints the largest gap to those closed forms.
2. **A Hessian-vector product** Hv, for the loss of a small logistic regression, three ways:
   the double backward (the gradient's own gradient along v), central differences of the
   gradient, (∇L(w + εv) − ∇L(w − εv)) / 2ε, and the explicit Hessian
   H = Xᵀ diag(p ⊙ (1 − p)) X / N + λI, with p = σ(Xw).
3. **Newton's method against gradient descent** on that loss: w ← w − H⁻¹ ∇L, H assembled
   column by column from Hessian-vector products, reaches the minimum to machine precision in
   a few steps, where gradient descent is still far from it.

``--out DIR`` writes ``tanh_derivatives.svg`` and ``newton_vs_gd.svg`` there (default: the
current folder); ``--no-svg`` draws in the terminal only.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

import minigrad as mg
from minigrad import i18n
from minigrad.draw import line_plot_svg, line_plot_text
from minigrad.draw.common import pad
from minigrad.draw.console import run_main
from minigrad.i18n import translator

_ = translator("minigrad")

LAMBDA = 0.1  # the logistic regression's L2 penalty: λ/2 |w|²


def tanh_derivatives(n: int = 6, points: int = 281) -> tuple:
    """x, and [tanh, d/dx tanh, …, d^n/dx^n tanh] at x, each by differentiating the last."""
    x = mg.tensor(np.linspace(-7, 7, points), requires_grad=True)
    curves, y = [], mg.tanh(x)
    curves.append(y.data.copy())
    for _ in range(n):
        (y,) = mg.grad(y.sum(), [x], create_graph=True)  # elementwise: Σ keeps each d/dx_i
        curves.append(y.data.copy())
    return x.data, curves


def closed_forms(x: np.ndarray, n: int = 6) -> list:
    """The same curves from d/dx P(t) = P'(t)(1 − t²), P_0(t) = t, t = tanh x."""
    t, poly = np.tanh(x), np.polynomial.Polynomial([0, 1])
    out = [poly(t)]
    for _ in range(n):
        poly = poly.deriv() * np.polynomial.Polynomial([1, 0, -1])
        out.append(poly(t))
    return out


def logistic_problem(seed: int = 0, n: int = 40, d: int = 3) -> tuple:
    """X (N, d) with a bias column, labels y ∈ {0, 1} drawn from a known w."""
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.standard_normal((n, d - 1)), np.ones((n, 1))], axis=1)  # (N, d)
    y = (rng.random(n) < 1 / (1 + np.exp(-X @ np.array([2.0, -1.0, 0.5][:d])))).astype(float)
    return X, y


def loss(w, X, y):
    """Mean logistic loss plus λ/2 |w|²: mean(log(1 + e^z) − y z) with z = Xw, written with
    minigrad ops so the engine can differentiate it as often as asked."""
    z = mg.tensor(X) @ w                                                     # (N,)
    softplus = mg.logsumexp(mg.stack([z, z * 0], axis=-1), axis=-1)           # log(1 + e^z)
    return (softplus - z * y).mean() + (LAMBDA / 2) * (w * w).sum()


def gradient(w_data, X, y) -> np.ndarray:
    w = mg.tensor(w_data, requires_grad=True)
    return mg.grad(loss(w, X, y), w)


def hvp(w_data, v, X, y) -> np.ndarray:
    """H v by the double backward: differentiate the gradient's projection on v."""
    w = mg.tensor(w_data, requires_grad=True)
    (g,) = mg.grad(loss(w, X, y), [w], create_graph=True)
    return mg.grad((g * v).sum(), w)


def explicit_hessian(w_data, X, y) -> np.ndarray:
    p = 1 / (1 + np.exp(-X @ w_data))
    return X.T @ (X * (p * (1 - p))[:, None]) / len(y) + LAMBDA * np.eye(X.shape[1])


def newton_vs_gd(X, y, steps: int = 8, lr: float = 1.0) -> tuple:
    """Losses over ``steps`` iterations of Newton (H from d Hessian-vector products) and GD."""
    d = X.shape[1]
    w_newton, w_gd = np.zeros(d), np.zeros(d)
    value = lambda w: float(loss(mg.tensor(w), X, y).data)
    newton, gd = [value(w_newton)], [value(w_gd)]
    for _ in range(steps):
        H = np.stack([hvp(w_newton, e, X, y) for e in np.eye(d)], axis=1)   # (d, d)
        w_newton = w_newton - np.linalg.solve(H, gradient(w_newton, X, y))
        w_gd = w_gd - lr * gradient(w_gd, X, y)
        newton.append(value(w_newton))
        gd.append(value(w_gd))
    return newton, gd


def main(argv=None) -> int:
    return run_main(_main, argv)  # any encoding; `| head` stops it quietly


def _main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minigrad.higher",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=".", help="folder for the SVGs (default: here)")
    parser.add_argument("--no-svg", action="store_true", help="terminal only")
    i18n.add_argument(parser)
    args = parser.parse_args(argv)
    i18n.apply(args)
    if not args.no_svg and not os.path.isdir(args.out):
        parser.error(_("--out {out!r} is not a folder").format(out=args.out))

    x, curves = tanh_derivatives()
    gap = max(float(np.abs(c - f).max()) for c, f in zip(curves, closed_forms(x)))
    names = ["tanh"] + [f"d{k}/dx{k}" if k > 1 else "d/dx" for k in range(1, 7)]
    series = {name: (x, c / np.abs(c).max()) for name, c in zip(names, curves)}
    title = _("tanh and its first six derivatives (each scaled to max |·| = 1)")
    print(line_plot_text(series, title=title, xlabel="x", height=24))
    print(_("largest gap to the closed forms P'(t)(1 − t²): {gap:.1e}").format(gap=gap),
          end="\n\n")

    X, y = logistic_problem()
    w, v = np.array([0.3, -0.2, 0.1]), np.array([1.0, -2.0, 0.5])
    eps = 1e-6
    by_graph, by_formula = hvp(w, v, X, y), explicit_hessian(w, X, y) @ v
    by_differences = (gradient(w + eps * v, X, y) - gradient(w - eps * v, X, y)) / (2 * eps)
    print(_("Hessian-vector product of the logistic loss (N = {n}, d = {d}):").format(
        n=len(y), d=X.shape[1]))
    for label, hv in [(_("double backward"), by_graph),
                      (_("central differences"), by_differences),
                      (_("explicit Xᵀ diag(p(1−p)) X / N + λI"), by_formula)]:
        print(f"  {pad(label, 38)} " + "  ".join(f"{c:+.9f}" for c in hv))
    print("  " + _("max |double backward − explicit| = {err:.1e}").format(
        err=np.abs(by_graph - by_formula).max()), end="\n\n")

    newton, gd = newton_vs_gd(X, y)
    best = min(newton)
    print(_("loss − min, by iteration:  Newton (H from Hessian-vector products)  vs  GD (lr 1)"))
    for k, (a, b) in enumerate(zip(newton, gd)):
        print(f"  {k:2d}   {a - best:12.3e}   {b - best:12.3e}")
    if not args.no_svg:
        its = np.arange(len(newton))
        gap_n = np.maximum(np.array(newton) - best, 1e-17)
        gap_g = np.maximum(np.array(gd) - best, 1e-17)
        paths = [os.path.join(args.out, "tanh_derivatives.svg"),
                 os.path.join(args.out, "newton_vs_gd.svg")]
        line_plot_svg(series, path=paths[0], title=title, xlabel="x")
        line_plot_svg({_("Newton"): (its, np.log10(gap_n)),
                       _("gradient descent"): (its, np.log10(gap_g))},
                      path=paths[1], title=_("log10(loss − min) per iteration"),
                      xlabel=_("iteration"), markers=True)
        print("\n" + _("wrote {first} and {second}").format(first=paths[0], second=paths[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
