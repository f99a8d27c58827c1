"""Exercises 17-22: forward passes by hand (source 003 §5), then two measurements (000 §7 Q2).

The learner writes the forward itself, ``name(*inputs, **constants)``, in plain NumPy; the
checker compares each output with the forward below, element by element. The forwards are
the backward exercises' own (the read of 9, the score of 10, the cell of 12), and the tests
check that each equals the library's module (``attention.Attention``, ``AdditiveScore``,
``models.recurrent.GRUCell``, ``models.decoders.BahdanauDecoder.step``).

Exercises 21 and 22 are conceptual: the function is a measurement, and a passing case prints
what it shows (``lesson``), e.g. that q·k/√d keeps variance 1 whatever d is.

Shape letters: B batch, S source length, D value width, A attention width, I input width,
H hidden width, E embedding width, K annotation width, N samples, d key width.
"""
from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad import functional as F
from minigrad.exercises.catalog import Exercise, Mistake, normal
from minigrad.exercises.catalog_attention import GRU_CELL, _additive, _additive_cases, _gru, _read
from minigrad.i18n import translator

_ = translator("minigrad")


def _np_softmax(x: np.ndarray) -> np.ndarray:
    w = np.exp(x - x.max(axis=-1, keepdims=True))
    return w / w.sum(axis=-1, keepdims=True)


def _wrong(name: str, value) -> callable:
    """A mistake's output: ``value(inputs, constants)`` for the output ``name``."""
    return lambda g, x, c: {name: value(x, c)}


# ---- 17. the attention read, forward ---------------------------------------------------------

FORWARD_READ = Exercise(
    name="forward_read", stars=1, kind="forward", title="the attention read, forward",
    formula="α = softmax(e) over S,  c = Σ_j α_j h_j",
    args=("e", "h"), outputs=("c",),
    forward=_read,
    cases=lambda rng: [normal(rng, e=(1, 3), h=(1, 3, 2)),
                       normal(rng, 3.0, e=(2, 4), h=(2, 4, 3)),
                       normal(rng, e=(3, 5), h=(3, 5, 1))],
    hints=(
        "e (B, S) scores, h (B, S, D) values; c (B, D). The softmax runs along S (axis -1 of "
        "e), one row per batch entry; then weight every h_j by its α_j and sum over S: "
        "α[:, :, None] * h has shape (B, S, D).",
        "α = exp(e − max) / Σ exp(e − max) along axis -1 (subtracting the row's max changes "
        "nothing and keeps exp from overflowing); c = np.einsum('bs,bsd->bd', α, h).",
    ),
    mistakes=(
        Mistake("the softmax ran over the batch axis: α normalises each row of e, along S "
                "(axis -1), not axis 0",
                _wrong("c", lambda x, c: np.einsum("bs,bsd->bd", np.exp(x["e"]) / np.exp(
                    x["e"]).sum(axis=0, keepdims=True), x["h"]))),
        Mistake("no softmax: the weights are α = softmax(e), not the scores e themselves",
                _wrong("c", lambda x, c: np.einsum("bs,bsd->bd", x["e"], x["h"]))),
        Mistake("an unweighted mean of the h_j: the read weights each position by α_j",
                _wrong("c", lambda x, c: x["h"].mean(axis=1))),
    ),
)

# ---- 18. the additive score, forward ---------------------------------------------------------

def _u(x):
    return (x["q"] @ x["W_q"].T)[:, None, :] + x["h"] @ x["W_k"].T + x["b"]      # (B, S, A)


FORWARD_ADDITIVE = Exercise(
    name="forward_additive", stars=2, kind="forward", title="the additive score, forward",
    formula="e_j = vᵀ tanh(W_q q + W_k h_j + b)",
    args=("q", "h", "W_q", "W_k", "b", "v"), outputs=("e",),
    forward=_additive,
    cases=_additive_cases,
    hints=(
        "q (B, Dq), h (B, S, Dk), W_q (A, Dq), W_k (A, Dk), b (A,), v (A,); e is (B, S). "
        "W_q q is (B, A) and must be added at every source position: q @ W_q.T gives (B, A), "
        "[:, None, :] makes it (B, 1, A), and h @ W_k.T is (B, S, A).",
        "u = (q @ W_q.T)[:, None, :] + h @ W_k.T + b  (B, S, A);  e = np.tanh(u) @ v  (B, S).",
    ),
    mistakes=(
        Mistake("no tanh: e_j = vᵀ tanh(W_q q + W_k h_j + b); the tanh is what makes the "
                "score more than a sum of a query part and a key part",
                _wrong("e", lambda x, c: _u(x) @ x["v"])),
        Mistake("the bias b is missing: e_j = vᵀ tanh(W_q q + W_k h_j + b)",
                _wrong("e", lambda x, c: np.tanh(_u(x) - x["b"]) @ x["v"])),
        Mistake("a softmax too much: the score is e itself; the weights α = softmax(e) come "
                "after it", _wrong("e", lambda x, c: _np_softmax(np.tanh(_u(x)) @ x["v"]))),
    ),
)

