"""Exercise 10 · the additive (Bahdanau) score · ★★★★

Forward (the checker computes it; you write the backward):

    u_j = W_q q + W_k h_j + b        (A,)   for every batch element and source position j
    e_j = vᵀ tanh(u_j)               a scalar score per position

Shapes: query q (B, Dq), keys h (B, S, Dk), W_q (A, Dq), W_k (A, Dk), b (A,), v (A,);
scores e (B, S); g = dL/de is (B, S). In NumPy:
    u = (q @ W_q.T)[:, None, :] + h @ W_k.T + b        # (B, S, A)
    e = np.tanh(u) @ v                                 # (B, S)

Return (dL/dq, dL/dh, dL/dW_q, dL/dW_k, dL/db, dL/dv), each with its input's shape.

    python -I -m minigrad.exercises check additive_score   # from this folder, or add --dir DIR
    python -m minigrad.exercises hint additive_score    # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def additive_score_vjp(g, q, h, W_q, W_k, b, v):
    """The six gradients of e = vᵀ tanh(W_q q + W_k h + b), given g = dL/de."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
