"""Hand-written plain-NumPy VJPs for every exercise, as a learner would write them.

``mistake=None`` is a correct solution; each other value switches on ONE classic mistake.
The tests check that the correct ones pass and that each mistake is named by the checker.
"""
import numpy as np


def sum_to(grad, shape):
    """Sum a broadcast-shaped gradient back to ``shape``."""
    lead = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(lead)))
    return grad.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def T(x):
    return np.swapaxes(x, -1, -2)


def mul(g, a, b, mistake=None):
    if mistake == "unsummed":
        return g * b, g * a
    if mistake == "own input":
        return sum_to(g * a, a.shape), sum_to(g * b, b.shape)
    if mistake == "order":
        return sum_to(g * a, b.shape), sum_to(g * b, a.shape)
    return sum_to(g * b, a.shape), sum_to(g * a, b.shape)


def tanh(g, x, mistake=None):
    y = np.tanh(x)
    return {None: g * (1 - y * y), "no factor": g, "1 - x^2": g * (1 - x * x),
            "sign": -g * (1 - y * y), "1 - y": g * (1 - y)}[mistake]


def sigmoid_(g, x, mistake=None):
    s = sigmoid(x)
    return {None: g * s * (1 - s), "x(1-x)": g * x * (1 - x), "sign": -g * s * (1 - s),
            "no (1-s)": g * s}[mistake]


def sum_axis(g, x, axis, mistake=None):
    if mistake == "g as is":
        return g
    if mistake == "no expand_dims":
        return np.broadcast_to(g, x.shape)
    return np.broadcast_to(np.expand_dims(g, axis), x.shape)


def matmul(g, A, B, mistake=None):
    dA = g @ T(B)
    dB = T(A) @ g
    if mistake == "transposed dA":
        dA = T(dA)
    if mistake == "G B":
        dA = g @ B
    if mistake != "unsummed dB":
        dB = sum_to(dB, B.shape)
    return dA, dB


def softmax_(g, x, mistake=None):
    y = softmax(x)
    if mistake == "diag only":
        return g * y
    if mistake == "whole-array sum":
        return y * (g - np.sum(g * y))
    return y * (g - np.sum(g * y, axis=-1, keepdims=True))


def log_softmax_ce(g, logits, targets, mistake=None):
    p = softmax(logits)
    onehot = np.eye(logits.shape[-1])[targets]
    n = 1 if mistake == "no 1/N" else targets.size
    sign = -1 if mistake == "sign" else 1
    return sign * g * (p - onehot) / n


def masked_softmax(g, x, mask, mistake=None):
    if mistake == "ignore mask":
        y = softmax(x)
    else:
        kept = np.where(mask, x, -np.inf)
        top = kept.max(axis=-1, keepdims=True)               # −inf for a row with nothing kept
        e = np.exp(kept - (top if mistake == "0/0" else np.where(np.isfinite(top), top, 0)))
        s = e.sum(axis=-1, keepdims=True)
        y = e / np.where(s == 0, 1, s)
    return y * (g - np.sum(g * y, axis=-1, keepdims=True))


def attention_read(g, e, h, mistake=None):
    a = softmax(e)                                         # (B, S)
    c = np.einsum("bs,bsd->bd", a, h)                      # (B, D)
    de = a * np.einsum("bd,bsd->bs", g, h - c[:, None, :])
    if mistake == "no -c":
        de = a * np.einsum("bd,bsd->bs", g, h)
    if mistake == "sign":
        de = -de
    dh = a[:, :, None] * g[:, None, :]
    return de, dh


def additive_score(g, q, h, W_q, W_k, b, v, mistake=None):
    u = (q @ W_q.T)[:, None, :] + h @ W_k.T + b            # (B, S, A)
    t = np.tanh(u)
    dv = np.einsum("bs,bsa->a", g, t)
    du = g[..., None] * v * (1 if mistake == "no tanh'" else 1 - t * t)
    dq = np.einsum("bsa,ad->bsd", du, W_q)
    if mistake != "dq unsummed":
        dq = dq.sum(axis=1)
    dh = du @ W_k
    dW_q = np.einsum("bsa,bd->ad", du, q)
    if mistake == "dW_q transposed":
        dW_q = dW_q.T
    dW_k = np.einsum("bsa,bsd->ad", du, h)
    db = du if mistake == "db unsummed" else du.sum(axis=(0, 1))
    return dq, dh, dW_q, dW_k, db, dv


