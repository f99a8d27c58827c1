"""Exercises 8-12: masked softmax, the attention read, the additive score, scaled dot-product
attention and one GRU cell step -- the backward passes of the attention sources (004 §7).

Shape letters: B batch, S source length, T target (query) length, D/Dq/Dk feature widths,
A attention width, I input width, H hidden width.

Surrogate forwards (see ``catalog.autodiff``) keep the values of the real forward and change
one gradient path, which is how most of the classic mistakes below are written.
"""
from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad import functional as F
from minigrad.exercises.catalog import Exercise, Mistake, autodiff, normal, st


# ---- 8. masked softmax -----------------------------------------------------------------------

def _masked_cases(rng):
    m1 = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    m2 = np.array([[1, 1, 0, 0], [0, 0, 0, 0], [1, 0, 1, 1]], bool)   # row 1: nothing kept
    m3 = np.array([[[1, 1, 1, 0]], [[1, 1, 0, 0]]], bool)            # (B, 1, S), broadcasts over T
    return [normal(rng, x=(2, 5), constants={"mask": m1}),
            normal(rng, x=(3, 4), constants={"mask": m2}),
            normal(rng, x=(2, 3, 4), constants={"mask": m3})]


def _ignored_mask(g, x, c):
    return {"x": F.softmax_vjp(F.softmax_array(x["x"]), g)}


MASKED_SOFTMAX = Exercise(
    name="masked_softmax", stars=3, title="masked softmax",
    formula="α = softmax(x) over kept positions (mask True), 0 elsewhere",
    args=("x",),
    forward=lambda x, mask: F.softmax(x, axis=-1, mask=mask),
    cases=_masked_cases,
    hints=(
        "x (…, S) and g have the same shape; mask is boolean, True = keep, and broadcasts "
        "against x (e.g. (B, 1, S) for x (B, T, S)). Masked positions get weight 0 and "
        "gradient 0. A row with nothing kept has all-zero weights: guard its 0/0.",
        "Compute α with masked entries excluded (np.where(mask, x, -inf), subtract the row "
        "max, exp, divide by the row sum -- replacing a zero sum by 1). Then the softmax VJP "
        "as usual: dL/dx = α ⊙ (g − Σ_j α_j g_j); it is 0 wherever α is 0.",
    ),
    mistakes=(Mistake("ignored the mask: the softmax runs over the kept positions only "
                      "(mask True); masked positions have α = 0 and gradient 0", _ignored_mask),),
    zero_sum={"x": -1},
    nan_hint="a row where every position is masked: e^−inf / Σ e^−inf is 0/0 -- such a row "
             "has weights 0 and gradient 0",
)

# ---- 9. the attention read -------------------------------------------------------------------

def _read(e, h):
    """c = Σ_j α_j h_j with α = softmax(e)."""
    alpha = F.softmax(e, axis=-1)                           # (B, S)
    return (mg.expand_dims(alpha, -1) * h).sum(axis=1)      # (B, D)


def _read_forgot_c(g, x, c):
    alpha = F.softmax_array(x["e"])                                 # (B, S)
    return {"e": alpha * np.einsum("bd,bsd->bs", g, x["h"])}


def _read_forgot_alpha(g, x, c):
    return {"h": np.broadcast_to(g[:, None, :], x["h"].shape)}


ATTENTION_READ = Exercise(
    name="attention_read", stars=4, title="the attention read",
    formula="c = Σ_j softmax(e)_j h_j;  ∂L/∂e_j = α_j g·(h_j − c)",
    args=("e", "h"),
    forward=_read,
    cases=lambda rng: [normal(rng, e=(1, 3), h=(1, 3, 2)),
                       normal(rng, e=(2, 4), h=(2, 4, 3)),
                       normal(rng, e=(3, 5), h=(3, 5, 4))],
    hints=(
        "e (B, S) scores, h (B, S, D) values, c (B, D); g = dL/dc is (B, D). de is (B, S): "
        "one number per position, a dot product over D -- np.einsum('bd,bsd->bs', g, h) or "
        "(h * g[:, None, :]).sum(-1). dh is (B, S, D): g[:, None, :] broadcast over S, "
        "weighted by α[:, :, None].",
        "∂c/∂h_j = α_j, so ∂L/∂h_j = α_j g. Through the softmax, ∂α_i/∂e_j = α_i(δ_ij − α_j), "
        "so ∂L/∂e_j = Σ_i (g·h_i) α_i (δ_ij − α_j) = α_j (g·h_j − g·c) = α_j g·(h_j − c) "
        "(source 004 §7). Check: Σ_j ∂L/∂e_j = 0.",
    ),
    mistakes=(
        Mistake("forgot to subtract c: ∂L/∂e_j = α_j g·(h_j − c), not α_j g·h_j (the softmax "
                "couples the positions)", _read_forgot_c),
        Mistake("forgot the weight α_j: ∂L/∂h_j = α_j g", _read_forgot_alpha),
    ),
    zero_sum={"e": -1},
)

# ---- 10. the additive score ------------------------------------------------------------------

