"""Luong's local attention (Luong, Pham & Manning 2015, §3.2): read only a window of the source.

Shape letters: B batch, T queries, S source positions s = 0 … S−1, Dq query width, D the
window's half-width. A query aligned at p_t reads [p_t − D, p_t + D]; outside it the weight is 0.

* local-m (monotonic): p_t = t, the decoder step (``position``).
* local-p (predictive):  p_t = S · σ(v_pᵀ tanh(W_p q_t))  ∈ (0, S)  (S: each example's number
  of real tokens), and a gaussian centred on p_t scales the weights:

      a_t(s) = align(q_t, h_s) · exp(−(s − p_t)² / (2σ²)),   σ = D / 2,

  align being the softmax over the window only (as in the paper: the weights do not sum to 1).
  W_p and v_p learn through the gaussian; the window's edges pass no gradient.

A decoder past the source (t ≥ S + D) reads nothing: zero weights and context. Every position
is scored and those outside the window masked: Luong's result, not the compute it saves.
"""
from __future__ import annotations

import numpy as np

from attention.checks import check_masked, check_position, read_inputs, shape_str
from attention.masking import window_mask
from attention.read import read_op, weighted_sum
from minigrad import functional as F, init
from minigrad.ops import as_tensor
from minigrad.nn import Module, Parameter, check_sizes
from minigrad.tensor import Tensor


class LocalAttention(Module):
    """``forward(query, keys, values=None, mask=None, position=None, projected=None)`` as
    ``Attention``'s, with window half-width D (``window``). ``predictive=True`` (local-p) needs
    ``query_dim``: W_p (Dq, Dq), v_p (Dq,), U(±1/√Dq)."""

    def __init__(self, score: Module, window: int, predictive: bool = False,
                 query_dim: int | None = None, rng: np.random.Generator | None = None,
                 dtype=np.float64):
        if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 0:
            raise ValueError(f"LocalAttention: window D must be a non-negative int, got {window!r}")
        if predictive and window < 1:  # σ = D/2 = 0: the gaussian would zero every weight
            raise ValueError(f"LocalAttention: local-p needs window D >= 1 (σ = D/2), got {window}")
        self.score, self.window, self.predictive = score, int(window), predictive
        if predictive:
            if query_dim is None:
                raise ValueError("LocalAttention: predictive=True (local-p) needs query_dim, "
                                 "the width of W_p")
            check_sizes("LocalAttention", query_dim=query_dim)
            rng = init.generator("LocalAttention", rng)
            self.W_p = Parameter(init.uniform(rng, query_dim, (query_dim, query_dim), dtype))
            self.v_p = Parameter(init.uniform(rng, query_dim, (query_dim,), dtype))

    def project_keys(self, keys) -> Tensor:
        """The score's key precomputation, to pass as ``projected`` at every decoder step."""
        return self.score.project_keys(keys)

    def predict_position(self, query, length) -> Tensor:
        """local-p's p_t: (B,) for a query (B, Dq), (B, T) for (B, T, Dq)."""
        return (F.linear(query, self.W_p).tanh() @ self.v_p).sigmoid() * length  # (B, [T])

    def forward(self, query, keys, values=None, mask=None, position=None, projected=None) -> tuple:
        query, values = as_tensor(query), keys if values is None else values
        scores = self.score(query, keys, projected=projected)              # (B, [T,] S), checked
        scores, values, mask = read_inputs("LocalAttention", scores, values, mask)  # (B, [1|T,] S)
        if self.predictive and position is not None:
            raise ValueError("LocalAttention: local-p predicts p_t; do not pass position")
        if self.predictive and query.shape[-1] != self.W_p.shape[1]:
            raise ValueError(f"LocalAttention: query "
                             f"{shape_str(query.shape, 'BT'[:query.ndim - 1])}"
                             f" vs W_p expects {self.W_p.shape[1]}")
        if not self.predictive:
            position = check_position("LocalAttention", position, scores.shape)  # (B, [T])
        return self._read(query, keys, scores, values, mask, position, "LocalAttention")

    def step(self, query, keys, values=None, mask=None, position=None, projected=None) -> tuple:
        k = self.score.project_keys(keys) if projected is None else projected
        scores = self.score.step(query, k)                                  # (B, [T,] S)
        return self._read(query, keys, scores, keys if values is None else values, mask, position)

    def _read(self, query, keys, scores, values, mask, position, who=None) -> tuple:
        """The window (and local-p's gaussian), then the read; ``who``: check what is hidden."""
        S, D = scores.shape[-1], self.window
        if self.predictive:
            length = S if mask is None else mask.sum(-1).astype(scores.dtype)  # S per example
            position = self.predict_position(query, length)                # p_t (B, [T])
        keep = window_mask(getattr(position, "data", position), S, D)      # (B, [T,] S)
        keep = keep if mask is None else keep & mask                        # (B, [T,] S)
        if who is not None:
            check_masked(who, "keys", keys, keep, scores.data)
            check_masked(who, "values", values, keep)
        if not self.predictive:
            return read_op(scores, values, keep)                            # (B, [T,] Dv)
        off = position.expand_dims(-1) - np.arange(S)                      # p_t − s (B, [T,] S)
        gauss = (-(off ** 2) / (2 * (D / 2) ** 2)).exp()                    # (B, [T,] S)
        weights = F.softmax_op(scores, -1, keep) * gauss                    # a_t(s) (B, [T,] S)
        return weighted_sum(weights, values), weights                       # (B, [T,] Dv)
