"""Reference solution: the additive score in plain NumPy."""
import numpy as np


def forward_additive(q, h, W_q, W_k, b, v):
    u = (q @ W_q.T)[:, None, :] + h @ W_k.T + b                    # (B, S, A)
    return np.tanh(u) @ v                                          # (B, S)