def _additive(q, h, W_q, W_k, b, v, tanh=mg.tanh):
    """e = vᵀ tanh(W_q q + W_k h_j + b) for every source position j."""
    u = mg.expand_dims(q @ W_q.T, 1) + h @ W_k.T + b        # (B, S, A)
    return tanh(u) @ v                                      # (B, S)


def _additive_cases(rng):
    return [normal(rng, q=(2, 3), h=(2, 4, 2), W_q=(5, 3), W_k=(5, 2), b=(5,), v=(5,)),
            normal(rng, q=(1, 2), h=(1, 3, 3), W_q=(3, 2), W_k=(3, 3), b=(3,), v=(3,)),
            normal(rng, 0.7, q=(3, 4), h=(3, 2, 4), W_q=(4, 4), W_k=(4, 4), b=(4,), v=(4,))]


def _additive_v_from_u(g, x, c):
    u = (x["q"] @ x["W_q"].T)[:, None, :] + x["h"] @ x["W_k"].T + x["b"]
    return {"v": np.einsum("bs,bsa->a", g, u)}


ADDITIVE_SCORE = Exercise(
    name="additive_score", stars=4, title="the additive (Bahdanau) score",
    formula="e_j = vᵀ tanh(W_q q + W_k h_j + b)",
    args=("q", "h", "W_q", "W_k", "b", "v"),
    forward=_additive,
    cases=_additive_cases,
    hints=(
        "q (B, Dq), h (B, S, Dk), W_q (A, Dq), W_k (A, Dk), b (A,), v (A,); e and g are "
        "(B, S). Name the pre-activation u = W_q q + W_k h + b (B, S, A) and t = tanh(u). "
        "q is used at every source position, so dq sums over S; the weights and b are used "
        "at every (batch, position) pair, so they sum over B and S: "
        "dW_q = Σ_{b,s} du_bs q_bᵀ has shape (A, Dq) -- np.einsum('bsa,bd->ad', du, q).",
        "dv = Σ_{b,s} g_bs t_bs. du = (g[..., None] * v) ⊙ (1 − t²). Then dq = Σ_s du W_q, "
        "dh = du W_k, dW_q = Σ du qᵀ, dW_k = Σ du hᵀ, db = Σ du (sums over B and S).",
    ),
    mistakes=(
        Mistake("missing the factor 1 − tanh²(u), u = W_q q + W_k h + b: the gradient into u "
                "is (g v) ⊙ (1 − tanh²(u)), not g v",
                autodiff(lambda *xs: _additive(*xs, tanh=lambda u: st(mg.tanh(u), u)))),
        Mistake("dv used u, the pre-activation: dv = Σ_{b,s} g_bs tanh(u_bs)",
                _additive_v_from_u),
    ),
)

# ---- 11. scaled dot-product attention --------------------------------------------------------

def _sdpa(Q, K, V, mistake=None):
    """out = softmax(Q Kᵀ / √d) V. ``mistake`` switches on one classic backward error."""
    d = Q.shape[-1]
    raw = Q @ K.swapaxes(-1, -2)                            # (B, T, S)
    s = raw / np.sqrt(d)
    if mistake == "scale":                                  # value s, gradient of raw
        s = st(s, raw)
    if mistake == "diag":                                   # normaliser treated as constant
        e = mg.exp(s - s.data.max(axis=-1, keepdims=True))
        A = e / e.sum(axis=-1, keepdims=True).detach()
    else:
        A = F.softmax(s, axis=-1)                           # (B, T, S)
    return A @ V                                            # (B, T, dv)


SCALED_DOT_PRODUCT = Exercise(
    name="scaled_dot_product", stars=5, title="scaled dot-product attention",
    formula="out = softmax(Q Kᵀ/√d) V",
    args=("Q", "K", "V"),
    forward=_sdpa,
    cases=lambda rng: [normal(rng, Q=(1, 2, 3), K=(1, 4, 3), V=(1, 4, 2)),
                       normal(rng, Q=(2, 3, 4), K=(2, 5, 4), V=(2, 5, 3)),
                       normal(rng, Q=(2, 4, 2), K=(2, 4, 2), V=(2, 4, 2))],
    hints=(
        "Q (B, T, d), K (B, S, d), V (B, S, dv); scores S = Q Kᵀ/√d and weights A are "
        "(B, T, S); out and g are (B, T, dv). Go backwards one product at a time, transposing "
        "only the last two axes (np.swapaxes(X, -1, -2)): dA = G Vᵀ (B, T, S), "
        "dV = Aᵀ G (B, S, dv), then the softmax along S, then dQ (B, T, d) and dK (B, S, d).",
        "dA = G Vᵀ; dV = Aᵀ G; dS = A ⊙ (dA − Σ_s A dA) (row-wise softmax VJP); "
        "dQ = dS K / √d; dK = dSᵀ Q / √d.",
    ),
    mistakes=(
        Mistake("missing the 1/√d: the scores are Q Kᵀ/√d, so dQ and dK carry the factor "
                "1/√d too", autodiff(lambda Q, K, V: _sdpa(Q, K, V, mistake="scale"))),
        Mistake("the softmax backward kept only A ⊙ dA: subtract each row's Σ_s A dA, "
                "dS = A ⊙ (dA − Σ_s A dA)",
                autodiff(lambda Q, K, V: _sdpa(Q, K, V, mistake="diag"))),
    ),
)

