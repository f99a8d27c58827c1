"""Reference solution: causal attention composed from matmul, where, exp, sum and div."""
import numpy as np

import minigrad as mg


def causal_attention_vjp(g, Q, K, V):
    ts = [mg.tensor(a, requires_grad=True) for a in (Q, K, V)]
    Q, K, V = ts
    T = Q.shape[1]
    keep = np.tril(np.ones((T, T), dtype=bool))[None]              # (1, T, T)
    s = (Q @ K.transpose(0, 2, 1)) * (1 / np.sqrt(Q.shape[-1]))   # (B, T, T)
    s = mg.where(keep, s, -1e30)
    w = mg.exp(s - s.data.max(axis=-1, keepdims=True))
    A = w / w.sum(axis=-1, keepdims=True)
    return mg.grad(A @ V, ts, grad_outputs=g)
