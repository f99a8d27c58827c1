"""Reference solution: one GRU step in plain NumPy (PyTorch's layout, r | z | n)."""
import numpy as np


def forward_gru(x, h, W_ih, W_hh, b_ih, b_hh):
    H = h.shape[-1]
    gi, gh = x @ W_ih.T + b_ih, h @ W_hh.T + b_hh                  # (B, 3H) each
    r = 1 / (1 + np.exp(-(gi[:, :H] + gh[:, :H])))                 # (B, H)
    z = 1 / (1 + np.exp(-(gi[:, H:2 * H] + gh[:, H:2 * H])))       # (B, H)
    n = np.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])                 # (B, H)
    return (1 - z) * n + z * h                                     # (B, H)
