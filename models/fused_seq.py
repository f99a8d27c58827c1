"""Whole sequences as one graph node: the bidirectional GRU encoder, and Bahdanau's decoder with
the additive score, each run over time in NumPy with the backward over time written out.

Shape letters: B batch, S source length, T target length, V vocabulary, E embedding, H hidden
(per direction in the encoder), G = 3H the gate width, K annotation width, A attention width.

Same numbers as the core, one step at a time: the GRU of ``models/fused.py`` (reset after,
feature-major), the additive score of ``attention.kernels.additive_tanh`` and the read of
``attention/read.py``. What is new is *where* the work goes:

* **Over time at once**, whatever does not depend on the recurrence: the input projections
  (read from a table over the vocabulary, W_ih Eᵀ + b_ih (G, V)), and in the backward the
  weight gradients Σ_t δ_t x_tᵀ after the loop (``over_time``; the inputs' via the table's
  gradient) and the read's ∂L/∂h_j = Σ_t α_tj g_t as one batched product.
* **Both encoder directions in one loop**, stacked (2, H, B).
* **One node, one backward**: no graph bookkeeping and no checks per step (the ids and masks
  are checked at the model's entry). First order only.
* **tanh of a sum from e^{2k}** (``tanh_of_sum``): tanh(q_t + k_j) over (B, S, A) as
  1 − 2 / (1 + e^{2q_t} e^{2k_j}), e^{2k} computed once per batch.

``bahdanau_step`` is one decoder step without a graph, for decoding under ``no_grad``.
"""
from __future__ import annotations

import numpy as np

from minigrad.kernels import once_differentiable, tanh_
from minigrad.tensor import Tensor
from models.seq2seq import check_ids
from models.fused import gru_backward, gru_forward

CORE = "the core model (models.kernels.use_core)"


