"""Exercise 16 · the attention read, second order · ★★★★★

A second derivative. Exercise 9 has L = g_c·c for the attention read c = Σ_j α_j h_j,
α = softmax(e), and its gradient in the scores (source 004 §7):

    s_j = g_c·h_j              how well value j agrees with the gradient g_c = dL/dc
    s̄  = Σ_k α_k s_k = g_c·c
    a_j = ∂L/∂e_j = α_j (s_j − s̄)

Here a is the forward (the checker computes it); you write its VJP. Its e-part is the Hessian
∂²L/∂e² applied to g -- derive it; do not build the matrix.

Shapes: scores e (B, S), values h (B, S, D), gc = g_c (B, D); a and g = dL/da are (B, S).

Return (dL/de, dL/dh, dL/dgc), each with its input's shape. Check: Σ_j dL/de_j = 0 (a does
not change when the same number is added to every score).

    python -I -m minigrad.exercises check read_second   # from this folder, or add --dir DIR
    python -m minigrad.exercises hint read_second    # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def read_second_vjp(g, e, h, gc):
    """(dL/de, dL/dh, dL/dgc) for a = α ⊙ (s − s̄), s_j = gc·h_j, given g = dL/da."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
