"""Exercises 13-14: the Transformer's two new backward passes -- layer normalisation and
causal (masked) self-attention.

Shape letters: B batch, T positions (queries and keys: self-attention), D and d widths.
"""
from __future__ import annotations

import numpy as np

from minigrad import functional as F
from minigrad.exercises.catalog import Exercise, Mistake, autodiff, normal
from minigrad.nn_ops import layer_norm


# ---- 13. layer normalisation -----------------------------------------------------------------

def _ln(x, gamma, beta, mistake=None):
    """y = γ ⊙ (x − μ) / √(σ² + ε) + β over the last axis; ``mistake`` keeps the values and
    cuts one gradient path."""
    if mistake is None:
        return layer_norm(x, gamma, beta)
    mu = x.mean(axis=-1, keepdims=True)                     # (B, 1)
    xc = x - (mu.detach() if mistake == "constants" else mu)
    r = 1 / ((xc * xc).mean(axis=-1, keepdims=True) + 1e-5).sqrt()  # (B, 1)
    return xc * r.detach() * gamma + beta                   # (B, D)


def _ln_cases(rng):
    return [normal(rng, x=(2, 3), gamma=(3,), beta=(3,)),
            normal(rng, x=(4, 5), gamma=(5,), beta=(5,)),
            normal(rng, x=(2, 3, 4), gamma=(4,), beta=(4,))]


LAYER_NORM = Exercise(
    name="layer_norm", stars=5, title="layer normalisation",
    formula="y = γ ⊙ (x − μ)/√(σ² + ε) + β over the last axis",
    args=("x", "gamma", "beta"),
    forward=_ln,
    cases=_ln_cases,
    hints=(
        "x (…, D), gamma and beta (D,), g (…, D). Keep μ and σ² as (…, 1) with keepdims=True, "
        "r = 1/√(σ² + ε), x̂ = (x − μ) r. dgamma and dbeta are (D,): sum over every leading "
        "axis. ε = 1e-5.",
        "ĝ = g ⊙ γ; dx = r (ĝ − mean(ĝ) − x̂ ⊙ mean(ĝ ⊙ x̂)) with means over the last axis; "
        "dgamma = Σ g ⊙ x̂; dbeta = Σ g.",
    ),
    mistakes=(
        Mistake("treated μ and σ as constants: both depend on x, so dx = r (ĝ − mean(ĝ) − "
                "x̂ mean(ĝ ⊙ x̂)), not r ĝ",
                autodiff(lambda x, gamma, beta: _ln(x, gamma, beta, mistake="constants"))),
        Mistake("forgot σ's dependence on x: after subtracting mean(ĝ), subtract "
                "x̂ ⊙ mean(ĝ ⊙ x̂) too",
                autodiff(lambda x, gamma, beta: _ln(x, gamma, beta, mistake="sigma"))),
    ),
    zero_sum={"x": -1},
)

# ---- 14. causal self-attention ---------------------------------------------------------------

def _causal(Q, K, V, mask_fn=np.tril):
    """out = softmax(Q Kᵀ/√d with key j > t masked for query t) V."""
    T = Q.shape[-2]
    mask = mask_fn(np.ones((T, T), dtype=bool))[None]       # (1, T, T) True = may be seen
    s = (Q @ K.swapaxes(-1, -2)) / np.sqrt(Q.shape[-1])     # (B, T, T)
    return F.softmax(s, axis=-1, mask=mask) @ V             # (B, T, dv)


CAUSAL_ATTENTION = Exercise(
    name="causal_attention", stars=5, title="causal (masked) self-attention",
    formula="out = softmax(Q Kᵀ/√d, query t sees keys j ≤ t) V",
    args=("Q", "K", "V"),
    forward=_causal,
    cases=lambda rng: [normal(rng, Q=(1, 3, 2), K=(1, 3, 2), V=(1, 3, 2)),
                       normal(rng, Q=(2, 4, 3), K=(2, 4, 3), V=(2, 4, 2)),
                       normal(rng, Q=(2, 5, 4), K=(2, 5, 4), V=(2, 5, 3))],
    hints=(
        "Q, K (B, T, d), V (B, T, dv); scores and A (B, T, T); the mask is the lower triangle "
        "np.tril(np.ones((T, T), bool)): row t (a query) keeps columns j ≤ t. Masked scores "
        "become −inf before the softmax, so their weights are exactly 0.",
        "As unmasked attention, with A zero above the diagonal: dA = G Vᵀ, dV = Aᵀ G, "
        "dS = A ⊙ (dA − Σ_j A dA) (0 where masked), dQ = dS K/√d, dK = dSᵀ Q/√d.",
    ),
    mistakes=(
        Mistake("ignored the causal mask: query t only sees keys j ≤ t; the masked weights "
                "are 0 and pass no gradient",
                autodiff(lambda Q, K, V: _causal(Q, K, V, lambda m: m))),
        Mistake("the mask is on the wrong side: np.tril keeps j ≤ t (the past); np.triu "
                "would let each query see the future",
                autodiff(lambda Q, K, V: _causal(Q, K, V, np.triu))),
    ),
)

EXERCISES = [LAYER_NORM, CAUSAL_ATTENTION]
