"""Exercise 14 · causal (masked) self-attention · ★★★★★

Forward (the checker computes it; you write the backward), a Transformer decoder's
self-attention, where position t may look only at positions j ≤ t:

    S = Q Kᵀ / √d                     scores (B, T, T), d = the query/key width
    S[:, t, j] = −inf for j > t       the causal mask: np.tril(np.ones((T, T), bool))
    A = softmax(S)                    along the last axis; A[:, t, j] = 0 for j > t
    out = A V

Shapes: Q (B, T, d), K (B, T, d), V (B, T, dv); out (B, T, dv); g = dL/dout is (B, T, dv).

Return (dL/dQ, dL/dK, dL/dV), each with its input's shape.

    python -I -m minigrad.exercises check causal_attention   # or add --dir DIR
    python -m minigrad.exercises hint causal_attention    # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def causal_attention_vjp(g, Q, K, V):
    """(dL/dQ, dL/dK, dL/dV) for out = softmax(causal-masked Q Kᵀ/√d) V, given g = dL/dout."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
