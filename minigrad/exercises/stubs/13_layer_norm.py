"""Exercise 13 · layer normalisation · ★★★★★

Forward (the checker computes it; you write the backward), over the last axis, ε = 1e-5:

    μ  = mean(x)                      (…, 1)
    σ² = mean((x − μ)²)               (…, 1)
    r  = 1 / √(σ² + ε)
    x̂  = (x − μ) r                    (…, D)
    y  = gamma ⊙ x̂ + beta             (…, D)

Shapes: x (…, D) -- (B, D) or (B, T, D); gamma and beta (D,); g = dL/dy is (…, D).
μ and σ both depend on x: that is what makes this one hard.

Return (dL/dx, dL/dgamma, dL/dbeta), each with its input's shape.

    python -I -m minigrad.exercises check layer_norm   # or add --dir DIR
    python -m minigrad.exercises hint layer_norm    # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def layer_norm_vjp(g, x, gamma, beta):
    """(dL/dx, dL/dgamma, dL/dbeta) for y = gamma ⊙ (x − μ)/√(σ² + ε) + beta."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
