"""The Hessian of source 004 §7's loss with respect to the scores, derived and checked.

Source 004 §7 derives the gradient of L = g·c, c = Σ_j α_j h_j, α = softmax(e):

    ∂L/∂e_j = α_j (u_j − ū),   u_j = g·h_j,   ū = Σ_k α_k u_k = g·c.

**The second derivative.** Write d_j = u_j − ū. With ∂α_j/∂e_i = α_j (δ_ij − α_i) and
∂ū/∂e_i = Σ_k u_k ∂α_k/∂e_i = α_i (u_i − ū) = α_i d_i (the first formula again),

    ∂²L/∂e_i∂e_j = ∂/∂e_i [α_j d_j] = α_j (δ_ij − α_i) d_j − α_j α_i d_i
                 = δ_ij α_j d_j − α_i α_j (d_i + d_j),

or, with a = α ⊙ d (the gradient itself):  **H = diag(a) − α aᵀ − a αᵀ**. It is symmetric, and
each row sums to zero (Σ_j α_j = 1, Σ_j a_j = Σ_j α_j (u_j − ū) = 0): adding the same number to
every score changes nothing, to second order as to first. The demo computes H for both of §6's
states by differentiating the composed read twice (``attend``, ``create_graph=True``), prints it
beside the formula, and checks it against central differences of the first derivative.
"""
from __future__ import annotations

import numpy as np

import minigrad as mg
from attention.demos.common import DemoResult
from attention.demos.source_004 import SOURCES, STATES, TOKENS, read_at
from attention.read import attend
from minigrad.draw.common import pad
from minigrad.i18n import translator

_ = translator("attention")


def hessian_formula(weights: np.ndarray, values: np.ndarray, g: np.ndarray) -> np.ndarray:
    """H = diag(a) − α aᵀ − a αᵀ with a = α ⊙ (u − ū), u_j = g·h_j: (S,), (S, D), (D,) → (S, S)."""
    u = values @ g                                    # (S,): g·h_j
    a = weights * (u - weights @ u)                   # (S,): ∂L/∂e_j
    return np.diag(a) - np.outer(weights, a) - np.outer(a, weights)


def hessian_by_autograd(scores: np.ndarray, values: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Row i of H is the gradient of ∂L/∂e_i: the first derivative recorded, then
    differentiated once per row."""
    e = mg.tensor(scores[None], requires_grad=True)                  # (1, S)
    loss = (attend(e, values[None])[0] * g).sum()                     # L = g·c
    (first,) = mg.grad(loss, [e], create_graph=True)                  # (1, S), with its graph
    return np.stack([mg.grad(first[0, i], e, retain_graph=True)[0] for i in range(len(scores))])


def hessian_by_differences(scores, values, g, eps: float = 1e-5) -> np.ndarray:
    """Central differences of the first derivative: column j from e ± ε e_j."""
    def first(e):
        t = mg.tensor(e[None], requires_grad=True)
        return mg.grad((attend(t, values[None])[0] * g).sum(), t)[0]
    steps = np.eye(len(scores)) * eps
    return np.stack([(first(scores + s) - first(scores - s)) / (2 * eps) for s in steps], axis=1)


def hessian(out_dir=None, g=(1.0, 0.5)) -> DemoResult:
    """§7, one order up: ∂²L/∂e∂e = diag(a) − α aᵀ − a αᵀ beside autograd and differences."""
    g = np.asarray(g, dtype=float)
    lines = [_("Source 004 §7, second order: the Hessian of L = g·c with respect to the scores"),
             "  ∂²L/∂e_i∂e_j = δ_ij a_j − α_i a_j − a_i α_j,  a_j = α_j (g·h_j − g·c) = ∂L/∂e_j",
             _("  (derivation: attention/demos/hessian_004.py); g = ({g0:g}, {g1:g})").format(
                 g0=g[0], g1=g[1]), ""]
    values = {}
    for name, s in STATES.items():
        scores, weights = (x[0] for x in read_at([s])[:2])             # (S,), (S,)
        formula = hessian_formula(weights, SOURCES, g)
        graph = hessian_by_autograd(scores, SOURCES, g)
        numeric = hessian_by_differences(scores, SOURCES, g)
        lines.append(_("state {name} (s = {s:g}):").format(name=name, s=s) + "   "
                     + pad(_("formula"), 34) + _("double backward"))
        for i, tok in enumerate(TOKENS):
            row = lambda m: " ".join(f"{v:+.6f}" for v in m[i])
            lines.append(f"  {tok:<6} {row(formula)}    {row(graph)}")
        lines += [_("  max |formula − double backward| = {autograd:.1e},  "
                    "max |formula − differences| = {numeric:.1e},").format(
                      autograd=np.abs(formula - graph).max(),
                      numeric=np.abs(formula - numeric).max()),
                  _("  row sums (shift invariance) ≤ {sums:.1e},  symmetric: {symmetric}").format(
                      sums=np.abs(formula.sum(axis=1)).max(),
                      symmetric=np.allclose(formula, formula.T, atol=1e-15)), ""]
        values[name] = {"formula": formula, "autograd": graph, "numeric": numeric}
    return DemoResult("\n".join(lines), values)
