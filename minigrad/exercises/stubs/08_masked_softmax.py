"""Exercise 8 · masked softmax · ★★★

Forward (the checker computes it; you write the backward):

    α_i = e^(x_i) / Σ_{j kept} e^(x_j)   where mask_i is True (kept)
    α_i = 0                              where mask_i is False (padding)

along the last axis. A row whose every position is masked is all zeros (never NaN).

Shapes: x and g = dL/dα are (B, S) or (B, T, S); mask is boolean and broadcasts against x,
e.g. (B, S), or (B, 1, S) for x (B, T, S).

Return dL/dx (shape of x). Masked positions get gradient 0.

    python -I -m minigrad.exercises check masked_softmax   # from this folder, or add --dir DIR
    python -m minigrad.exercises hint masked_softmax    # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def masked_softmax_vjp(g, x, mask):
    """dL/dx for α = softmax(x) over the kept positions (mask True), given g = dL/dα."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