# ---- 12. one GRU cell step -------------------------------------------------------------------

def _gru(x, h, W_ih, W_hh, b_ih, b_hh, mistake=None):
    """One step of torch.nn.GRUCell (gates stacked r|z|n in W_ih (3H, I), W_hh (3H, H)).

    r = σ(W_ir x + b_ir + W_hr h + b_hr),  z = σ(W_iz x + b_iz + W_hz h + b_hz),
    n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)),  h' = (1 − z) ⊙ n + z ⊙ h.
    ``mistake`` switches on one classic backward error; the values never change.
    """
    H = h.shape[-1]
    gi = x @ W_ih.T + b_ih                                  # (B, 3H)
    gh = h @ W_hh.T + b_hh                                  # (B, 3H)
    sigmoid = (lambda a: st(mg.sigmoid(a), a)) if mistake == "sigmoid'" else mg.sigmoid
    r = sigmoid(gi[:, :H] + gh[:, :H])                      # (B, H)
    z = sigmoid(gi[:, H:2 * H] + gh[:, H:2 * H])            # (B, H)
    a_n = gi[:, 2 * H:] + r * gh[:, 2 * H:]                 # (B, H)
    if mistake == "b_hn":             # adds (1 − r) to b_hn's gradient and 0 to the value
        b_hn = b_hh[2 * H:]
        a_n = a_n + (b_hn - b_hn.detach()) * (1 - r.detach())
    n = st(mg.tanh(a_n), a_n) if mistake == "tanh'" else mg.tanh(a_n)
    if mistake == "dz sign":
        z = st(z, -z)
    h_direct = h.detach() if mistake == "direct" else h
    return (1 - z) * n + z * h_direct                       # (B, H)


def _gru_mistake(text, name):
    return Mistake(text, autodiff(lambda *xs: _gru(*xs, mistake=name)))


GRU_CELL = Exercise(
    name="gru_cell", stars=5, title="one GRU cell step (PyTorch layout)",
    formula="n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)), h' = (1 − z) ⊙ n + z ⊙ h",
    args=("x", "h", "W_ih", "W_hh", "b_ih", "b_hh"),
    forward=_gru,
    cases=lambda rng: [normal(rng, x=(2, 3), h=(2, 2), W_ih=(6, 3), W_hh=(6, 2), b_ih=(6,),
                              b_hh=(6,)),
                       normal(rng, x=(1, 2), h=(1, 3), W_ih=(9, 2), W_hh=(9, 3), b_ih=(9,),
                              b_hh=(9,)),
                       normal(rng, 0.6, x=(3, 4), h=(3, 4), W_ih=(12, 4), W_hh=(12, 4),
                              b_ih=(12,), b_hh=(12,))],
    hints=(
        "x (B, I), h (B, H), W_ih (3H, I), W_hh (3H, H), b_ih and b_hh (3H,); g = dL/dh' is "
        "(B, H). Recompute the forward keeping gi = x W_ihᵀ + b_ih and gh = h W_hhᵀ + b_hh "
        "(B, 3H), r, z, n. Build dgi and dgh (B, 3H) by filling their r|z|n column blocks, "
        "then dx = dgi W_ih, dW_ih = dgiᵀ x, db_ih = Σ_B dgi (same for h, W_hh, b_hh).",
        "dn = g (1 − z); dz = g (h − n); da_n = dn (1 − n²) with a_n = gi_n + r ⊙ gh_n. "
        "dgi_n = da_n, dgh_n = da_n ⊙ r, dr = da_n ⊙ gh_n. Gates: dgi_r = dgh_r = dr r(1 − r), "
        "dgi_z = dgh_z = dz z(1 − z). Finally dh = dgh W_hh + g ⊙ z (the direct path).",
    ),
    mistakes=(
        _gru_mistake("missing the factor 1 − n² (the tanh in n): the gradient into n's "
                     "pre-activation is g ⊙ (1 − z) ⊙ (1 − n²)", "tanh'"),
        _gru_mistake("missing σ' = σ(1 − σ) on the gates r and z", "sigmoid'"),
        _gru_mistake("dL/dh lacks the direct path: h' = … + z ⊙ h gives dL/dh a term g ⊙ z "
                     "besides the paths through W_hh", "direct"),
        _gru_mistake("sign of dL/dz: h' = (1 − z) ⊙ n + z ⊙ h gives dL/dz = g ⊙ (h − n), "
                     "not g ⊙ (n − h)", "dz sign"),
        _gru_mistake("b_hn sits inside the reset gate in PyTorch's layout: n = tanh(W_in x + "
                     "b_in + r ⊙ (W_hn h + b_hn)), so db_hn = r ⊙ (gradient of n's "
                     "pre-activation)", "b_hn"),
    ),
)

EXERCISES = [MASKED_SOFTMAX, ATTENTION_READ, ADDITIVE_SCORE, SCALED_DOT_PRODUCT, GRU_CELL]
