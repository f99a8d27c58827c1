"""Luong's local attention (Luong, Pham & Manning 2015, §3.2): a query aligned at p_t reads only
[p_t − D, p_t + D] of the source positions s = 0 … S−1 (B batch, T queries, Dq query width).

* local-m (monotonic): p_t = t, the decoder step (``position``).
* local-p (predictive):  p_t = S · σ(v_pᵀ tanh(W_p q_t))  ∈ (0, S)  (S: each example's real
  tokens), and a gaussian centred on p_t scales the weights:

      a_t(s) = align(q_t, h_s) · exp(−(s − p_t)² / (2σ²)),   σ = D / 2,

  align being the softmax over the window only (the weights do not sum to 1). W_p and v_p
  learn through the gaussian; the window's edges pass no gradient.

Past the source (t ≥ S + D) it reads nothing. Every position is scored and those outside the
window masked: Luong's result, not the compute it saves.
"""
from __future__ import annotations

import numpy as np

from attention.checks import check_options, fit
from attention.read import weighted_sum
from attention.scores import AttentionBase
from minigrad import functional as F, init
from minigrad.nn import Module, Parameter, check_sizes
from minigrad.tensor import Tensor


class LocalAttention(AttentionBase):
    """``Attention``'s ``forward`` and ``step`` with a window of half-width D (``window``)
    around p_t. ``predictive=True`` (local-p) needs ``query_dim``: W_p (Dq, Dq), v_p (Dq,),
    U(±1/√Dq)."""

    def __init__(self, score: Module, window: int, predictive: bool = False,
                 query_dim: int | None = None, rng: np.random.Generator | None = None,
                 dtype=np.float64):
        check_options("LocalAttention", window=window)               # D: an int ≥ 0 (or None)
        if window is None or predictive and window < 1:  # σ = D/2 = 0 would zero every weight
            raise ValueError(f"LocalAttention: window D must be an int >= {int(predictive)}"
                             f"{' for local-p (σ = D/2)' if predictive else ''}, got {window!r}")
        self.score, self.window, self.predictive = score, int(window), predictive
        if predictive:
            if query_dim is None:
                raise ValueError("LocalAttention: predictive=True (local-p) needs query_dim, "
                                 "the width of W_p")
            check_sizes("LocalAttention", query_dim=query_dim)
            rng = init.generator("LocalAttention", rng)
            self.W_p = Parameter(init.uniform(rng, query_dim, (query_dim, query_dim), dtype))
            self.v_p = Parameter(init.uniform(rng, query_dim, (query_dim,), dtype))

    def predict_position(self, query, length) -> Tensor:
        """local-p's p_t: (B,) for a query (B, Dq), (B, T) for (B, T, Dq)."""
        return (F.linear(query, self.W_p).tanh() @ self.v_p).sigmoid() * length  # (B, [T])

    def _check_position(self, query, position, shape: tuple):
        if not self.predictive:
            return super()._check_position(query, position, shape)
        if position is not None:
            raise ValueError("LocalAttention: local-p predicts p_t; do not pass position")
        fit("LocalAttention", W_p=(self.W_p, "Dq Dq"), query=(query, "B T? Dq"))

    def _window(self, query, scores, mask, t) -> tuple:
        if not self.predictive:
            return super()._window(query, scores, mask, t)
        S = scores.shape[-1] if mask is None else mask.sum(-1).astype(scores.dtype)  # per example
        p = self.predict_position(query, S)                                  # p_t (B, [T])
        return super()._window(query, scores, mask, p.data)[0], p

    def _read(self, scores, values, mask, position, rng) -> tuple:
        if not self.predictive:
            return super()._read(scores, values, mask, position, rng)
        off = position.expand_dims(-1) - np.arange(scores.shape[-1])        # p_t − s (B, [T,] S)
        gauss = (-(off ** 2) / (2 * (self.window / 2) ** 2)).exp()           # (B, [T,] S)
        weights = F.softmax_op(scores, -1, mask) * gauss                     # a_t(s) (B, [T,] S)
        return weighted_sum(weights, values), weights                        # (B, [T,] Dv)
