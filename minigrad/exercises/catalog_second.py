"""Exercises 15-16: second derivatives. The forward of each is itself a first-order gradient,
so its VJP is a second derivative contracted with g: a Hessian-vector product of the logistic
loss, and the second derivative of the attention read (source 004 §7).

Shape letters: N examples, D features (exercise 15); B batch, S source length, D value width
(exercise 16).

The checker's truth is, as everywhere, central differences of the forward -- here of the
first-order gradient written out in minigrad ops (the tests check that it equals the engine's
own first derivative, and the reference solutions differentiate that twice with
``create_graph=True``).
"""
from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad import functional as F
from minigrad.exercises.catalog import Exercise, Mistake, autodiff


# ---- 15. a Hessian-vector product ------------------------------------------------------------

def _logistic_grad(w, X, y, sigma=mg.sigmoid):
    """∇f(w) for the mean logistic loss f(w) = (1/N) Σ_i [log(1 + e^{z_i}) − y_i z_i], z = X w:

        ∇f(w) = Xᵀ (σ(X w) − y) / N.

    ``sigma`` is swapped for a surrogate by the mistakes (same values, another derivative).
    """
    X = mg.tensor(X)                                        # (N, D)
    z = X @ w                                               # (N,)
    return X.T @ (sigma(z) - y) / len(y)                    # (D,)


def _logistic_cases(rng):
    cases = []
    for n, d in ((6, 3), (10, 4), (5, 2)):
        X = rng.standard_normal((n, d))                     # (N, D)
        y = rng.integers(0, 2, n).astype(np.float64)        # (N,) labels 0 or 1
        cases.append(({"w": rng.standard_normal(d)}, {"X": X, "y": y}))
    return cases


def _no_sigma_prime(z):
    """σ(z) in value, derivative 1: "forgot σ' = σ(1 − σ)"."""
    return z + (mg.sigmoid(z) - z).detach()


def _residual_for_sigma_prime(y):
    """σ(z) in value, derivative σ(z) − y (the residual, mistaken for σ')."""
    def sigma(z):
        s = mg.sigmoid(z)
        return s.detach() + (s - y).detach() * (z - z.detach())
    return sigma


def _whole_hessian(forward, name):
    """The mistake "returned the whole Hessian": ∂forward/∂name with the output's last axis
    before the input's, (…, K, K), built by the engine one one-hot g at a time -- so the
    catalogue holds no formula for it."""
    grads = autodiff(forward)

    def wrong(g, x, c):
        rows = [grads(np.broadcast_to(row, g.shape).copy(), x, c)[name]
                for row in np.eye(g.shape[-1])]
        return {name: np.stack(rows, axis=-2)}                # (…, K, K)
    return wrong


HVP = Exercise(
    name="hvp", stars=5, title="a Hessian-vector product (logistic loss)",
    formula="p = ∇f(w) = Xᵀ(σ(X w) − y)/N (logistic loss); return H g without building H",
    args=("w",),
    forward=_logistic_grad,
    cases=_logistic_cases,
    hints=(
        "w (D,), X (N, D), labels y (N,) of 0s and 1s, N = len(y). The forward p = ∇f(w) is "
        "(D,), so g and your answer are (D,) too. Never build the D × D Hessian: go through "
        "the examples -- the product X g is (N,), one number per example; weight it "
        "elementwise; multiplying by Xᵀ brings it back to (D,).",
        "p is linear in σ(z), z = X w, and dσ/dz = σ(1 − σ), so H = ∂p/∂w = Xᵀ diag(σ(1 − σ)) "
        "X / N. H is symmetric, so the VJP is H g = Xᵀ (σ(1 − σ) ⊙ (X g)) / N. The labels y "
        "drop out.",
    ),
    mistakes=(
        Mistake("this is the whole Hessian H (D, D): return H g, a (D,) vector -- and "
                "better, never build H: Xᵀ (σ(1 − σ) ⊙ (X g)) / N",
                _whole_hessian(_logistic_grad, "w")),
        Mistake("missing σ' = σ(1 − σ): the Hessian of the logistic loss is "
                "Xᵀ diag(σ(1 − σ)) X / N, not Xᵀ X / N",
                autodiff(lambda w, X, y: _logistic_grad(w, X, y, _no_sigma_prime))),
        Mistake("σ − y is the residual of the gradient, not the derivative of σ: the weight of "
                "example i is σ(z_i)(1 − σ(z_i)), and y drops out of the Hessian",
                autodiff(lambda w, X, y: _logistic_grad(w, X, y, _residual_for_sigma_prime(y)))),
    ),
)

