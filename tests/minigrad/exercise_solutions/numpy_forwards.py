"""Hand-written plain-NumPy forwards for exercises 17-22, as a learner would write them.

``mistake=None`` is a correct solution; each other value switches on ONE classic mistake.
The tests check that the correct ones pass and that each mistake is named by the checker.
"""
import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def sigmoid(a):
    return 1 / (1 + np.exp(-a))


def forward_read(e, h, mistake=None):
    if mistake == "batch axis":
        alpha = softmax(e, axis=0)
    elif mistake == "no softmax":
        alpha = e
    elif mistake == "mean":
        alpha = np.full_like(e, 1 / e.shape[-1])
    elif mistake == "unsummed":
        return softmax(e)[:, :, None] * h                           # (B, S, D)
    else:
        alpha = softmax(e)                                          # (B, S)
    return np.einsum("bs,bsd->bd", alpha, h)                        # (B, D)


def forward_additive(q, h, W_q, W_k, b, v, mistake=None):
    u = (q @ W_q.T)[:, None, :] + h @ W_k.T + (0 if mistake == "no bias" else b)  # (B, S, A)
    e = (u if mistake == "no tanh" else np.tanh(u)) @ v                          # (B, S)
    return softmax(e) if mistake == "softmax" else e


def forward_gru(x, h, W_ih, W_hh, b_ih, b_hh, mistake=None):
    H = h.shape[-1]
    gi, gh = x @ W_ih.T + b_ih, h @ W_hh.T + b_hh                   # (B, 3H) each
    r = sigmoid(gi[:, :H] + gh[:, :H])
    z = sigmoid(gi[:, H:2 * H] + gh[:, H:2 * H])
    if mistake == "cho":
        n = np.tanh(gi[:, 2 * H:] + (r * h) @ W_hh[2 * H:].T + b_hh[2 * H:])
    else:
        n = np.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])              # (B, H)
    if mistake == "z roles":
        return z * n + (1 - z) * h
    if mistake == "candidate":
        return n
    return (1 - z) * n + z * h                                      # (B, H)


def forward_bahdanau(x, s, h, W_q, W_k, b, v, W_ih, W_hh, b_ih, b_hh, mistake=None):
    e = forward_additive(s, h, W_q, W_k, b, v)                      # (B, S)
    alpha = softmax(e)
    c = forward_read(e, h)                                          # (B, K)
    if mistake == "order":
        inp = np.concatenate([c, x], axis=-1)
    elif mistake == "no context":
        inp = np.concatenate([x, np.zeros_like(c)], axis=-1)
    else:
        inp = np.concatenate([x, c], axis=-1)                       # (B, E+K)
    s_new = forward_gru(inp, s, W_ih, W_hh, b_ih, b_hh)
    if mistake == "swapped":
        return s_new, alpha, c
    return s_new, c, alpha


def sqrt_d_scaling(q, k, mistake=None):
    scores = (q * k).sum(axis=-1)                                   # (N,)
    d = q.shape[-1]
    if mistake == "ddof":
        return np.var(scores, ddof=1), np.var(scores / np.sqrt(d), ddof=1)
    if mistake == "by d":
        return np.var(scores), np.var(scores / d)
    if mistake == "std":
        return np.std(scores), np.var(scores / np.sqrt(d))
    return np.var(scores), np.var(scores / np.sqrt(d))


def correlated_keys(q, k, z, rho, mistake=None):
    noise = (1 - rho) if mistake == "linear noise" else np.sqrt(1 - rho ** 2)
    k2 = rho * k + noise * z                                        # (N, d)
    s = np.stack([(q * k).sum(-1), (q * k2).sum(-1)], axis=-1)      # (N, 2)
    alpha = softmax(s if mistake == "unscaled" else s / np.sqrt(q.shape[-1]))
    return alpha, np.abs(alpha[:, 0] - alpha[:, 1]).mean()


FORWARDS = {"forward_read": forward_read, "forward_additive": forward_additive,
            "forward_gru": forward_gru, "forward_bahdanau": forward_bahdanau,
            "sqrt_d_scaling": sqrt_d_scaling, "correlated_keys": correlated_keys}

# (exercise, mistake, a phrase the checker must say)
MISTAKES = [
    ("forward_read", "batch axis", "the softmax ran over the batch axis"),
    ("forward_read", "no softmax", "no softmax: the weights are α = softmax(e)"),
    ("forward_read", "mean", "an unweighted mean of the h_j"),
    ("forward_read", "unsummed", "an axis too many"),
    ("forward_additive", "no tanh", "no tanh"),
    ("forward_additive", "no bias", "the bias b is missing"),
    ("forward_additive", "softmax", "a softmax too much"),
    ("forward_gru", "z roles", "z's roles are swapped"),
    ("forward_gru", "cho", "Cho et al. 2014's form"),
    ("forward_gru", "candidate", "this is the candidate n"),
    ("forward_bahdanau", "order", "the GRU's input is [x ; c], in that order"),
    ("forward_bahdanau", "no context", "c is missing from the GRU's input"),
    ("forward_bahdanau", "swapped", "this is alpha: the outputs must come back in this order"),
    ("sqrt_d_scaling", "ddof", "you divided by N − 1"),
    ("sqrt_d_scaling", "by d", "divided by d, not √d"),
    ("sqrt_d_scaling", "std", "a standard deviation"),
    ("correlated_keys", "linear noise", "with (1 − ρ) in place of the square root"),
    ("correlated_keys", "unscaled", "divided by √d before the softmax"),
]
