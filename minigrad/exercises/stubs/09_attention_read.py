"""Exercise 9 · the attention read · ★★★★

Forward (the checker computes it; you write the backward):

    α = softmax(e)            over the source positions j
    c = Σ_j α_j h_j           the context: a convex combination of the values

Shapes: scores e (B, S), values h (B, S, D), context c (B, D); g = dL/dc is (B, D).

Return (dL/de, dL/dh). Source 004 §7 derives  ∂L/∂e_j = α_j g·(h_j − c)  and
∂L/∂h_j = α_j g -- rederive them, then code them. Check: Σ_j ∂L/∂e_j = 0.

    python -I -m minigrad.exercises check attention_read   # from this folder, or add --dir DIR
    python -m minigrad.exercises hint attention_read    # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def attention_read_vjp(g, e, h):
    """(dL/de, dL/dh) for c = Σ_j softmax(e)_j h_j, given g = dL/dc."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
