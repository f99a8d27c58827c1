"""Soft attention: the read  c = Σ_j α_j h_j,  α = softmax(e),  and its analytic gradient.

Shape letters: B batch, T queries, S source positions, D value width. Scores ``(B, S)`` read
values ``(B, S, D)`` into a context ``(B, D)``; scores ``(B, T, S)`` (or ``(B, h, T, S)`` with
heads) give ``(B, T, D)`` (``(B, h, T, D)``).

Two implementations of the same map:

* ``attend``: composed from minigrad ops (masked softmax, then a matmul), the readable
  reference whose gradient autograd derives;
* ``read``: one fused op whose backward is the formula of source 004 §7,

      ∂L/∂e_j = α_j · g·(h_j − c)      (``score_grad``),      ∂L/∂h_j = α_j g,

  with g = ∂L/∂c. The tests check that the two agree (to 1e-12) and ``benchmarks/bench_read.py``
  measures what the fusion buys.

Masked means not read, for each query on its own: a value holding inf or NaN at a position
that query t may not read reaches neither c_t nor a gradient through query t, also when other
queries read it (with per-query masks (B, T, S)); those that do read it get inf or NaN.
"""
from __future__ import annotations

import numpy as np

from attention.masking import as_mask, check_temperature, window_mask
from attention.shapes import scores_letters, shape_str
import minigrad as mg
from minigrad import functional as F
from minigrad.coerce import pair
from minigrad.nn import Module
from minigrad.tensor import Tensor
from minigrad.xp import once_differentiable


def attend(scores, values, mask=None) -> tuple:
    """α = masked_softmax(e),  c = Σ_j α_j h_j,  composed from minigrad ops.

    Masked means not read, per query: when a value holds inf or NaN (rare),
    c_t = Σ_j α_tj [m_tj] h_j  and e_tj gets exactly 0 gradient where m_tj is False, so such a
    value reaches no query that may not read it (not even as α_tj h_j = 0 · NaN = NaN).

    Returns ``(context, weights)``: (B, D) and (B, S), or (B, T, D) and (B, T, S).
    """
    scores, values, mask, single = _checked("attend", scores, values, mask)
    if mask is not None and not np.isfinite(values.data).all():
        scores = mg.where(mask, scores, 0.0)  # masked scores are not read: their gradient is 0
        weights = F.softmax(scores, mask=mask)                      # (B, [T,] S)
        return _masked_sum(weights, values, mask, single), weights  # (B, [T,] D)
    weights = F.softmax(scores, mask=mask)                          # (B, [T,] S)
    return weighted_sum(weights, values), weights                   # (B, [T,] D)


def read(scores, values, mask=None) -> tuple:
    """The fused read: ``(context, weights)`` as ``attend`` gives them, as one graph node.

    Forward: α = masked softmax(e), c = Σ_j α_j h_j. Backward: ``score_grad`` for the scores
    and ∂L/∂h_j = Σ_t α_tj g_t for the values. ``weights`` is a second, cheap node (the
    softmax VJP on the same α) so a loss may use the weights too. Masked means not read, per
    query: when a value or g is inf or NaN (rare; found from c and g, so the finite path pays
    nothing more), c_t = Σ_j [m_tj] α_tj h_j and ∂L/∂h_j = Σ_t [m_tj] α_tj g_t (``masked_matmul``)
    and ∂L/∂e_tj = 0 where m_tj is False, never 0 · NaN.
    """
    scores, values, mask, single = _checked("read", scores, values, mask)
    a = F.softmax_array(scores.data, -1, mask)                       # (B, [T,] S)
    a3 = a[..., None, :] if single else a                            # (B, T, S)
    h = values.data                                                  # (B, S, D)
    with np.errstate(invalid="ignore"):
        c3 = a3 @ h                                                  # (B, T, D)
    rare = mask is not None and not np.isfinite(c3).all()  # inf/NaN values: read per query
    if rare:
        c3 = masked_matmul(a3, _per_query(mask, a3.shape, single), h)  # (B, T, D)
    c = c3[..., 0, :] if single else c3                              # (B, [T,] D)

    def vjp(g):
        per_query = rare or (mask is not None and not np.isfinite(g).all())  # inf/NaN h or g
        ge = (score_grad(a, h, c, g, mask if per_query else None)
              if scores.requires_grad else None)                     # (B, [T,] S)
        if not values.requires_grad:
            return ge, None
        if per_query:  # Σ_t [m_tj] α_tj g_t: a non-finite g_t reaches only what query t reads
            m3, g3 = _per_query(mask, a3.shape, single), g[..., None, :] if single else g
            return ge, masked_matmul(np.swapaxes(a3, -1, -2), np.swapaxes(m3, -1, -2), g3)
        if single:  # an outer product: broadcasting beats a batch of (S, 1) @ (1, D) matmuls
            return ge, a[..., :, None] * g[..., None, :]              # (B, S, D): α_j g
        return ge, np.swapaxes(a, -1, -2) @ g                         # (B, S, D): Σ_t α_tj g_t

    context = Tensor._from_op(c, (scores, values), once_differentiable(
        vjp, "read", "attention.attend, the composed read (Attention(fused=False))"), "read")
    weights = Tensor._from_op(a, (scores,), lambda xp, g, a, scores: (F.softmax_vjp(a, g),),
                              "read.weights")
    return context, weights


