"""Reference solution: the read in plain NumPy, the softmax shifted by the row's max."""
import numpy as np


def forward_read(e, h):
    w = np.exp(e - e.max(axis=-1, keepdims=True))
    alpha = w / w.sum(axis=-1, keepdims=True)                      # (B, S)
    return np.einsum("bs,bsd->bd", alpha, h)                       # (B, D)
