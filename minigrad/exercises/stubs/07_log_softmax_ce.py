"""Exercise 7 · log_softmax with cross-entropy · ★★★

Forward (the checker computes it; you write the backward):

    L = (1/N) Σ_positions −log softmax(z)[t]
      = (1/N) Σ_positions ( −z_t + log Σ_c e^(z_c) )

Shapes: logits z (N, C) or (B, T, C); integer targets t (N,) or (B, T), one class index per
position; N = t.size positions in all. L is a scalar, so g = dL_total/dL is a scalar too
(a 0-d array).

Return dL/dlogits (shape of logits). The targets get no gradient.

    python -I -m minigrad.exercises check log_softmax_ce   # from this folder, or add --dir DIR
    python -m minigrad.exercises hint log_softmax_ce    # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def log_softmax_ce_vjp(g, logits, targets):
    """dL/dlogits for the mean cross-entropy of softmax(logits) against targets."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
