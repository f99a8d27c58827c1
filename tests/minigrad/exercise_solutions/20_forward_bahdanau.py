"""Reference solution: one Bahdanau decoder step in plain NumPy (score, read, GRU)."""
import numpy as np


def forward_bahdanau(x, s, h, W_q, W_k, b, v, W_ih, W_hh, b_ih, b_hh):
    e = np.tanh((s @ W_q.T)[:, None, :] + h @ W_k.T + b) @ v       # (B, S)
    w = np.exp(e - e.max(axis=-1, keepdims=True))
    alpha = w / w.sum(axis=-1, keepdims=True)                      # (B, S)
    c = np.einsum("bs,bsk->bk", alpha, h)                          # (B, K)
    H = s.shape[-1]
    gi = np.concatenate([x, c], axis=-1) @ W_ih.T + b_ih           # (B, 3H)
    gh = s @ W_hh.T + b_hh                                         # (B, 3H)
    r = 1 / (1 + np.exp(-(gi[:, :H] + gh[:, :H])))
    z = 1 / (1 + np.exp(-(gi[:, H:2 * H] + gh[:, H:2 * H])))
    n = np.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
    return (1 - z) * n + z * s, c, alpha                           # s' (B, H), c, α
