"""Reference solution: e = Σ_a v_a tanh(u_a) with u from reshape/matmul/add, by the engine."""
import minigrad as mg


def additive_score_vjp(g, q, h, W_q, W_k, b, v):
    ts = [mg.tensor(a, requires_grad=True) for a in (q, h, W_q, W_k, b, v)]
    q, h, W_q, W_k, b, v = ts
    B, Dq = q.shape
    u = q.reshape(B, 1, Dq) @ W_q.transpose() + h @ W_k.transpose() + b   # (B, S, A)
    e = (mg.tanh(u) * v).sum(axis=-1)                                      # (B, S)
    return mg.grad(e, ts, grad_outputs=g)
