"""Exercise 11 · scaled dot-product attention · ★★★★★

Forward (the checker computes it; you write the backward):

    S = Q Kᵀ / √d                    scores (d = the query/key width)
    A = softmax(S)                   along the last axis (over the keys)
    out = A V

Shapes: Q (B, T, d), K (B, S, d), V (B, S, dv); scores and A (B, T, S); out (B, T, dv);
g = dL/dout is (B, T, dv). Kᵀ means the last two axes swapped: np.swapaxes(K, -1, -2).

Return (dL/dQ, dL/dK, dL/dV), each with its input's shape.

    python -I -m minigrad.exercises check scaled_dot_product   # or add --dir DIR
    python -m minigrad.exercises hint scaled_dot_product    # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def scaled_dot_product_vjp(g, Q, K, V):
    """(dL/dQ, dL/dK, dL/dV) for out = softmax(Q Kᵀ/√d) V, given g = dL/dout."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