# ---- 16. the attention read, second order ----------------------------------------------------

def _read_grad(e, h, gc, mistake=None):
    """a = ∂L/∂e for L = g_c·c, c = Σ_j α_j h_j, α = softmax(e) (source 004 §7):

        s_j = g_c·h_j,   s̄ = Σ_k α_k s_k = g_c·c,   a_j = α_j (s_j − s̄).

    ``mistake`` keeps the values (except "no -c") and changes one gradient path.
    """
    alpha = F.softmax(e, axis=-1)                           # (B, S)
    s = (h * mg.expand_dims(gc, 1)).sum(axis=-1)            # (B, S)
    s_bar = (alpha * s).sum(axis=-1, keepdims=True)         # (B, 1)
    if mistake == "c constant":
        s_bar = s_bar.detach()
    if mistake == "outer alpha constant":
        return alpha.detach() * (s - s_bar)
    if mistake == "no -c":
        return alpha * s
    return alpha * (s - s_bar)                              # (B, S)


def _read_cases(rng):
    shapes = ((1, 3, 2), (2, 4, 3), (3, 5, 4))
    return [({"e": rng.standard_normal((b, s)), "h": rng.standard_normal((b, s, d)),
              "gc": rng.standard_normal((b, d))}, {}) for b, s, d in shapes]


def _read_mistake(text, name, inputs=("e",)):
    grads = autodiff(lambda e, h, gc: _read_grad(e, h, gc, mistake=name))
    return Mistake(text, lambda g, x, c: {k: v for k, v in grads(g, x, c).items() if k in inputs})


READ_SECOND = Exercise(
    name="read_second", stars=5, title="the attention read, second order",
    formula="a = ∂L/∂e = α ⊙ (s − α·s), s_j = g_c·h_j (004 §7); differentiate a again",
    args=("e", "h", "gc"),
    forward=_read_grad,
    cases=_read_cases,
    hints=(
        "e (B, S), h (B, S, D), gc = g_c (B, D); the forward a and g are (B, S). Recompute "
        "α = softmax(e) (B, S), s = np.einsum('bd,bsd->bs', gc, h) (B, S), s̄ = Σ α s as "
        "(B, 1) with keepdims=True, a = α (s − s̄). Every 'x·y' over S is a row sum kept as "
        "(B, 1). dh (B, S, D) is a (B, S) array times gc[:, None, :]; dgc (B, D) sums over S.",
        "Differentiate both factors of a_j = α_j (s_j − s̄): ∂α_j/∂e_i = α_j (δ_ij − α_i) and "
        "∂s̄/∂e_i = a_i. So the Hessian is H = diag(a) − α aᵀ − a αᵀ (symmetric) and "
        "de = H g = a ⊙ g − α (a·g) − a (α·g). With b = α ⊙ (g − α·g) (the softmax VJP of g): "
        "dh_j = b_j g_c and "
        "dgc = Σ_j b_j h_j. Check: Σ_j de_j = 0.",
    ),
    mistakes=(
        _read_mistake("forgot that c depends on e: in a_j = α_j (s_j − g_c·c) the context "
                      "c = Σ_k α_k h_k moves with every score, which adds −a (α·g) to dL/de",
                      "c constant"),
        _read_mistake("differentiated only c: the leading α_j of a_j = α_j (s_j − s̄) depends "
                      "on e too, which gives the diag(a) − α aᵀ part of the Hessian",
                      "outer alpha constant"),
        _read_mistake("differentiated α_j g_c·h_j: the first-order gradient is "
                      "a_j = α_j g_c·(h_j − c), and its −c term has derivatives too",
                      "no -c", inputs=("e", "h", "gc")),
        Mistake("this is the whole Hessian ∂a/∂e (B, S, S): return its product with g, "
                "de_j = Σ_i g_i H_ij, a (B, S) array -- best without building H",
                _whole_hessian(_read_grad, "e")),
    ),
    zero_sum={"e": -1},
)

EXERCISES = [HVP, READ_SECOND]
