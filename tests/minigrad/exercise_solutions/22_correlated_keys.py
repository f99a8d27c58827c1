"""Reference solution: two correlated keys, and how far apart their weights are."""
import numpy as np


def correlated_keys(q, k, z, rho):
    k2 = rho * k + np.sqrt(1 - rho ** 2) * z                       # (N, d)
    s = np.stack([(q * k).sum(-1), (q * k2).sum(-1)], -1) / np.sqrt(q.shape[-1])  # (N, 2)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    alpha = w / w.sum(axis=-1, keepdims=True)                      # (N, 2)
    return alpha, np.abs(alpha[:, 0] - alpha[:, 1]).mean()
