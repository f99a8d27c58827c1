"""Exercise 12 · one GRU cell step (PyTorch's layout) · ★★★★★

Forward (the checker computes it; you write the backward), torch.nn.GRUCell's equations:

    gi = x W_ihᵀ + b_ih,  gh = h W_hhᵀ + b_hh      each (B, 3H), column blocks r | z | n
    r  = σ(gi_r + gh_r)                             reset gate
    z  = σ(gi_z + gh_z)                             update gate
    n  = tanh(gi_n + r ⊙ gh_n)                      = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))
    h' = (1 − z) ⊙ n + z ⊙ h

Shapes: x (B, I), h (B, H), W_ih (3H, I), W_hh (3H, H), b_ih (3H,), b_hh (3H,); h' (B, H);
g = dL/dh' is (B, H). The blocks of gi are gi[:, :H], gi[:, H:2*H], gi[:, 2*H:].

Return (dL/dx, dL/dh, dL/dW_ih, dL/dW_hh, dL/db_ih, dL/db_hh), each with its input's shape.

    python -I -m minigrad.exercises check gru_cell   # from this folder, or add --dir DIR
    python -m minigrad.exercises hint gru_cell   # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def gru_cell_vjp(g, x, h, W_ih, W_hh, b_ih, b_hh):
    """The six gradients of one GRU step h' = GRUCell(x, h), given g = dL/dh'."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
