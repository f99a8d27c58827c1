"""Reference solution: softmax(Q Kᵀ/√d) V composed from matmul, exp, sum and div."""
import numpy as np

import minigrad as mg


def scaled_dot_product_vjp(g, Q, K, V):
    ts = [mg.tensor(a, requires_grad=True) for a in (Q, K, V)]
    Q, K, V = ts
    s = (Q @ K.transpose(0, 2, 1)) * (1 / np.sqrt(Q.shape[-1]))   # (B, T, S)
    w = mg.exp(s - s.data.max(axis=-1, keepdims=True))
    A = w / w.sum(axis=-1, keepdims=True)
    return mg.grad(A @ V, ts, grad_outputs=g)