def scaled_dot_product(g, Q, K, V, mistake=None):
    d = Q.shape[-1]
    scale = {"no 1/sqrt(d)": 1.0, "1/d": 1 / d}.get(mistake, 1 / np.sqrt(d))
    A = softmax(Q @ T(K) / np.sqrt(Q.shape[-1]))           # (B, T, S)
    dA = g @ T(V)
    dV = T(A) @ g
    dS = A * (dA - np.sum(A * dA, axis=-1, keepdims=True))
    dQ = dS @ K * scale
    dK = T(dS) @ Q * scale
    if mistake == "dK transposed":
        dK = T(dK)
    return dQ, dK, dV


def gru_cell(g, x, h, W_ih, W_hh, b_ih, b_hh, mistake=None):
    H = h.shape[-1]
    gi = x @ W_ih.T + b_ih                                 # (B, 3H)
    gh = h @ W_hh.T + b_hh
    r = sigmoid(gi[:, :H] + gh[:, :H])
    z = sigmoid(gi[:, H:2 * H] + gh[:, H:2 * H])
    n = np.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
    dz = g * (n - h) if mistake == "dz sign" else g * (h - n)
    da_n = g * (1 - z) * (1 if mistake == "no 1-n^2" else 1 - n * n)
    dr = da_n * gh[:, 2 * H:]
    da_r, da_z = dr * r * (1 - r), dz * z * (1 - z)
    dgi = np.concatenate([da_r, da_z, da_n], axis=1)       # (B, 3H)
    dgh = np.concatenate([da_r, da_z, da_n * r], axis=1)
    dh = dgh @ W_hh + (0 if mistake == "no direct path" else g * z)
    db_hh = dgh.sum(axis=0)
    if mistake == "b_hn outside r":
        db_hh[2 * H:] = da_n.sum(axis=0)
    return dgi @ W_ih, dh, dgi.T @ x, dgh.T @ h, dgi.sum(axis=0), db_hh

def layer_norm(g, x, gamma, beta, mistake=None):
    mu = x.mean(axis=-1, keepdims=True)
    r = 1 / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + 1e-5)
    xhat = (x - mu) * r
    gh = g * gamma
    lead = tuple(range(x.ndim - 1))
    dx = r * (gh - gh.mean(axis=-1, keepdims=True)
              - xhat * (gh * xhat).mean(axis=-1, keepdims=True))
    if mistake == "constants":
        dx = r * gh
    if mistake == "no sigma":
        dx = r * (gh - gh.mean(axis=-1, keepdims=True))
    dgamma = (g * xhat).reshape(-1, x.shape[-1]) if mistake == "dgamma unsummed" else \
        (g * xhat).sum(axis=lead)
    return dx, dgamma, g.sum(axis=lead)


def causal_attention(g, Q, K, V, mistake=None):
    T_ = Q.shape[1]
    keep = {"no mask": np.ones((T_, T_), bool), "triu": np.triu(np.ones((T_, T_), bool))}.get(
        mistake, np.tril(np.ones((T_, T_), bool)))
    A = softmax(np.where(keep, Q @ T(K) / np.sqrt(Q.shape[-1]), -np.inf))  # (B, T, T)
    dA = g @ T(V)
    dS = A * (dA - np.sum(A * dA, axis=-1, keepdims=True))
    scale = 1 / np.sqrt(Q.shape[-1])
    return dS @ K * scale, T(dS) @ Q * scale, T(A) @ g


def hvp(g, w, X, y, mistake=None):
    s = sigmoid(X @ w)                                     # (N,)
    if mistake == "hessian":
        return X.T @ (X * (s * (1 - s))[:, None]) / len(y)  # (D, D)
    weight = {"no sigma'": np.ones_like(s), "residual": s - y}.get(mistake, s * (1 - s))
    n = 1 if mistake == "no 1/N" else len(y)
    return (-1 if mistake == "sign" else 1) * X.T @ (weight * (X @ g)) / n


def read_second(g, e, h, gc, mistake=None):
    def dot(u, v):
        return (u * v).sum(axis=-1, keepdims=True)         # (B, 1)
    al = softmax(e)                                        # (B, S)
    s = np.einsum("bd,bsd->bs", gc, h)                     # (B, S)
    a = al * (s - dot(al, s))                              # (B, S): the forward
    de = {"c constant": a * g - al * dot(a, g), "outer alpha constant": -a * dot(al, g),
          "sign": -(a * g - al * dot(a, g) - a * dot(al, g))}.get(
        mistake, a * g - al * dot(a, g) - a * dot(al, g))
    if mistake == "hessian":
        de = a[:, :, None] * np.eye(e.shape[-1]) - al[:, :, None] * a[:, None, :] \
            - a[:, :, None] * al[:, None, :]               # (B, S, S)
    b = al * (g - dot(al, g))                              # (B, S): softmax VJP of g
    if mistake == "no -c":                                 # the VJP of α ⊙ s
        de, b = al * (g * s - dot(al, g * s)), al * g
    return de, b[:, :, None] * gc[:, None, :], np.einsum("bs,bsd->bd", b, h)


