"""Score functions: how well does key h_j match query q?  e_j = score(q, h_j); and ``Attention``,
the module that scores, normalises and reads:  α = softmax(e / T),  c = Σ_j α_j v_j.

Shape letters: B batch, T queries, S keys (source positions), Dq query width, Dk key width,
A attention width. Query ``(B, Dq)`` gives scores ``(B, S)``; query ``(B, T, Dq)`` gives
``(B, T, S)``; keys are ``(B, S, Dk)``.

Every score module has ``project_keys(keys)``: the part of the score that depends on the keys
alone (``W_k h + b`` for additive, ``W h`` for general, the keys themselves for dot). A decoder
calls it once per source batch and passes the result as ``forward(..., projected=...)`` at
every step. Parameters are initialised as PyTorch's ``Linear``: U(−1/√fan_in, 1/√fan_in).

The additive and concat scores end in ``energy(q, k)`` = vᵀ tanh(q + k_j), composed from ops;
``attention/kernels.py`` has a fused drop-in for it (one op with a hand-written backward).
``Attention`` (at the end) wires a score to the read of ``attention/read.py`` and adds
source 003 §6's options: temperature, attention dropout and a truncation window.
"""
from __future__ import annotations

import numpy as np

from attention.checks import check_masked_values, check_options, check_read, checked_mask
from attention.masking import as_mask, check_temperature, window_mask
from attention.read import read_checked, weighted_sum
from attention.shapes import scores_letters, shape_str
from minigrad import functional as F, init
from minigrad.coerce import as_tensor, pair
from minigrad.nn import Module, Parameter, check_sizes
from minigrad.tensor import Tensor


class Score(Module):
    """Base class: input checks, ``project_keys`` (identity here) and the 2-D/3-D query rule."""

    def project_keys(self, keys) -> Tensor:
        """Identity: the dot scores use the keys as they are.  (B, S, Dk)"""
        return as_tensor(keys)

    def _inputs(self, query, keys):
        """Tensors ``(query, keys)`` after checking their ranks and batch sizes."""
        who = type(self).__name__
        query, keys = as_tensor(query), as_tensor(keys)
        if query.ndim not in (2, 3):
            raise ValueError(f"{who}: query must be (B, Dq) or (B, T, Dq), got shape {query.shape}")
        if keys.ndim != 3:
            raise ValueError(f"{who}: keys must be (B, S, Dk), got shape {keys.shape}")
        if query.shape[0] != keys.shape[0]:
            raise ValueError(f"{who}: query {self._q(query)} vs keys "
                             f"{shape_str(keys.shape, 'BS')}: batch sizes differ")
        return query, keys

    @staticmethod
    def _q(query) -> str:
        return shape_str(query.shape, "BT" if query.ndim == 3 else "B")

    def _expect(self, role: str, x, letters: str, weight: str, width: int) -> None:
        """Raise unless the last dimension of ``x`` is ``width`` (what ``weight`` expects)."""
        if x.shape[-1] != width:
            raise ValueError(f"{type(self).__name__}: {role} {shape_str(x.shape, letters)} "
                             f"vs {weight} expects {width}")

    def _projected(self, projected, keys, width: int) -> Tensor:
        """``projected`` checked against the keys: (B, S, width)."""
        projected = as_tensor(projected)
        if projected.shape != keys.shape[:2] + (width,):
            raise ValueError(f"{type(self).__name__}: projected {shape_str(projected.shape, 'BS')} "
                             f"vs keys {shape_str(keys.shape, 'BS')}: expected "
                             f"{shape_str(keys.shape[:2] + (width,), 'BS')} (from project_keys)")
        return projected


def additive(q: Tensor, k: Tensor, v: Tensor, activation: str | None = "tanh") -> Tensor:
    """e_j = vᵀ act(q + k_j) for projected q (B, [T,] A) and k (B, S, A)  -> (B, [T,] S)."""
    if q.ndim == 3:
        k = k.expand_dims(1)                                  # (B, 1, S, A)
    pre = q.expand_dims(-2) + k                               # (B, [T,] S, A)
    hidden = pre.tanh() if activation == "tanh" else pre      # (B, [T,] S, A)
    return hidden @ v                                         # (B, [T,] S)


