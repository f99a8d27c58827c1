"""Luong's local attention (Luong, Pham & Manning 2015, §3.2): read only a window of the source.

Shape letters: B batch, T queries, S source positions, Dq query width, D window half-width.
Source positions are numbered s = 0 … S−1; a query at aligned position p_t reads the window
[p_t − D, p_t + D] and every position outside it gets weight exactly 0.

* local-m (monotonic): p_t = t, the decoder step (``position``).
* local-p (predictive):  p_t = S · σ(v_pᵀ tanh(W_p q_t))  ∈ (0, S),  and the window weights
  are multiplied by a gaussian centred on p_t:

      a_t(s) = align(q_t, h_s) · exp(−(s − p_t)² / (2σ²)),   σ = D / 2,

  where align is the softmax of the scores over the window only (as in the paper), so the
  weights of local-p do not sum to 1. p_t is differentiable, so W_p and v_p learn through the
  gaussian; the window's edges are a step function of p_t and pass no gradient.

S in p_t is the source length; with a mask it is each example's number of real tokens
(``mask.sum(-1)``), so p_t stays inside the sentence when padding follows it.

local-m's window is cut at the source's ends, as in the paper. A decoder may run past the
source's end (greedy decoding up to ``max_len``): for t ≥ S + D the window holds no source
position, and the query reads nothing -- zero weights and a zero context, like a query whose
keys are all padding. A negative position is an error.

For clarity every position is scored and those outside the window are masked: the result is
Luong's, but the compute that local attention saves on long sources is not saved here.
"""
from __future__ import annotations

import numpy as np

from attention.masking import as_mask, masked_softmax
from attention.shapes import shape_str
from attention.checks import check_masked_keys, check_masked_values
from attention.read import read, weighted_sum
from minigrad import functional as F, init
from minigrad.nn import Module, Parameter, check_sizes
from minigrad.coerce import as_tensor, pair
from minigrad.tensor import Tensor


class LocalAttention(Module):
    """Local attention around p_t with window half-width D (``window``), local-m or local-p.

    ``forward(query, keys, values=None, mask=None, position=None, projected=None)
    -> (context, weights)``. query (B, Dq) or (B, T, Dq); keys (B, S, Dk); values default to
    the keys; mask (B, S) boolean, True = real token. ``position`` (local-m only): the decoder
    step t, an int or an array (B,); for a query (B, T, Dq) it defaults to t = 0 … T−1 and may
    be given as an array broadcastable (NumPy's rules) to (B, T). ``predictive=True`` (local-p)
    needs ``query_dim`` for W_p (Dq, Dq) and v_p (Dq,), initialised U(±1/√Dq). Keys and values
    outside the window or the mask must be finite, as in ``Attention``.
    """

    def __init__(self, score: Module, window: int, predictive: bool = False,
                 query_dim: int | None = None, rng: np.random.Generator | None = None,
                 dtype=np.float64):
        try:
            ok = int(window) == window and window >= 0
        except (TypeError, ValueError):
            ok = False
        if not ok:
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
        """p_t = S · σ(v_pᵀ tanh(W_p q_t)):  (B,) for a query (B, Dq), (B, T) for (B, T, Dq)."""
        query = as_tensor(query)
        if query.shape[-1] != self.W_p.shape[1]:
            letters = "BT"[:query.ndim - 1]
            raise ValueError(f"LocalAttention: query {shape_str(query.shape, letters)} vs W_p "
                             f"expects {self.W_p.shape[1]}")
        return (F.linear(query, self.W_p).tanh() @ self.v_p).sigmoid() * length  # (B, [T])

    def _fixed_position(self, position, shape: tuple, S: int) -> np.ndarray:
        """local-m: p_t = t as an array of the scores' leading shape (B,) or (B, T)."""
        if position is None:
            if len(shape) == 1:
                raise ValueError("LocalAttention: local-m with a query (B, Dq) needs position, "
                                 "the decoder step t")
            return np.broadcast_to(np.arange(shape[1]), shape)            # (B, T): t
        p = np.asarray(position, dtype=float)
        try:
            p = np.broadcast_to(p, shape)                                  # (B, [T])
        except ValueError:
            raise ValueError(f"LocalAttention: position of shape {p.shape} does not fit "
                             f"{shape_str(shape, 'BT')} (an int, (B,) for a query (B, Dq); "
                             f"broadcastable to (B, T) for (B, T, Dq))") from None
        if not np.all(p >= 0):  # also catches NaN
            bad = p[~(p >= 0)].flat[0]
            raise ValueError(f"LocalAttention: position {bad:g} is negative: local-m reads "
                             f"around p_t = t, the decoder step t >= 0 (S={S} source positions, "
                             f"0 … {S - 1})")
        if not np.all(np.isfinite(p) & (p == np.floor(p))):
            bad = p[~(np.isfinite(p) & (p == np.floor(p)))].flat[0]
            raise ValueError(f"LocalAttention: position {bad:g} is not an integer: local-m's "
                             f"p_t = t is a decoder step (S={S} source positions, 0 … {S - 1})")
        return p

    def forward(self, query, keys, values=None, mask=None, position=None, projected=None) -> tuple:
        values = keys if values is None else values
        scores = self.score(query, keys, projected=projected)              # (B, [T,] S)
        S, D = scores.shape[-1], self.window
        s = np.arange(S)                                                    # (S,): positions
        real = (np.ones((1,) * scores.ndim, dtype=bool) if mask is None
                else as_mask(mask, scores.shape, "LocalAttention"))        # (B, [1|T,] S)
        if self.predictive:
            if position is not None:
                raise ValueError("LocalAttention: local-p predicts p_t; do not pass position")
            length = S if mask is None else real.sum(-1).astype(scores.dtype)  # S per example
            p = self.predict_position(query, length)                       # (B, [T])
            in_window = np.abs(s - p.data[..., None]) <= D                  # (B, [T,] S)
            check_masked_keys("LocalAttention", scores, keys, real & in_window)
            align = masked_softmax(scores, real & in_window)                # (B, [T,] S)
            sigma = D / 2
            gauss = (-((p.expand_dims(-1) - s) ** 2) / (2 * sigma ** 2)).exp()  # (B, [T,] S)
            weights = align * gauss                                         # (B, [T,] S)
            context = weighted_sum(*pair(weights, values))                  # (B, [T,] Dv)
            context = check_masked_values("LocalAttention", context, values, real & in_window)
            return context, weights                                         # (B, [T,] Dv)
        p = self._fixed_position(position, scores.shape[:-1], S)            # (B, [T])
        in_window = np.abs(s - p[..., None]) <= D                           # (B, [T,] S)
        check_masked_keys("LocalAttention", scores, keys, real & in_window)
        return read(scores, values, real & in_window)
