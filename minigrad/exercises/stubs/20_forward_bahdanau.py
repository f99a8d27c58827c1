"""Exercise 20 · one Bahdanau decoder step, forward · ★★★★

The step of ``models.decoders.BahdanauDecoder`` (sources 003 §2 and 004 §7): attend with the
*previous* state s = s_{t−1}, then update the GRU with the context:

    e_j = vᵀ tanh(W_q s + W_k h_j + b)        exercise 18
    α   = softmax(e),   c = Σ_j α_j h_j       exercise 17
    s'  = GRU([x ; c], s)                     exercise 19, input x then c

Shapes: x (B, E) the embedded previous output E y_{t−1}, s (B, H), annotations h (B, S, K),
W_q (A, H), W_k (A, K), b (A,), v (A,), W_ih (3H, E+K), W_hh (3H, H), b_ih (3H,),
b_hh (3H,). Return (s', c, α): s' (B, H), c (B, K), α (B, S).

    python -I -m minigrad.exercises check forward_bahdanau   # from this folder, or add --dir DIR
    python -m minigrad.exercises hint forward_bahdanau   # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def forward_bahdanau(x, s, h, W_q, W_k, b, v, W_ih, W_hh, b_ih, b_hh):
    """(s', c, α): one step of Bahdanau's decoder, in plain NumPy."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