class AdditiveScore(Score):
    """Bahdanau's additive score, with source 004's explicit bias:

        e_j = vᵀ tanh(W_q q + W_k h_j + b)

    ``W_q (A, Dq)``, ``W_k (A, Dk)``, ``b (A,)``, ``v (A,)``. ``project_keys(h) = W_k h + b``.
    ``activation=None`` is source 004's linear ablation  e_j = vᵀW_q q + vᵀb + vᵀW_k h_j :
    the first two terms are the same for every j and softmax ignores a shift, so the weights
    no longer depend on the query at all.
    """

    def __init__(self, query_dim: int, key_dim: int, attn_dim: int, bias: bool = True,
                 activation: str | None = "tanh", rng: np.random.Generator | None = None,
                 dtype=np.float64):
        check_sizes("AdditiveScore", query_dim=query_dim, key_dim=key_dim, attn_dim=attn_dim)
        if activation not in ("tanh", None):
            raise ValueError(f"AdditiveScore: activation must be 'tanh' or None, got {activation!r}")
        rng = init.generator("AdditiveScore", rng)
        self.activation = activation
        self.W_q = Parameter(init.uniform(rng, query_dim, (attn_dim, query_dim), dtype))
        self.W_k = Parameter(init.uniform(rng, key_dim, (attn_dim, key_dim), dtype))
        self.b = (Parameter(init.uniform(rng, key_dim, (attn_dim,), dtype))  # as W_k's bias
                  if bias else None)
        self.v = Parameter(init.uniform(rng, attn_dim, (attn_dim,), dtype))

    def project_keys(self, keys) -> Tensor:
        """W_k h_j + b for every source position: (B, S, A)."""
        keys = as_tensor(keys)
        self._expect("keys", keys, "BS", "W_k", self.W_k.shape[1])
        return F.linear(keys, self.W_k, self.b)                       # (B, S, A)

    def forward(self, query, keys, projected=None) -> Tensor:
        query, keys = self._inputs(query, keys)
        self._expect("query", query, "BT"[:query.ndim - 1], "W_q", self.W_q.shape[1])
        k = (self.project_keys(keys) if projected is None
             else self._projected(projected, keys, self.W_q.shape[0]))  # (B, S, A)
        q = F.linear(query, self.W_q)                                  # (B, [T,] A)
        return self.energy(q, k)                                       # (B, [T,] S)

    def energy(self, q, k) -> Tensor:
        """e_j = vᵀ tanh(q + k_j) from the projected query q = W_q s (B, [T,] A) and keys
        k_j = W_k h_j + b (B, S, A); Bahdanau calls the scores energies."""
        return additive(q, k, self.v, self.activation)                # (B, [T,] S)


class ConcatScore(Score):
    """Luong's concat score  e_j = vᵀ tanh(W [q; h_j]).

    ``W (A, Dq + Dk)``, ``v (A,)``. Since W [q; h] = W_q q + W_k h with ``W = [W_q | W_k]``,
    it is the additive score without bias, and ``project_keys(h) = W_k h``.
    """

    def __init__(self, query_dim: int, key_dim: int, attn_dim: int,
                 rng: np.random.Generator | None = None, dtype=np.float64):
        check_sizes("ConcatScore", query_dim=query_dim, key_dim=key_dim, attn_dim=attn_dim)
        rng = init.generator("ConcatScore", rng)
        self.query_dim = query_dim
        width = query_dim + key_dim
        self.W = Parameter(init.uniform(rng, width, (attn_dim, width), dtype))
        self.v = Parameter(init.uniform(rng, attn_dim, (attn_dim,), dtype))

    def project_keys(self, keys) -> Tensor:
        """W_k h_j, with W_k the right-hand block of W: (B, S, A)."""
        keys = as_tensor(keys)
        self._expect("keys", keys, "BS", "W[:, Dq:]", self.W.shape[1] - self.query_dim)
        return F.linear(keys, self.W[:, self.query_dim:])              # (B, S, A)

    def forward(self, query, keys, projected=None) -> Tensor:
        query, keys = self._inputs(query, keys)
        self._expect("query", query, "BT"[:query.ndim - 1], "W[:, :Dq]", self.query_dim)
        k = (self.project_keys(keys) if projected is None
             else self._projected(projected, keys, self.W.shape[0]))   # (B, S, A)
        q = F.linear(query, self.W[:, :self.query_dim])                # (B, [T,] A)
        return self.energy(q, k)                                       # (B, [T,] S)

    def energy(self, q, k) -> Tensor:
        """e_j = vᵀ tanh(q + k_j) from the projected query q = W_q s (B, [T,] A) and keys
        k_j = W_k h_j (B, S, A)."""
        return additive(q, k, self.v)                                  # (B, [T,] S)


class DotScore(Score):
    """Luong's dot score  e_j = qᵀ h_j  (query and keys of equal width, no parameters)."""

    def forward(self, query, keys, projected=None) -> Tensor:
        query, keys = self._inputs(query, keys)
        k = keys if projected is None else self._projected(projected, keys, keys.shape[-1])
        if query.shape[-1] != k.shape[-1]:
            raise ValueError(f"{type(self).__name__}: query {self._q(query)} vs keys "
                             f"{shape_str(k.shape, 'BS')}: qᵀh needs equal widths "
                             f"(GeneralScore takes unequal ones)")
        q = query if query.ndim == 3 else query.expand_dims(1)        # (B, T, D)
        e = q @ k.swapaxes(-1, -2)                                     # (B, T, S)
        return e if query.ndim == 3 else e.squeeze(1)                  # (B, [T,] S)