# ---- 19. one GRU step, forward ---------------------------------------------------------------

def _np_gru(x, mistake=None):
    H = x["h"].shape[-1]
    gi = x["x"] @ x["W_ih"].T + x["b_ih"]                                        # (B, 3H)
    gh = x["h"] @ x["W_hh"].T + x["b_hh"]                                        # (B, 3H)
    sig = lambda a: 1 / (1 + np.exp(-a))  # noqa: E731
    r, z = sig(gi[:, :H] + gh[:, :H]), sig(gi[:, H:2 * H] + gh[:, H:2 * H])      # (B, H)
    if mistake == "cho":   # r on h before the matrix: the form of Cho et al. 2014
        W_hn, b_hn = x["W_hh"][2 * H:], x["b_hh"][2 * H:]
        n = np.tanh(gi[:, 2 * H:] + (r * x["h"]) @ W_hn.T + b_hn)
    else:
        n = np.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])                           # (B, H)
    if mistake == "z roles":
        return z * n + (1 - z) * x["h"]
    return n if mistake == "candidate" else (1 - z) * n + z * x["h"]


FORWARD_GRU = Exercise(
    name="forward_gru", stars=3, kind="forward", title="one GRU step, forward (PyTorch layout)",
    formula="n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)), h' = (1 − z) ⊙ n + z ⊙ h",
    args=("x", "h", "W_ih", "W_hh", "b_ih", "b_hh"), outputs=("h_new",),
    forward=_gru,
    cases=GRU_CELL.cases,                # the shapes of exercise 12 (other numbers: other seed)
    hints=(
        "x (B, I), h (B, H), W_ih (3H, I), W_hh (3H, H), b_ih and b_hh (3H,); h' is (B, H). "
        "gi = x @ W_ih.T + b_ih and gh = h @ W_hh.T + b_hh are (B, 3H); their column blocks "
        "[:, :H], [:, H:2*H], [:, 2*H:] belong to r, z and n.",
        "r = σ(gi_r + gh_r), z = σ(gi_z + gh_z), n = tanh(gi_n + r ⊙ gh_n), "
        "h' = (1 − z) ⊙ n + z ⊙ h, with σ(a) = 1 / (1 + e^−a).",
    ),
    mistakes=(
        Mistake("z's roles are swapped: h' = (1 − z) ⊙ n + z ⊙ h, so z = 1 keeps the old "
                "state", _wrong("h_new", lambda x, c: _np_gru(x, "z roles"))),
        Mistake("the reset gate acts before W_hn (Cho et al. 2014's form, reset_after=False); "
                "PyTorch's layout puts it after: r ⊙ (W_hn h + b_hn)",
                _wrong("h_new", lambda x, c: _np_gru(x, "cho"))),
        Mistake("this is the candidate n: the new state mixes it with the old one, "
                "h' = (1 − z) ⊙ n + z ⊙ h", _wrong("h_new", lambda x, c: _np_gru(x, "candidate"))),
    ),
)

# ---- 20. one Bahdanau decoder step, forward --------------------------------------------------

def _bahdanau(x, s, h, W_q, W_k, b, v, W_ih, W_hh, b_ih, b_hh):
    """Bahdanau et al. 2015's step: attend with the previous state, then update the GRU.

    e_j = vᵀ tanh(W_q s + W_k h_j + b),  α = softmax(e),  c = Σ_j α_j h_j,
    s' = GRU([x ; c], s).
    """
    e = _additive(s, h, W_q, W_k, b, v)                     # (B, S)
    alpha = F.softmax(e, axis=-1)                           # (B, S)
    c = _read(e, h)                                         # (B, K)
    s_new = _gru(mg.concatenate([x, c], axis=-1), s, W_ih, W_hh, b_ih, b_hh)  # (B, H)
    return s_new, c, alpha


def _np_bahdanau(x, mistake=None):
    u = (x["s"] @ x["W_q"].T)[:, None, :] + x["h"] @ x["W_k"].T + x["b"]         # (B, S, A)
    alpha = _np_softmax(np.tanh(u) @ x["v"])                                     # (B, S)
    c = np.einsum("bs,bsk->bk", alpha, x["h"])                                   # (B, K)
    parts = ([c, x["x"]] if mistake == "order" else [x["x"], np.zeros_like(c)]
             if mistake == "no context" else [x["x"], c])
    cell = {k: x[k] for k in ("W_ih", "W_hh", "b_ih", "b_hh")}
    return _np_gru(dict(cell, x=np.concatenate(parts, axis=-1), h=x["s"]))