VJPS = {"mul": mul, "tanh": tanh, "sigmoid": sigmoid_, "sum_axis": sum_axis, "matmul": matmul,
        "softmax": softmax_, "log_softmax_ce": log_softmax_ce, "masked_softmax": masked_softmax,
        "attention_read": attention_read, "additive_score": additive_score,
        "scaled_dot_product": scaled_dot_product, "gru_cell": gru_cell,
        "layer_norm": layer_norm, "causal_attention": causal_attention, "hvp": hvp,
        "read_second": read_second}

# (exercise, mistake, text the checker's diagnosis must contain)
MISTAKES = [
    ("mul", "unsummed", "broadcasting not undone"),
    ("mul", "own input", "uses the OTHER input"),
    ("mul", "order", "gradients must come back in the order"),
    ("tanh", "no factor", "missing factor 1 − tanh²(x)"),
    ("tanh", "1 - x^2", "used 1 − x² instead of 1 − tanh²(x)"),
    ("tanh", "sign", "sign error"),
    ("tanh", "1 - y", "missing factor?"),
    ("sigmoid", "x(1-x)", "used x(1 − x) instead of σ(x)(1 − σ(x))"),
    ("sigmoid", "sign", "sign error"),
    ("sigmoid", "no (1-s)", "missing factor (1 − σ(x))"),
    ("sum_axis", "g as is", "np.expand_dims"),
    ("sum_axis", "no expand_dims", "without putting the summed axis back"),
    ("matmul", "transposed dA", "transposed"),
    ("matmul", "G B", "dA = G B: transpose B"),
    ("matmul", "unsummed dB", "broadcasting not undone"),
    ("softmax", "diag only", "kept only diag(α) g"),
    ("softmax", "whole-array sum", "summed over the whole array"),
    ("log_softmax_ce", "no 1/N", "missing the 1/N of the mean"),
    ("log_softmax_ce", "sign", "sign error"),
    ("masked_softmax", "ignore mask", "ignored the mask"),
    ("masked_softmax", "0/0", "every position is masked"),
    ("attention_read", "no -c", "forgot to subtract c"),
    ("attention_read", "sign", "sign error"),
    ("additive_score", "no tanh'", "missing the factor 1 − tanh²(u)"),
    ("additive_score", "dq unsummed", "extra axis 1"),
    ("additive_score", "dW_q transposed", "transposed"),
    ("additive_score", "db unsummed", "grad.sum(axis=(0, 1))"),
    ("scaled_dot_product", "no 1/sqrt(d)", "missing the 1/√d"),
    ("scaled_dot_product", "dK transposed", "transposed"),
    ("scaled_dot_product", "1/d", "off by a constant factor"),
    ("gru_cell", "dz sign", "sign of dL/dz"),
    ("gru_cell", "no 1-n^2", "missing the factor 1 − n²"),
    ("gru_cell", "no direct path", "lacks the direct path"),
    ("gru_cell", "b_hn outside r", "b_hn sits inside the reset gate"),
    ("layer_norm", "constants", "treated μ and σ as constants"),
    ("layer_norm", "no sigma", "forgot σ's dependence on x"),
    ("layer_norm", "dgamma unsummed", "grad.sum(axis=0)"),
    ("causal_attention", "no mask", "ignored the causal mask"),
    ("causal_attention", "triu", "the mask is on the wrong side"),
    ("hvp", "hessian", "this is the whole Hessian H (D, D)"),
    ("hvp", "no sigma'", "missing σ' = σ(1 − σ)"),
    ("hvp", "residual", "σ − y is the residual"),
    ("hvp", "no 1/N", "a mean's 1/N"),
    ("hvp", "sign", "sign error"),
    ("read_second", "c constant", "forgot that c depends on e"),
    ("read_second", "outer alpha constant", "differentiated only c"),
    ("read_second", "no -c", "its −c term has derivatives too"),
    ("read_second", "hessian", "this is the whole Hessian ∂a/∂e (B, S, S)"),
    ("read_second", "sign", "sign error"),
]