def score_grad(weights, values, context, grad_context, mask=None) -> np.ndarray:
    """∂L/∂e_j = α_j · g·(h_j − c)  (source 004 §7), for all j at once.

    From ∂α_k/∂e_j = α_k(δ_kj − α_j):  ∂c/∂e_j = Σ_k α_k(δ_kj − α_j) h_k = α_j (h_j − c),
    then the chain rule with g = ∂L/∂c. Arrays (or tensors): weights (B, [T,] S), values
    (B, S, D), context and grad_context (B, [T,] D). Masked positions (α_j = 0) get exactly 0,
    and Σ_j ∂L/∂e_j = g·c − g·c Σ_j α_j = 0: shifting every score changes nothing. With
    ``mask`` (True = may be read, broadcastable to the weights) they get exactly 0 also when
    h_j or g holds inf or NaN, where α_j · g·(h_j − c) would be 0 · NaN = NaN.
    """
    a, h, c, g, single = _checked_score_grad(weights, values, context, grad_context)
    if mask is not None:
        mask = as_mask(mask, a.shape, "score_grad")                 # (B, [1|T,] S)
    if single:
        a, c, g = a[..., None, :], c[..., None, :], g[..., None, :]  # add a T axis of 1
    with np.errstate(invalid="ignore"):
        g_dot_h = g @ np.swapaxes(h, -1, -2)                         # (B, T, S): g·h_j
        g_dot_c = np.sum(g * c, axis=-1, keepdims=True)              # (B, T, 1): g·c
        grad = a * (g_dot_h - g_dot_c)                               # (B, T, S)
    grad = grad[..., 0, :] if single else grad                       # (B, [T,] S)
    if mask is not None and not np.isfinite(grad).all():  # masked: 0, whatever h_j and g are
        grad = np.where(mask, grad, 0.0)                             # (B, [T,] S)
    return grad


def masked_matmul(w, m, x) -> np.ndarray:
    """y_t = Σ_j [m_tj] w_tj x_j  for w ≥ 0 and m (…, T, S), x (…, S, D) that may hold inf or
    NaN: x_jd reaches y_td only where m_tj, never as w_tj x_jd = 0 · NaN = NaN elsewhere.

    The finite entries of x go through one matmul. A non-finite x_jd read by row t (m_tj)
    makes y_td what w_tj x_jd makes it: NaN if x_jd is NaN or w_tj = 0, else ±inf, and NaN
    where +inf meets −inf; which of these happen is counted by matmuls of 0/1 arrays, so
    nothing of size (…, T, S, D) is built.
    """
    y = w @ np.where(np.isfinite(x), x, 0)                           # (…, T, D): finite part
    reads = m.astype(x.dtype)                                        # (…, T, S): [m_tj]
    hits = (m & (w > 0)).astype(x.dtype)                             # (…, T, S): [m_tj, w_tj > 0]
    nan = reads @ np.isnan(x) + (reads - hits) @ np.isinf(x)         # (…, T, D): 0 · inf, NaN
    up, down = hits @ (x == np.inf), hits @ (x == -np.inf)           # (…, T, D): +inf, −inf
    special = np.where(up > 0, np.inf, np.where(down > 0, -np.inf, 0.0))  # (…, T, D)
    special[(nan > 0) | ((up > 0) & (down > 0))] = np.nan
    with np.errstate(invalid="ignore"):
        return (y + special).astype(x.dtype, copy=False)             # (…, T, D)


