"""Exercise 6 · softmax · ★★★

Forward (the checker computes it; you write the backward):

    α_i = e^(x_i) / Σ_j e^(x_j)        along the last axis (each row on its own)

Shapes: x, α and g = dL/dα all have the same shape: (S,), (B, S) or (B, T, S).

Return dL/dx (shape of x). Its Jacobian is diag(α) − ααᵀ: apply it to g WITHOUT building
the (S, S) matrix.

    python -I -m minigrad.exercises check softmax   # from this folder, or add --dir DIR
    python -m minigrad.exercises hint softmax    # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def softmax_vjp(g, x):
    """dL/dx for α = softmax(x) along the last axis, given g = dL/dα."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