class ScaledDotScore(DotScore):
    """Vaswani's scaled dot score  e_j = qᵀ h_j / √d  (d the key width), or ``/ scale``.

    For q, h with independent N(0, 1) entries Var(qᵀh) = d, so the raw score grows like √d and
    pushes softmax into saturation; dividing by √d brings the variance back to 1.
    """

    def __init__(self, scale: float | None = None):
        if scale is not None and not scale > 0:
            raise ValueError(f"ScaledDotScore: scale must be positive, got {scale}")
        self.scale = scale

    def forward(self, query, keys, projected=None) -> Tensor:
        keys = as_tensor(keys)
        if self.scale is None and keys.shape[-1] == 0:
            raise ValueError(f"ScaledDotScore: keys {shape_str(keys.shape, 'BS')} have width "
                             f"d = 0: nothing to divide by √d")
        scale = np.sqrt(keys.shape[-1]) if self.scale is None else self.scale
        return super().forward(query, keys, projected) / scale       # (B, [T,] S)


class GeneralScore(Score):
    """Luong's general score  e_j = qᵀ W h_j,  ``W (Dq, Dk)``;  ``project_keys(h) = W h``."""

    def __init__(self, query_dim: int, key_dim: int, rng: np.random.Generator | None = None,
                 dtype=np.float64):
        check_sizes("GeneralScore", query_dim=query_dim, key_dim=key_dim)
        rng = init.generator("GeneralScore", rng)
        self.W = Parameter(init.uniform(rng, key_dim, (query_dim, key_dim), dtype))

    def project_keys(self, keys) -> Tensor:
        """W h_j for every source position: (B, S, Dq)."""
        keys = as_tensor(keys)
        self._expect("keys", keys, "BS", "W", self.W.shape[1])
        return F.linear(keys, self.W)                                  # (B, S, Dq)

    def forward(self, query, keys, projected=None) -> Tensor:
        query, keys = self._inputs(query, keys)
        self._expect("query", query, "BT"[:query.ndim - 1], "W", self.W.shape[0])
        k = (self.project_keys(keys) if projected is None
             else self._projected(projected, keys, self.W.shape[0]))   # (B, S, Dq)
        q = query if query.ndim == 3 else query.expand_dims(1)        # (B, T, Dq)
        e = q @ k.swapaxes(-1, -2)                                     # (B, T, S)
        return e if query.ndim == 3 else e.squeeze(1)                  # (B, [T,] S)


class Attention(Module):
    """Soft attention with a score module:  e = score(q, h),  α = softmax(e / T),  c = Σ_j α_j v_j.

    ``forward(query, keys, values=None, mask=None, projected=None, position=None, rng=None)
    -> (context, weights)``: query (B, Dq) or (B, T, Dq), keys (B, S, Dk), values (B, S, Dv)
    (default: the keys), mask (B, S) boolean, True = may be attended; ``projected`` from
    ``project_keys(keys)``. It reads with ``read`` (``attention/read.py``). Keys and values
    at masked positions must be finite (``checks.check_masked_keys``, ``check_masked_values``).

    Source 003 §6's options (the defaults change nothing):

    * ``temperature`` T:  α_j = exp(e_j / T) / Σ_k exp(e_k / T); T < 1 sharpens, T > 1 flattens.
    * ``dropout`` p, during training only (the module in training mode, which then needs
      ``rng``: without one a ValueError, never a silent read without dropout):
      c = Σ_j α̃_j v_j,  α̃_j = α_j m_j / (1 − p),  m_j ~ Bernoulli(1 − p)  (inverted dropout:
      E[α̃_j] = α_j, so evaluation reads with α unchanged). The weights returned are α.
    * ``window`` W (truncated attention): weight 0 wherever |j − t| > W, t = ``position`` (the
      decoder step: an int or (B,) for a query (B, Dq); for (B, T, Dq) 0 … T−1 by default, or
      anything broadcastable to (B, T)).
    """

    def __init__(self, score: Module, temperature: float = 1.0, dropout: float = 0.0,
                 window: int | None = None):
        self.score = score
        self.temperature = check_temperature("Attention", temperature)
        self.dropout, self.window = check_options(dropout, window)

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
        scores, values = pair(scores, values)
        check_read("Attention", scores, values)                     # errors name Attention
        if mask is not None:                                        # keys there: finite
            mask = checked_mask("Attention", mask, scores, keys)    # (B, [1|T,] S)
        if self.dropout > 0 and self.training:                      # read with α̃, return α
            if rng is None:
                raise ValueError(f"Attention: dropout={self.dropout} in training mode needs "
                                 f"rng=np.random.Generator (or call .eval())")
            weights = F.softmax(scores, mask=mask)                   # (B, [T,] S): α
            kept = F.dropout(weights, self.dropout, rng=rng)         # α ⊙ m / (1 − p)  (B, [T,] S)
            context = weighted_sum(kept, values)                    # (B, [T,] Dv)
            return check_masked_values("Attention", context, values, mask), weights
        return read_checked(scores, values, mask, "Attention")      # (B, [T,] Dv), (B, [T,] S)

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