def weighted_sum(weights, values, mask=None) -> Tensor:
    """c = Σ_j α_j h_j as a matmul: (B, S) @ (B, S, D) -> (B, D); (B, T, S) -> (B, T, D).

    With ``mask`` (True = may be read, broadcastable to the weights) a value holding inf or
    NaN reaches only the queries that may read it:  c_t = Σ_j α_tj [m_tj] h_j  (``_masked_sum``,
    taken only when the plain sum is not finite).
    """
    weights, values = pair(weights, values)
    single = weights.ndim == values.ndim - 1
    if single:
        c = (weights.expand_dims(-2) @ values).squeeze(-2)          # (B, D)
    else:
        c = weights @ values                                        # (B, T, D)
    if mask is not None and not np.isfinite(c.data).all():
        return _masked_sum(weights, values, mask, single)           # (B, [T,] D)
    return c


def _masked_sum(weights, values, mask, single: bool) -> Tensor:
    """c_t = Σ_j α_tj [m_tj] h_j, composed: h_j is replaced by 0 wherever query t may not read
    it, in a (B, T, S, D) tensor (only when a value is inf or NaN), so autograd gives the
    values' gradient Σ_t [m_tj] α_tj g_t and the weights' [m_tj] g_t·h_j."""
    m = mask[..., None, :] if single else mask                      # (B, 1|T, S)
    w = weights.expand_dims(-2) if single else weights              # (B, T, S)
    kept = mg.where(m[..., None], values.expand_dims(-3), 0.0)     # (B, T, S, D): [m_tj] h_j
    c = (w.expand_dims(-2) @ kept).squeeze(-2)                     # (B, T, D)
    return c.squeeze(-2) if single else c                           # (B, [T,] D)


def _per_query(mask: np.ndarray, shape: tuple, single: bool) -> np.ndarray:
    """The mask as (B, [h,] T, S) for the weights with a T axis of ``shape``."""
    return np.broadcast_to(mask[..., None, :] if single else mask, shape)  # (B, [h,] T, S)


class Attention(Module):
    """Soft attention with a score module:  e = score(q, h),  α = softmax(e / T),  c = Σ_j α_j v_j.

    ``forward(query, keys, values=None, mask=None, projected=None, position=None, rng=None)
    -> (context, weights)``: query (B, Dq) or (B, T, Dq), keys (B, S, Dk), values (B, S, Dv)
    (default: the keys), mask (B, S) boolean, True = may be attended; ``projected`` from
    ``project_keys(keys)``. ``fused=True`` reads with ``read``, ``fused=False`` with ``attend``.

    Source 003 §6's options (the defaults change nothing):

    * ``temperature`` T:  α_j = exp(e_j / T) / Σ_k exp(e_k / T); T < 1 sharpens, T > 1 flattens.
    * ``dropout`` p, during training only (the module in training mode and ``rng`` given):
      c = Σ_j α̃_j v_j,  α̃_j = α_j m_j / (1 − p),  m_j ~ Bernoulli(1 − p)  (inverted dropout:
      E[α̃_j] = α_j, so evaluation reads with α unchanged). The weights returned are α.
    * ``window`` W (truncated attention): weight 0 wherever |j − t| > W, t = ``position`` (the
      decoder step: an int or (B,) for a query (B, Dq); for (B, T, Dq) 0 … T−1 by default, or
      anything broadcastable to (B, T)).
    """

    def __init__(self, score: Module, fused: bool = True, temperature: float = 1.0,
                 dropout: float = 0.0, window: int | None = None):
        self.score, self.fused = score, fused
        self.temperature = check_temperature("Attention", temperature)
        self.dropout, self.window = _check_options(dropout, window)

    def project_keys(self, keys) -> Tensor:
        """The score's key precomputation, to pass as ``projected`` at every decoder step."""
        return self.score.project_keys(keys)

    def forward(self, query, keys, values=None, mask=None, projected=None, position=None,
                rng=None) -> tuple:
        values = keys if values is None else values
        scores = self.score(query, keys, projected=projected)       # (B, [T,] S)
        if self.temperature != 1.0:
            scores = scores / self.temperature                      # e / T  (B, [T,] S)
        if self.window is not None:
            mask = self._truncated(mask, scores.shape, position)    # (B, [T,] S)
        mask = _checked("Attention", scores, values, mask)[2]      # errors name Attention
        context, weights = (read if self.fused else attend)(scores, values, mask)
        # context (B, [T,] D), weights (B, [T,] S)
        if self.dropout > 0 and self.training and rng is not None:
            kept = F.dropout(weights, self.dropout, rng)             # α ⊙ m / (1 − p)  (B, [T,] S)
            context = weighted_sum(kept, values, mask)              # (B, [T,] D)
        return context, weights

    def _truncated(self, mask, shape: tuple, position) -> np.ndarray:
        """The mask (or all True) and |j − t| ≤ W, broadcast to the scores' shape."""
        if position is None:
            if len(shape) == 2:
                raise ValueError("Attention: window=W with one query per example (B, Dq) needs "
                                 "position, the decoder step t")
            position = np.arange(shape[-2])                          # (T,): t = 0 … T−1
        t = np.asarray(position)                      # (), (B,); or (T,), (B, T) for (B, T, S)
        try:
            near = np.broadcast_to(window_mask(t, shape[-1], self.window), shape)  # (B, [T,] S)
        except ValueError:
            raise ValueError(f"Attention: position of shape {t.shape} does not fit scores "
                             f"{shape_str(shape, scores_letters(len(shape)))}") from None
        if mask is None:
            return near
        return near & as_mask(mask, shape, "Attention")              # (B, [T,] S)


