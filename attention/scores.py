"""Score functions e_j = score(q, h_j), how well key h_j matches query q; and ``Attention``:
α = softmax(e / T),  c = Σ_j α_j v_j  (``attention/read.py``).

Shape letters: B batch, T queries, S keys, Dq query width, Dk key width, A attention width.
A query (B, Dq) gives scores (B, S), a query (B, T, Dq) gives (B, T, S); keys are (B, S, Dk).

A score is  e_j = energy(project_query(q), k_j),  k = project_keys(h)  the part that depends on
the keys alone, which a decoder makes once per source batch and passes as ``projected``.
``forward`` checks what a user hands in; ``step`` assumes it (as ``GRUCell.step``).
Parameters start as PyTorch's ``Linear``: U(−1/√fan_in, 1/√fan_in).
"""
from __future__ import annotations

import numpy as np

from attention.checks import check_masked, check_options, check_position, read_inputs, shape_str
from attention.masking import check_temperature, window_mask
from attention.read import read_op, weighted_sum
from minigrad import functional as F, init
from minigrad.ops import as_tensor
from minigrad.nn import Module, Parameter, check_sizes
from minigrad.tensor import Tensor


class Score(Module):
    """The base class, scoring by the dot product with the keys as they are."""

    def forward(self, query, keys, projected=None) -> Tensor:
        """Scores (B, [T,] S) of a query (B, [T,] Dq) against keys (B, S, Dk), checked."""
        query, keys = as_tensor(query), as_tensor(keys)
        width = self._check(query, keys)                             # of project_keys
        if projected is None:
            return self.step(query, self.project_keys(keys))         # (B, [T,] S)
        projected, want = as_tensor(projected), keys.shape[:2] + (width,)
        if projected.shape != want:
            raise ValueError(f"{type(self).__name__}: projected {shape_str(projected.shape, 'BS')} "
                             f"vs keys {shape_str(keys.shape, 'BS')}: expected "
                             f"{shape_str(want, 'BS')} (from project_keys)")
        return self.step(query, projected)                           # (B, [T,] S)

    def step(self, query, k) -> Tensor:
        """The scores of a query against projected keys k (B, S, ·), unchecked."""
        return self.energy(self.project_query(query), k)

    def project_query(self, query):
        return query

    def project_keys(self, keys) -> Tensor:
        return as_tensor(keys)                                       # (B, S, Dk)

    def energy(self, q, k) -> Tensor:
        """e_j = qᵀ k_j: q (B, [T,] D), k (B, S, D)."""
        return weighted_sum(q, k.swapaxes(-1, -2))                   # (B, [T,] S)

    def _widths(self, keys) -> tuple:
        """(weight reading the query, Dq), (weight reading the keys, Dk), project_keys' width."""
        return (None, keys.shape[-1]), (None, keys.shape[-1]), keys.shape[-1]

    def _check(self, query, keys) -> int:
        """Ranks, batch sizes and widths; returns project_keys' width."""
        who = type(self).__name__
        if query.ndim not in (2, 3):
            raise ValueError(f"{who}: query must be (B, Dq) or (B, T, Dq), got shape {query.shape}")
        if keys.ndim != 3:
            raise ValueError(f"{who}: keys must be (B, S, Dk), got shape {keys.shape}")
        (wq, dq), (wk, dk), width = self._widths(keys)
        batch = query.shape[0] == keys.shape[0]
        if batch and query.shape[-1] == dq and keys.shape[-1] == dk:
            return width
        q, k = shape_str(query.shape, "BT"[:query.ndim - 1]), shape_str(keys.shape, "BS")
        if not batch or wq is None:
            why = ("qᵀh needs equal widths (GeneralScore takes unequal ones)" if batch else
                   "batch sizes differ")
            raise ValueError(f"{who}: query {q} vs keys {k}: {why}")
        raise ValueError(f"{who}: query {q} vs {wq} expects {dq}" if query.shape[-1] != dq else
                         f"{who}: keys {k} vs {wk} expects {dk}")


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

    ``W_q (A, Dq)``, ``W_k (A, Dk)``, ``b (A,)``, ``v (A,)``. ``activation=None`` is source
    004's linear ablation  e_j = vᵀW_q q + vᵀb + vᵀW_k h_j : the first two terms are the same
    for every j and softmax ignores a shift, so the weights no longer depend on the query.
    """

    def __init__(self, query_dim: int, key_dim: int, attn_dim: int, bias: bool = True,
                 activation: str | None = "tanh", rng: np.random.Generator | None = None,
                 dtype=np.float64):
        check_sizes("AdditiveScore", query_dim=query_dim, key_dim=key_dim, attn_dim=attn_dim)
        if activation not in ("tanh", None):
            raise ValueError(f"AdditiveScore: activation must be 'tanh' or None, got "
                             f"{activation!r}")
        rng = init.generator("AdditiveScore", rng)
        self.activation = activation
        self.W_q = Parameter(init.uniform(rng, query_dim, (attn_dim, query_dim), dtype))
        self.W_k = Parameter(init.uniform(rng, key_dim, (attn_dim, key_dim), dtype))
        self.b = (Parameter(init.uniform(rng, key_dim, (attn_dim,), dtype))  # as W_k's bias
                  if bias else None)
        self.v = Parameter(init.uniform(rng, attn_dim, (attn_dim,), dtype))

    def _widths(self, keys) -> tuple:
        return ("W_q", self.W_q.shape[1]), ("W_k", self.W_k.shape[1]), self.W_q.shape[0]

    def project_query(self, query) -> Tensor:
        return F.linear(query, self.W_q)                             # W_q q (B, [T,] A)

    def project_keys(self, keys) -> Tensor:
        return F.linear(keys, self.W_k, self.b)                      # W_k h_j + b (B, S, A)

    def energy(self, q, k) -> Tensor:
        """e_j = vᵀ tanh(q + k_j) (Bahdanau's energies)."""
        return additive(q, k, self.v, self.activation)               # (B, [T,] S)


class ConcatScore(Score):
    """Luong's concat score  e_j = vᵀ tanh(W [q; h_j]),  ``W (A, Dq + Dk)``, ``v (A,)``.
    As W [q; h] = W_q q + W_k h with ``W = [W_q | W_k]``, it is the additive score without bias.
    """

    def __init__(self, query_dim: int, key_dim: int, attn_dim: int,
                 rng: np.random.Generator | None = None, dtype=np.float64):
        check_sizes("ConcatScore", query_dim=query_dim, key_dim=key_dim, attn_dim=attn_dim)
        rng = init.generator("ConcatScore", rng)
        self.query_dim = query_dim
        width = query_dim + key_dim
        self.W = Parameter(init.uniform(rng, width, (attn_dim, width), dtype))
        self.v = Parameter(init.uniform(rng, attn_dim, (attn_dim,), dtype))

    def _widths(self, keys) -> tuple:
        Dq, (A, width) = self.query_dim, self.W.shape
        return ("W[:, :Dq]", Dq), ("W[:, Dq:]", width - Dq), A

    def project_query(self, query) -> Tensor:
        return F.linear(query, self.W[:, :self.query_dim])           # W_q q (B, [T,] A)

    def project_keys(self, keys) -> Tensor:
        return F.linear(keys, self.W[:, self.query_dim:])            # W_k h_j (B, S, A)

    def energy(self, q, k) -> Tensor:
        return additive(q, k, self.v)                                # (B, [T,] S)


class DotScore(Score):
    """Luong's dot score  e_j = qᵀ h_j  (query and keys of equal width, no parameters)."""


class ScaledDotScore(DotScore):
    """Vaswani's  e_j = qᵀ h_j / √d  (or ``/ scale``): for N(0, 1) entries Var(qᵀh) = d, so
    the raw score grows like √d and saturates softmax; / √d brings the variance back to 1."""

    def __init__(self, scale: float | None = None):
        if scale is not None and not scale > 0:
            raise ValueError(f"ScaledDotScore: scale must be positive, got {scale}")
        self.scale = scale

    def _check(self, query, keys) -> int:
        width = super()._check(query, keys)
        if self.scale is None and width == 0:
            raise ValueError(f"ScaledDotScore: keys {shape_str(keys.shape, 'BS')} have width "
                             f"d = 0: nothing to divide by √d")
        return width

    def energy(self, q, k) -> Tensor:
        scale = np.sqrt(k.shape[-1]) if self.scale is None else self.scale
        return super().energy(q, k) / scale                          # (B, [T,] S)


class GeneralScore(Score):
    """Luong's general score  e_j = qᵀ W h_j,  ``W (Dq, Dk)``;  ``project_keys(h) = W h``."""

    def __init__(self, query_dim: int, key_dim: int, rng: np.random.Generator | None = None,
                 dtype=np.float64):
        check_sizes("GeneralScore", query_dim=query_dim, key_dim=key_dim)
        rng = init.generator("GeneralScore", rng)
        self.W = Parameter(init.uniform(rng, key_dim, (query_dim, key_dim), dtype))

    def _widths(self, keys) -> tuple:
        return ("W", self.W.shape[0]), ("W", self.W.shape[1]), self.W.shape[0]

    def project_keys(self, keys) -> Tensor:
        return F.linear(keys, self.W)                                # W h_j (B, S, Dq)


class Attention(Module):
    """Soft attention with a score:  e = score(q, h),  α = softmax(e / T),  c = Σ_j α_j v_j.
    ``forward(query, keys, values=None, mask=None, ...) -> (context, weights)``: query (B, [T,] Dq),
    keys (B, S, Dk), values (B, S, Dv) (default: the keys), mask True = may be attended; keys and
    values at masked positions must be finite; ``projected`` from ``project_keys``. Options
    (003 §6):

    * ``temperature`` T:  α = softmax(e / T), as ``masked_softmax``.
    * ``dropout`` p while training (needs ``rng``):  c = Σ_j α̃_j v_j,  α̃_j = α_j m_j / (1 − p),
      m_j ~ Bernoulli(1 − p), so E[α̃_j] = α_j; the weights returned are α.
    * ``window`` W: α_j = 0 where |j − t| > W, t = ``position``: an int or (B,) for a query
      (B, Dq); for (B, T, Dq) 0 … T−1 by default, or broadcastable to (B, T).
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
        scores = self.score(query, keys, projected=projected)        # (B, [T,] S), checked
        values = keys if values is None else values
        scores, values, mask = read_inputs("Attention", scores, values, mask)  # mask (B, [1|T,] S)
        if self.window is not None:
            position = check_position("Attention", position, scores.shape)  # (B, [T])
            mask = self._truncated(mask, scores.shape, position)     # (B, [T,] S)
        check_masked("Attention", "keys", keys, mask, scores.data)
        check_masked("Attention", "values", values, mask)
        return self._read(scores, values, mask, rng)

    def step(self, query, keys, values=None, mask=None, projected=None, position=None,
             rng=None) -> tuple:
        """``forward`` for a caller that checked its inputs once per source batch (a decoder):
        Tensors, ``projected`` from ``project_keys``, the mask ready to broadcast to the scores
        ((B, S) for a query (B, Dq)), keys and values finite where masked."""
        k = self.score.project_keys(keys) if projected is None else projected
        scores = self.score.step(query, k)                          # (B, [T,] S)
        if self.window is not None:
            mask = self._truncated(mask, scores.shape, position)     # (B, [T,] S)
        return self._read(scores, keys if values is None else values, mask, rng)

    def _read(self, scores, values, mask, rng) -> tuple:
        if self.temperature != 1.0:
            scores = scores / self.temperature                      # e / T  (B, [T,] S)
        if not (self.dropout > 0 and self.training):
            return read_op(scores, values, mask)                    # (B, [T,] Dv), (B, [T,] S)
        if rng is None:
            raise ValueError(f"Attention: dropout={self.dropout} in training mode needs "
                             f"rng=np.random.Generator (or call .eval())")
        weights = F.softmax_op(scores, -1, mask)                     # (B, [T,] S): α
        kept = F.dropout(weights, self.dropout, rng=rng)             # α̃ = α ⊙ m / (1 − p)
        return weighted_sum(kept, values), weights                  # (B, [T,] Dv), α

    def _truncated(self, mask, shape: tuple, position) -> np.ndarray:
        """The mask and |j − t| ≤ W (``window_mask``); for T queries, no position is t = 0 … T−1."""
        t = np.arange(shape[-2]) if position is None else position   # (T,), (B, [T])
        near = window_mask(t, shape[-1], self.window)                # (B|1, [T,] S)
        return near if mask is None else near & mask                # (B, [T,] S)
