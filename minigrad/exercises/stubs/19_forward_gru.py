"""Exercise 19 · one GRU step, forward (PyTorch's layout) · ★★★

torch.nn.GRUCell's equations, as ``models.recurrent.GRUCell`` computes them:

    gi = x W_ihᵀ + b_ih,  gh = h W_hhᵀ + b_hh      each (B, 3H), column blocks r | z | n
    r  = σ(gi_r + gh_r)                             reset gate
    z  = σ(gi_z + gh_z)                             update gate
    n  = tanh(gi_n + r ⊙ gh_n)                      = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))
    h' = (1 − z) ⊙ n + z ⊙ h

Shapes: x (B, I), h (B, H), W_ih (3H, I), W_hh (3H, H), b_ih (3H,), b_hh (3H,); return the
new state h' (B, H). σ(a) = 1 / (1 + e^−a). Exercise 12 is the backward of this step.

    python -I -m minigrad.exercises check forward_gru   # from this folder, or add --dir DIR
    python -m minigrad.exercises hint forward_gru   # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def forward_gru(x, h, W_ih, W_hh, b_ih, b_hh):
    """h' (B, H), one GRU step, in plain NumPy."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