# ---- the checks: each public function validates its inputs once, with these ------------

def check_read(who: str, scores, values, role: str = "scores") -> bool:
    """Scores (B, [T,] S) fit values (B, S, D) with S ≥ 1, or a ValueError naming ``who``;
    True when there is one query per value set (scores (B, S))."""
    def error(why):
        return ValueError(f"{who}: {role} {shape_str(scores.shape, scores_letters(scores.ndim))} "
                          f"vs values {shape_str(values.shape, 'BS')}: {why}")
    if scores.ndim not in (values.ndim - 1, values.ndim) or values.ndim < 3:
        raise error(f"expected {role} (B, S) or (B, T, S) for values (B, S, D)")
    single = scores.ndim == values.ndim - 1
    lead = scores.shape[:-1] if single else scores.shape[:-2]
    if lead != values.shape[:-2] or scores.shape[-1] != values.shape[-2]:
        raise error("batch or source length differs")
    if values.shape[-2] == 0:
        raise error("S = 0: there is no source position to attend to")
    return single


def _checked(who: str, scores, values, mask) -> tuple:
    """``(scores, values, mask, single)``: tensors that fit, the mask ready to broadcast (or
    None), single = one query per value set."""
    scores, values = pair(scores, values)
    single = check_read(who, scores, values)
    if mask is not None:
        mask = as_mask(mask, scores.shape, who)                     # (B, [1|T,] S)
    return scores, values, mask, single


def _checked_score_grad(weights, values, context, grad_context) -> tuple:
    """``score_grad``'s inputs as arrays ``(a, h, c, g, single)`` whose shapes fit."""
    a, h, c, g = (np.asarray(x.data if isinstance(x, Tensor) else x)
                  for x in (weights, values, context, grad_context))
    single = check_read("score_grad", a, h, role="weights")
    for role, x in (("context", c), ("grad_context", g)):
        if x.shape != a.shape[:-1] + h.shape[-1:]:
            raise ValueError(f"score_grad: {role} {x.shape} does not fit weights "
                             f"{shape_str(a.shape, scores_letters(a.ndim))} and values "
                             f"{shape_str(h.shape, 'BS')}: expected {a.shape[:-1] + h.shape[-1:]}")
    return a, h, c, g, single


def _check_options(dropout, window) -> tuple:
    """``Attention``'s dropout p in [0, 1) and window W (None or an int ≥ 0), or a ValueError."""
    if not (isinstance(dropout, (int, float)) and 0 <= dropout < 1):
        raise ValueError(f"Attention: dropout p must be a number in [0, 1), got {dropout!r}")
    if window is not None and (isinstance(window, bool) or not isinstance(window, (int, np.integer))
                               or window < 0):
        raise ValueError(f"Attention: window W must be None or an int >= 0, got {window!r}")
    return float(dropout), window
