"""Exercise 18 · the additive score, forward · ★★

Bahdanau et al. 2015's score (source 004 §5), for every source position j at once:

    e_j = vᵀ tanh(W_q q + W_k h_j + b)

Shapes: query q (B, Dq), keys h (B, S, Dk), W_q (A, Dq), W_k (A, Dk), b (A,), v (A,);
return the scores e (B, S). Exercise 10 is the backward of this score; the library's is
``attention.AdditiveScore``.

    python -I -m minigrad.exercises check forward_additive   # from this folder, or add --dir DIR
    python -m minigrad.exercises hint forward_additive   # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def forward_additive(q, h, W_q, W_k, b, v):
    """e (B, S): e_j = vᵀ tanh(W_q q + W_k h_j + b), in plain NumPy."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