def _bahdanau_cases(rng):
    def case(B, S, E, K, H, A):
        return normal(rng, x=(B, E), s=(B, H), h=(B, S, K), W_q=(A, H), W_k=(A, K), b=(A,),
                      v=(A,), W_ih=(3 * H, E + K), W_hh=(3 * H, H), b_ih=(3 * H,),
                      b_hh=(3 * H,))
    return [case(1, 3, 2, 2, 2, 3), case(2, 3, 3, 3, 3, 4), case(3, 2, 2, 3, 2, 2)]  # S = K in 2


FORWARD_BAHDANAU = Exercise(
    name="forward_bahdanau", stars=4, kind="forward", title="one Bahdanau decoder step, forward",
    formula="e = vᵀ tanh(W_q s + W_k h_j + b), α = softmax(e), c = Σ α_j h_j, "
            "s' = GRU([x ; c], s)",
    args=("x", "s", "h", "W_q", "W_k", "b", "v", "W_ih", "W_hh", "b_ih", "b_hh"),
    outputs=("s_new", "c", "alpha"),
    forward=_bahdanau,
    cases=_bahdanau_cases,
    hints=(
        "x (B, E) is the embedded previous output E y_{t−1}, s (B, H) the previous state "
        "s_{t−1}, h (B, S, K) the annotations; W_q (A, H), W_k (A, K), b and v (A,); "
        "W_ih (3H, E+K), W_hh (3H, H), b_ih and b_hh (3H,). Return s' (B, H), c (B, K) and "
        "α (B, S). Reuse your exercises 18, 17 and 19, in that order.",
        "e = additive score of (s, h) as in 18; α = softmax(e); c = Σ_j α_j h_j as in 17; "
        "s' = the GRU step of 19 on the input np.concatenate([x, c], axis=-1) and the state s. "
        "The score reads s_{t−1}, the state from before this step (Bahdanau's order).",
    ),
    mistakes=(
        Mistake("the GRU's input is [x ; c], in that order: W_ih's first E columns read x, "
                "the last K read c", _wrong("s_new", lambda x, c: _np_bahdanau(x, "order"))),
        Mistake("c is missing from the GRU's input: s' = GRU([x ; c], s), the context enters "
                "the recurrence", _wrong("s_new", lambda x, c: _np_bahdanau(x, "no context"))),
    ),
)

# ---- 21. why √d (000 §2.3 and §7 Q2) ---------------------------------------------------------

def _variances(q, k):
    """var(q_n · k_n) over the N rows, raw and divided by √d (np.var: the mean of squares)."""
    raw = (q * k).sum(axis=-1)                              # (N,)
    scaled = raw / np.sqrt(q.shape[-1])                     # (N,)
    return tuple(((x - x.mean()) ** 2).mean() for x in (raw, scaled))


def _np_scores(x):
    raw = (x["q"] * x["k"]).sum(axis=-1)                   # (N,)
    return raw, raw / np.sqrt(x["q"].shape[-1])


def _np_all_pairs(x):
    """The scores of all N² pairs q_n·k_m (the mistake), raw and divided by √d."""
    raw = x["q"] @ x["k"].T                                 # (N, N)
    return raw, raw / np.sqrt(x["q"].shape[-1])


def _variance_lesson(x, c, out):
    return _("d = {d}: var(q·k) = {raw:.3g} ≈ d, var(q·k/√d) = {scaled:.3g} ≈ 1").format(
        d=x["q"].shape[-1], raw=out[0], scaled=out[1])


SQRT_D = Exercise(
    name="sqrt_d_scaling", stars=1, kind="forward", title="why the scores are divided by √d",
    formula="var(q·k) = d for independent N(0, 1) components; var(q·k/√d) = 1",
    args=("q", "k"), outputs=("var_raw", "var_scaled"),
    forward=_variances,
    cases=lambda rng: [normal(rng, q=(1000, d), k=(1000, d)) for d in (4, 64, 256)],
    hints=(
        "q and k are (N, d): N independent pairs of vectors whose components are N(0, 1). "
        "Row n gives one score q_n·k_n, so the scores are (N,): (q * k).sum(axis=-1). "
        "Return two numbers: their variance, and the variance after dividing by √d.",
        "scores = (q * k).sum(-1); return np.var(scores), np.var(scores / np.sqrt(d)). Why: "
        "each term q_i k_i has mean 0 and variance 1, and d independent terms add their "
        "variances, so var(q·k) = d; dividing by √d divides the variance by d.",
    ),
    mistakes=(
        Mistake("np.var divides by N (ddof=0), the variance of these N scores; you divided "
                "by N − 1", lambda g, x, c: dict(zip(("var_raw", "var_scaled"), (
                    np.var(s, ddof=1) for s in _np_scores(x))))),
        Mistake("divided by d, not √d: the scaled variance is then 1/d, not 1",
                _wrong("var_scaled", lambda x, c: np.var(_np_scores(x)[1])
                       / x["q"].shape[-1])),
        Mistake("this is a standard deviation (√d), not a variance (d)",
                _wrong("var_raw", lambda x, c: np.std(_np_scores(x)[0]))),
        Mistake("these are all N² pairs q_n·k_m (q @ k.T), not the N rows' scores q_n·k_n "
                "((q * k).sum(axis=-1)): their variance is near d too, but not the measurement "
                "asked for", lambda g, x, c: dict(zip(("var_raw", "var_scaled"), (
                    np.var(s) for s in _np_all_pairs(x))))),
        Mistake("divided by d, not √d (the scaled variance is then 1/d, not 1), and over all "
                "N² pairs (q @ k.T), not the N rows' scores ((q * k).sum(axis=-1))",
                _wrong("var_scaled", lambda x, c: np.var(_np_all_pairs(x)[1])
                       / x["q"].shape[-1])),
    ),
    lesson=_variance_lesson,
    moral="the raw scores' variance grows like d (their spread like √d), so for large d a "
          "softmax over them is nearly one-hot and its gradient nearly 0 (saturation); divided "
          "by √d they keep variance 1 at every d -- the analysis of 000 §2.3, measured",
)