def over_time(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Σ_t a_t b_t for a (T, …, M, B) and b (T, …, B, N), views of any strides: T products and
    their sum (one (M, T·B) product would first copy both into that layout)."""
    return np.matmul(a, b).sum(axis=0)                                    # (…, M, N)


def one_hot(ids: np.ndarray, n: int, dtype) -> np.ndarray:
    """(..., n) rows of the identity: one_hot(ids) @ E = E[ids] (ids checked at the entry)."""
    return np.eye(n, dtype=dtype)[ids]                                    # (..., n)


# ---- the bidirectional encoder: both directions in one loop ---------------------------------
# Step k of the loop is position k for the forward direction and S − 1 − k for the backward
# one; arrays "in step order" are (S, 2, ·, B), [k, 0] forward and [k, 1] backward.

def bigru_sequence(src, mask, embedding, forward_cell, backward_cell) -> Tensor:
    """Annotations h_j = [→h_j ; ←h_j] (B, S, 2H), zero at padding, as one op: what
    ``BiGRUEncoder`` computes from ids ``src`` (B, S) with ``mask`` (B, S), both checked."""
    cells = (forward_cell, backward_cell)
    names = ("weight_ih", "bias_ih", "weight_hh", "bias_hh")
    params = (embedding,) + tuple(getattr(c, k) for c in cells for k in names)
    W_ih, b_ih, W_hh, b_hh = (np.stack([getattr(c, k).data for c in cells]) for k in names)
    E_ = embedding.data                                                   # (V, E)
    (B, S), (_, G, H), V = src.shape, W_hh.shape, E_.shape[0]             # W_hh (2, G, H)
    table = np.matmul(W_ih, E_.T) + b_ih[:, :, None]                   # (2, G, V): W_ih E[y] + b_ih
    steps = np.stack([src.T, src.T[::-1]], axis=1)                        # (S, 2, B) ids by step
    rows = table.swapaxes(1, 2).reshape(2 * V, G)                         # (2V, G): a row per id
    gi = np.take(rows, steps + [[0], [V]], axis=0).swapaxes(2, 3)        # (S, 2, G, B), a view
    real = np.stack([mask.T, mask.T[::-1]], axis=1)[:, :, None, :]        # (S, 2, 1, B)
    held = ~real.all(axis=(1, 2, 3))                                      # (S,): any padding?
    states = np.zeros((S + 1, 2, H, B), E_.dtype)                         # h_0 = 0, then step k's h
    gh, n = np.empty((S, 2, G, B), E_.dtype), np.empty((S, 2, H, B), E_.dtype)
    b_col = b_hh[:, :, None]
    for k in range(S):
        gru_forward(gi[k], states[k], W_hh, b_col, gh[k], n[k], states[k + 1])
        if held[k]:                                                       # h held at padding
            np.copyto(states[k + 1], states[k], where=~real[k])
    before = states[:S]                                                # (S, 2, H, B): each step's h
    out = np.empty((B, S, 2, H), E_.dtype)                                # by position
    np.copyto(out.transpose(1, 2, 3, 0)[:, 0], states[1:, 0])
    np.copyto(out.transpose(1, 2, 3, 0)[:, 1], states[:0:-1, 1])
    out[~mask] = 0
    out = out.reshape(B, S, 2 * H)                                        # (B, S, 2H)

    def vjp(g):                                                           # g (B, S, 2H)
        gT = g.transpose(1, 2, 0)                                         # (S, 2H, B), a view
        g_k = np.empty((2, H, B), E_.dtype)                   # ∂L/∂h at step k (padding: below)
        d_gi, d_gh = np.empty_like(gh), np.empty_like(gh)                 # (S, 2, G, B)
        carry = np.zeros((2, H, B), E_.dtype)                             # ∂L/∂h from step k + 1
        d_W_hh = np.zeros_like(W_hh)                                      # (2, G, H), in the loop
        for k in reversed(range(S)):
            passed = np.where(real[k], 0, carry) if held[k] else None     # held: straight back
            np.add(gT[k, :H], carry[0], out=g_k[0])                       # position k, and
            np.add(gT[S - 1 - k, H:], carry[1], out=g_k[1])               # S − 1 − k
            if held[k]:
                g_k *= real[k]                                            # ∂L/∂out at padding: 0
            carry = gru_backward(g_k, before[k], gh[k], n[k], W_hh, d_gi[k], d_gh[k])
            if held[k]:
                carry += passed
            d_W_hh += d_gh[k] @ before[k].swapaxes(1, 2)                  # (2, G, H), d_gh[k] hot
        d_table = over_time(d_gi, one_hot(steps, V, E_.dtype))            # (2, G, V): ∂L/∂table
        d_b_hh = d_gh.sum(axis=0).sum(axis=2)
        grads = [np.tensordot(d_table, W_ih, axes=([0, 1], [0, 1]))]      # ∂L/∂E (V, E)
        for d in (0, 1):                                                  # ∂L/∂W_ih = ∂L/∂table E
            grads += [d_table[d] @ E_, d_table[d].sum(axis=1), d_W_hh[d], d_b_hh[d]]
        return tuple(grads)
    return Tensor._from_op(out, params, once_differentiable(vjp, "bigru_sequence", CORE),
                           "bigru_sequence")


# ---- Bahdanau's decoder ---------------------------------------------------------------------

# tanh(q + k_j) from e^{2k}, computed once per batch: |q|, |k| up to LIMIT keep every e^{2q},
# e^{2k} and their product e^{2(q + k)} a normal number of the dtype (float64: e^±680 < e^709).
LIMIT = {np.dtype(np.float64): 170.0, np.dtype(np.float32): 20.0}


def exp_2k(k: np.ndarray) -> np.ndarray | None:
    """e^{2k} (B, S, A) for ``tanh_of_sum``, or None when some |k| exceeds LIMIT (or is NaN)."""
    limit = LIMIT.get(k.dtype)
    if limit is None or not np.abs(k).max(initial=0) <= limit:
        return None
    return np.exp(2 * k)                                                  # (B, S, A)


def tanh_of_sum(q, k, e2k, u) -> np.ndarray:
    """u_bj = tanh(q_b + k_bj) into ``u`` (B, S, A), for q (B, A) and k (B, S, A). With
    e2k = ``exp_2k(k)`` and |q| ≤ LIMIT, as tanh(q + k) = 1 − 2 / (1 + e^{2q} e^{2k}): four
    passes over (B, S, A), no exp. Error: P = e^{2q} e^{2k} is within 3 ulp of e^{2(q+k)} and
    ∂tanh/∂log P ≤ 1/2, so u is within 2⁻⁵¹ of tanh(q + k) in float64, as ``tanh_`` is (2⁻²²
    in float32). Otherwise (no e2k, or a large or NaN q) ``tanh_(q + k)``."""
    if e2k is not None and np.abs(q).max(initial=0) <= LIMIT[q.dtype]:
        np.multiply(np.exp(2 * q)[:, None, :], e2k, out=u)               # e^{2(q + k)}
        u += 1
        np.divide(2, u, out=u)
        return np.subtract(1, u, out=u)
    np.add(q[:, None, :], k, out=u)
    return tanh_(u)


def additive_scores(q, k, e2k, v, u) -> np.ndarray:
    """e_bj = vᵀ tanh(q_b + k_bj) (B, S) when the tanh itself is not needed (decoding), ``u``
    (B, S, A) as scratch. With E = e^{2q} (B, A) and tanh(x) = 1 − 2 / (1 + e^{2x}):

        e_bj = Σ_a v_a − Σ_a (2 v_a / E_a) / (1/E_a + e^{2k_bja})

    two passes over (B, S, A) (the bounds of ``tanh_of_sum`` keep every term a normal number).
    Otherwise (no e2k, or a large or NaN q) through ``tanh_of_sum``."""
    if e2k is None or not np.abs(q).max(initial=0) <= LIMIT[q.dtype]:
        tanh_of_sum(q, k, e2k, u)
        return (u.reshape(-1, u.shape[2]) @ v).reshape(u.shape[:2])      # (B, S)
    E = np.exp(2 * q)                                                     # (B, A)
    np.add(e2k, (1 / E)[:, None, :], out=u)                               # 1/E + e^{2k}
    np.divide(1, u, out=u)
    return v.sum() - (u @ ((2 * v) / E)[:, :, None])[:, :, 0]             # (B, S)


def masked_read(e, keys, mask) -> tuple:
    """α = softmax of the scores e (B, S) over the real j (in place), c = Σ_j α_j h_j (B, K)."""
    if mask is not None:
        e[~mask] = -np.inf
    e -= e.max(axis=1, keepdims=True)
    np.exp(e, out=e)
    e /= e.sum(axis=1, keepdims=True)                                     # α (B, S)
    return e, (e[:, None, :] @ keys)[:, 0]                                # (B, S), (B, K)


def bahdanau_step(y_prev, s, keys, projected, mask, W_q, v, table, W_c, W_hh, b_hh,
                  e2k=None) -> tuple:
    """One step without a graph (decoding): (s_t (B, H), c_t (B, K), α_t (B, S)) from the ids
    y_{t−1} (B,), s = s_{t−1} (B, H), the input table (G, V), e2k = ``exp_2k(projected)`` (or
    None) and the arrays as above. The GRU runs feature-major, as in ``bahdanau_sequence``;
    s_t is returned as the view (s_tᵀ)ᵀ."""
    e = additive_scores(s @ W_q.T, projected, e2k, v, np.empty(projected.shape, projected.dtype))
    a, c = masked_read(e, keys, mask)                                     # (B, S), (B, K)
    (G, H), B = W_hh.shape, s.shape[0]
    gi = table[:, y_prev]                                                 # (G, B)
    gi += W_c @ c.T
    gh, n, out = np.empty((G, B), s.dtype), np.empty((H, B), s.dtype), np.empty((H, B), s.dtype)
    gru_forward(gi, s.T, W_hh, b_hh[:, None], gh, n, out)                 # s_tᵀ (H, B)
    return out.T, c, a


def bahdanau_sequence(keys, projected, s0, mask, tgt_in, W_q, v, embedding, cell) -> tuple:
    """(features, α): the teacher-forced ``BahdanauDecoder`` with the additive tanh score as
    one op. Per step t, with s = s_{t−1}:

        α_t = softmax_j(vᵀ tanh(W_q s + k_j)),  c_t = Σ_j α_tj h_j,
        s_t = GRU(W_ih [E y_{t−1} ; c_t] + b_ih, s)

    keys h (B, S, K), projected k = W_k h + b (B, S, A), s0 (B, H), mask (B, S) or None,
    tgt_in (B, T) ids; returns features [s_t ; c_t] (B, T, H + K) (a Tensor) and α (B, T, S).
    """
    check_ids(tgt_in, embedding.shape[0], "decoder inputs")
    params = (keys, projected, s0, W_q, v, embedding,
              cell.weight_ih, cell.bias_ih, cell.weight_hh, cell.bias_hh)
    h_, k_, s0_, Wq, v_, E_, W_ih, b_ih, W_hh, b_hh = (p.data for p in params)
    B, S, K = h_.shape
    T, (G, H), E, A, dtype = tgt_in.shape[1], W_hh.shape, E_.shape[1], v_.shape[0], h_.dtype
    W_e, W_c = W_ih[:, :E], W_ih[:, E:]                                   # (G, E), (G, K)
    onehot = one_hot(tgt_in.T, E_.shape[0], dtype)                        # (T, B, V)
    table = W_e @ E_.T + b_ih[:, None]                                # (G, V): W_ih^emb E[y] + b_ih
    gi_y = np.take(table.T, tgt_in.T, axis=0).swapaxes(1, 2)             # (T, G, B), a view
    states = np.empty((T + 1, H, B), dtype)                              # s_0 .. s_T, feature-major
    states[0] = s0_.T
    u, alpha = np.empty((T, B, S, A), dtype), np.empty((B, T, S), dtype)
    c, gh, n = np.empty((B, T, K), dtype), np.empty((T, G, B), dtype), np.empty((T, H, B), dtype)
    gi, b_col, e2k = np.empty((G, B), dtype), b_hh[:, None], exp_2k(k_)
    for t in range(T):
        q = states[t].T @ Wq.T                                            # W_q s (B, A), contiguous
        tanh_of_sum(q, k_, e2k, u[t])                                     # (B, S, A)
        e = (u[t].reshape(-1, A) @ v_).reshape(B, S)                      # one product, not B
        alpha[:, t], c[:, t] = masked_read(e, h_, mask)
        np.matmul(W_c, c[:, t].T, out=gi)                                 # (G, B)
        gi += gi_y[t]
        gru_forward(gi, states[t], W_hh, b_col, gh[t], n[t], states[t + 1])
    features = np.concatenate([states[1:].transpose(2, 0, 1), c], axis=2)  # (B, T, H + K)

    def vjp(g):                                                           # g (B, T, H + K)
        g_s = g[:, :, :H].transpose(1, 2, 0)                              # (T, H, B), a view
        d_c = np.empty((B, T, K), dtype)                                  # ∂L/∂c_t, filled per step
        d_gi, d_gh = np.empty_like(gh), np.empty_like(gh)                 # (T, G, B)
        d_q = np.empty((T, B, A), dtype)
        eps_k, d_v = np.zeros_like(k_), np.zeros_like(v_)
        carry = np.zeros((H, B), dtype)                                   # ∂L/∂s_t from step t + 1
        d_W_c = np.zeros_like(W_c)                                        # (G, K)
        ones = np.ones((1, S), dtype)                    # Σ_j as a product: 3× ndarray.sum here
        for t in reversed(range(T)):
            carry = gru_backward(carry + g_s[t], states[t], gh[t], n[t], W_hh, d_gi[t], d_gh[t])
            dc = np.add(g[:, t, H:], d_gi[t].T @ W_c, out=d_c[:, t])      # ∂L/∂c_t (B, K)
            d_W_c += d_gi[t] @ c[:, t]                                    # Σ_t δ_t c_tᵀ (hot)
            a = alpha[:, t]                                               # (B, S)
            de = (h_ @ dc[:, :, None])[:, :, 0]                           # g·h_j (B, S)
            de *= a                                                       # Σ_j α_j g·h_j = g·c
            de -= a * de.sum(axis=1, keepdims=True)                       # ∂L/∂e = α_j g·(h_j − c)
            ut = u[t]                                                     # (B, S, A)
            d_v += de.reshape(-1) @ ut.reshape(-1, A)                     # Σ_j ∂L/∂e_j u_j
            np.multiply(ut, ut, out=ut)                                   # u is not needed again:
            np.subtract(1, ut, out=ut)                                    # ε = ∂L/∂e (1 − u²), and
            ut *= de[:, :, None]                                          # δ = v ⊙ ε (v at the end)
            eps_k += ut                                                   # ∂L/∂k_j = v ⊙ Σ_t ε_tj
            np.matmul(ones, ut, out=d_q[t][:, None])                      # Σ_j ε_j (B, A)
            d_q[t] *= v_                                                  # ∂L/∂q = Σ_j δ_j
            carry += Wq.T @ d_q[t].T                                      # + ∂L/∂s via the query
        d_h = alpha.transpose(0, 2, 1) @ d_c                            # Σ_t α_tj ∂L/∂c_t (B, S, K)
        s_T = states[:-1].transpose(0, 2, 1)                             # s_{t−1} (T, B, H), a view
        d_Wq = over_time(d_q.transpose(0, 2, 1), s_T)                     # (A, H)
        d_table = over_time(d_gi, onehot)                                 # (G, V)
        d_W_ih = np.concatenate([d_table @ E_, d_W_c], axis=1)            # (G, E + K)
        return (d_h, eps_k * v_, carry.T, d_Wq, d_v, d_table.T @ W_e, d_W_ih, d_table.sum(axis=1),
                over_time(d_gh, s_T), d_gh.sum(axis=0).sum(axis=1))
    out = Tensor._from_op(features, params, once_differentiable(vjp, "bahdanau_sequence", CORE),
                          "bahdanau_sequence")
    return out, alpha