# ---- 22. two correlated keys (000 §7 Q2, with the keys correlated) ---------------------------

def _correlated(q, k, z, rho):
    """k' = ρ k + √(1 − ρ²) z (again N(0, 1) per component, correlation ρ with k);
    α = softmax([q·k, q·k'] / √d) per row; gap = mean over rows of |α_1 − α_2|."""
    k2 = rho * k + np.sqrt(1 - rho ** 2) * z                # (N, d)
    scores = mg.stack([(q * k).sum(axis=-1), (q * k2).sum(axis=-1)], axis=-1)  # (N, 2)
    alpha = F.softmax(scores / np.sqrt(q.shape[-1]), axis=-1)                  # (N, 2)
    return alpha, mg.abs(alpha[:, 0] - alpha[:, 1]).mean()


def _np_correlated(x, c, noise=None, scale=True):
    q, k, rho = x["q"], x["k"], c["rho"]
    k2 = rho * k + (np.sqrt(1 - rho ** 2) if noise is None else noise) * x["z"]
    s = np.stack([(q * k).sum(-1), (q * k2).sum(-1)], -1) / (np.sqrt(q.shape[-1]) if scale else 1)
    return _np_softmax(s)


def _correlated_lesson(x, c, out):
    return _("ρ = {rho:g}: the two keys' weights differ by {gap:.3f} on average").format(
        rho=c["rho"], gap=out[1])


CORRELATED_KEYS = Exercise(
    name="correlated_keys", stars=2, kind="forward", title="two correlated keys",
    formula="k' = ρ k + √(1 − ρ²) z,  α = softmax([q·k, q·k'] / √d),  gap = mean |α_1 − α_2|",
    args=("q", "k", "z"), outputs=("alpha", "gap"),
    forward=_correlated,
    cases=lambda rng: [normal(rng, constants={"rho": rho}, q=(500, d), k=(500, d), z=(500, d))
                       for rho, d in ((0.0, 8), (0.9, 16), (0.99, 32))],
    hints=(
        "q, k and z are (N, d), components N(0, 1); rho is a number. Make the second key "
        "k' (N, d) from k and z, score both keys against q row by row (two scores per row, "
        "(N, 2)), scale by 1/√d, softmax each row. Return α (N, 2) and gap, one number.",
        "k' = rho * k + np.sqrt(1 − rho²) * z (the square root keeps k' at unit variance); "
        "s = np.stack([(q * k).sum(-1), (q * k2).sum(-1)], -1) / np.sqrt(d); α = the softmax "
        "of s along axis -1; gap = np.abs(α[:, 0] − α[:, 1]).mean().",
    ),
    mistakes=(
        Mistake("k' = ρ k + √(1 − ρ²) z: with (1 − ρ) in place of the square root, k' does not "
                "have unit variance",
                _wrong("alpha", lambda x, c: _np_correlated(x, c, 1 - c["rho"]))),
        Mistake("the scores are divided by √d before the softmax",
                _wrong("alpha", lambda x, c: _np_correlated(x, c, scale=False))),
    ),
    lesson=_correlated_lesson,
    moral="the more alike two keys are, the closer their weights are to (½, ½): q·k − q·k' has "
          "variance 2(1 − ρ) after the scaling, so attention cannot tell correlated keys apart "
          "and reads their average",
)

EXERCISES = [FORWARD_READ, FORWARD_ADDITIVE, FORWARD_GRU, FORWARD_BAHDANAU, SQRT_D,
             CORRELATED_KEYS]
