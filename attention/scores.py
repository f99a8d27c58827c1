"""Score functions e_j = score(q, h_j), how well key h_j matches query q; and ``Attention``:
α = softmax(e / T),  c = Σ_j α_j v_j  (``attention/read.py``).

Shape letters: B batch, T queries, S keys, Dq query width, Dk key width, A attention width.
A score is  e_j = energy(project_query(q), k_j),  k = project_keys(h),  the part that depends on
the keys alone, which a decoder makes once per source batch and passes as ``projected``.
``forward`` checks what a user hands in; ``step`` assumes it. Parameters start as PyTorch's
``Linear``: U(−1/√fan_in, 1/√fan_in).
"""
from __future__ import annotations

import numpy as np

from attention.checks import as_mask, check_masked, check_options, fit, shape_str
from attention.masking import window_mask
from attention.read import read_op, weighted_sum
from minigrad import functional as F, init
from minigrad.ops import as_tensor, pair
from minigrad.nn import Module, Parameter, check_sizes
from minigrad.tensor import Tensor


class Score(Module):
    """The base class, scoring by the dot product with the keys as they are."""

    letters = ("B T? D", "B S D", "B S D")  # ``fit``'s patterns of query, keys, projected keys
    widths = {}                              # and of the weights, by name

    def forward(self, query, keys, projected=None) -> Tensor:
        """Scores (B, [T,] S) of a query (B, [T,] Dq) against keys (B, S, Dk), checked."""
        query, keys = as_tensor(query), as_tensor(keys)
        projected = None if projected is None else as_tensor(projected)
        q, k, p = self.letters
        fit(type(self).__name__, **self._widths(), query=(query, q), keys=(keys, k),
            projected=(projected, p))
        return self.step(query, self.project_keys(keys) if projected is None else projected)

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

    def _widths(self) -> dict:
        return {name: (getattr(self, name), pattern) for name, pattern in self.widths.items()}


def additive(q: Tensor, k: Tensor, v: Tensor, activation: str | None = "tanh") -> Tensor:
    """e_j = vᵀ act(q + k_j) for projected q (B, [T,] A) and k (B, S, A)  -> (B, [T,] S)."""
    if q.ndim == 3:
        k = k.expand_dims(1)                                  # (B, 1, S, A)
    pre = q.expand_dims(-2) + k                               # (B, [T,] S, A)
    hidden = pre.tanh() if activation == "tanh" else pre      # (B, [T,] S, A)
    return hidden @ v                                         # (B, [T,] S)


class AdditiveScore(Score):
    """Bahdanau's additive score with source 004's bias:  e_j = vᵀ tanh(W_q q + W_k h_j + b),
    ``W_q (A, Dq)``, ``W_k (A, Dk)``, ``b (A,)``, ``v (A,)``. ``activation=None`` is 004's
    linear ablation  e_j = vᵀW_q q + vᵀb + vᵀW_k h_j : the first two terms do not depend on j
    and softmax ignores a shift, so the weights no longer depend on the query."""

    letters = ("B T? Dq", "B S Dk", "B S A")
    widths = {"W_q": "A Dq", "W_k": "A Dk"}

    def __init__(self, query_dim: int, key_dim: int, attn_dim: int, bias: bool = True,
                 activation: str | None = "tanh", rng: np.random.Generator | None = None,
                 dtype=np.float64):
        check_sizes("AdditiveScore", query_dim=query_dim, key_dim=key_dim, attn_dim=attn_dim)
        check_options("AdditiveScore", activation=activation)
        rng = init.generator("AdditiveScore", rng)
        self.activation = activation
        self.W_q = Parameter(init.uniform(rng, query_dim, (attn_dim, query_dim), dtype))
        self.W_k = Parameter(init.uniform(rng, key_dim, (attn_dim, key_dim), dtype))
        self.b = (Parameter(init.uniform(rng, key_dim, (attn_dim,), dtype))  # as W_k's bias
                  if bias else None)
        self.v = Parameter(init.uniform(rng, attn_dim, (attn_dim,), dtype))

    def project_query(self, query) -> Tensor:
        return F.linear(query, self.W_q)                             # W_q q (B, [T,] A)

    def project_keys(self, keys) -> Tensor:
        return F.linear(keys, self.W_k, self.b)                      # W_k h_j + b (B, S, A)

    def energy(self, q, k) -> Tensor:
        """e_j = vᵀ tanh(q + k_j) (Bahdanau's energies)."""
        return additive(q, k, self.v, self.activation)               # (B, [T,] S)


class ConcatScore(AdditiveScore):
    """Luong's concat score  e_j = vᵀ tanh(W [q; h_j]),  ``W (A, Dq + Dk)``, ``v (A,)``: as
    W [q; h] = W_q q + W_k h with ``W = [W_q | W_k]``, the additive score without bias."""

    b, activation = None, "tanh"

    def __init__(self, query_dim: int, key_dim: int, attn_dim: int,
                 rng: np.random.Generator | None = None, dtype=np.float64):
        check_sizes("ConcatScore", query_dim=query_dim, key_dim=key_dim, attn_dim=attn_dim)
        rng = init.generator("ConcatScore", rng)
        self.query_dim = query_dim
        width = query_dim + key_dim
        self.W = Parameter(init.uniform(rng, width, (attn_dim, width), dtype))
        self.v = Parameter(init.uniform(rng, attn_dim, (attn_dim,), dtype))

    def _widths(self) -> dict:
        (A, width), Dq = self.W.shape, self.query_dim
        return {"W[:, :Dq]": ((A, Dq), "A Dq"), "W[:, Dq:]": ((A, width - Dq), "A Dk")}

    @property
    def W_q(self) -> Tensor:
        return self.W[:, :self.query_dim]                            # (A, Dq)

    @property
    def W_k(self) -> Tensor:
        return self.W[:, self.query_dim:]                            # (A, Dk)


class DotScore(Score):
    """Luong's dot score  e_j = qᵀ h_j  (query and keys of equal width, no parameters)."""


class ScaledDotScore(DotScore):
    """Vaswani's  e_j = qᵀ h_j / √d  (or ``/ scale``): for N(0, 1) entries Var(qᵀh) = d, so
    the raw score grows like √d and saturates softmax; / √d brings the variance back to 1."""

    def __init__(self, scale: float | None = None):
        check_options("ScaledDotScore", scale=scale)
        self.scale = scale
        self.letters = ("B T? D" + "+" * (scale is None), "B S D", "B S D")  # no √0 to divide by

    def energy(self, q, k) -> Tensor:
        scale = np.sqrt(k.shape[-1]) if self.scale is None else self.scale
        return super().energy(q, k) / scale                          # (B, [T,] S)


class GeneralScore(Score):
    """Luong's general score  e_j = qᵀ W h_j,  ``W (Dq, Dk)``;  ``project_keys(h) = W h``."""

    letters = ("B T? Dq", "B S Dk", "B S Dq")
    widths = {"W": "Dq Dk"}

    def __init__(self, query_dim: int, key_dim: int, rng: np.random.Generator | None = None,
                 dtype=np.float64):
        check_sizes("GeneralScore", query_dim=query_dim, key_dim=key_dim)
        rng = init.generator("GeneralScore", rng)
        self.W = Parameter(init.uniform(rng, key_dim, (query_dim, key_dim), dtype))

    def project_keys(self, keys) -> Tensor:
        return F.linear(keys, self.W)                                # W h_j (B, S, Dq)


class AttentionBase(Module):
    """What ``Attention`` and ``LocalAttention`` share: the scores, a window, the read."""

    temperature, dropout, window = 1.0, 0.0, None

    def project_keys(self, keys) -> Tensor:
        """The score's key precomputation, to pass as ``projected`` at every decoder step."""
        return self.score.project_keys(keys)

    def forward(self, query, keys, values=None, mask=None, projected=None, position=None,
                rng=None) -> tuple:
        who, query = type(self).__name__, as_tensor(query)
        scores = self.score(query, keys, projected=projected)        # (B, [T,] S), checked
        scores, values = pair(scores, keys if values is None else values)
        fit(who, values=(values, "B S+ D"), scores=(scores, "B T? S"))
        mask = None if mask is None else as_mask(mask, scores.shape, who)  # (B, [1|T,] S)
        if self.window is not None:
            position = self._check_position(query, position, scores.shape)  # (B, [T])
            mask, position = self._window(query, scores, mask, position)    # (B, [T,] S)
        check_masked(who, "keys", keys, mask, scores.data)
        check_masked(who, "values", values, mask)
        return self._read(scores, values, mask, position, rng)

    def step(self, query, keys, values=None, mask=None, projected=None, position=None,
             rng=None) -> tuple:
        """``forward`` for a caller that checked its inputs once per source batch (a decoder):
        Tensors, the mask ready to broadcast ((B, S) for a query (B, Dq)), finite where masked."""
        k = self.score.project_keys(keys) if projected is None else projected
        scores = self.score.step(query, k)                          # (B, [T,] S)
        if self.window is not None:
            mask, position = self._window(query, scores, mask, position)    # (B, [T,] S)
        return self._read(scores, keys if values is None else values, mask, position, rng)

    def _check_position(self, query, position, scores: tuple) -> np.ndarray:
        """A window's centre t (local-m's p_t = t, the decoder step) as an array of the scores'
        leading shape (B,) or (B, T); for T queries, None is t = 0 … T−1."""
        who, shape, S = type(self).__name__, scores[:-1], scores[-1]
        if position is None and len(shape) == 1:
            raise ValueError(f"{who}: window with a query (B, Dq) needs position, the step t")
        try:
            t = np.broadcast_to(np.arange(shape[-1]) if position is None else
                                np.asarray(position, dtype=float), shape)  # (B, [T])
        except ValueError:
            raise ValueError(f"{who}: position of shape {np.shape(position)} does not fit "
                             f"{shape_str(shape, 'BT')} (an int or (B,) for a query (B, Dq); "
                             "broadcastable to (B, T) for (B, T, Dq))") from None
        bad = t[~(np.isfinite(t) & (t == np.floor(t)) & (t >= 0))]     # NaN counts as negative
        if bad.size:
            why = "not an integer" if bad[0] >= 0 else "negative"
            raise ValueError(f"{who}: position {bad[0]:g} is {why}: local-m reads around p_t = t, "
                             f"the decoder step t >= 0 (S={S} source positions, 0 … {S - 1})")
        return t

    def _window(self, query, scores, mask, t) -> tuple:
        """The mask and |j − t| ≤ W (``window_mask``), and t; for T queries, no t is 0 … T−1."""
        t = np.arange(scores.shape[-2]) if t is None else t          # (T,), (B, [T])
        near = window_mask(t, scores.shape[-1], self.window)         # (B|1, [T,] S)
        return (near if mask is None else near & mask), t            # (B, [T,] S)

    def _read(self, scores, values, mask, position, rng) -> tuple:
        p = self.dropout if self.training else 0.0
        if p and rng is None:
            raise ValueError(f"Attention: dropout={self.dropout} in training mode needs "
                             f"rng=np.random.Generator (or call .eval())")
        if self.temperature != 1.0:
            scores = scores / self.temperature                      # e / T  (B, [T,] S)
        return read_op(scores, values, mask, p, rng)                # (B, [T,] Dv), (B, [T,] S)


class Attention(AttentionBase):
    """Soft attention with a score:  e = score(q, h),  α = softmax(e / T),  c = Σ_j α_j v_j.
    ``forward(query, keys, values=None, mask=None, ...) -> (context, weights)``: query (B, [T,] Dq),
    keys (B, S, Dk), values (B, S, Dv) (default: the keys), mask True = may be attended (keys and
    values it hides must be finite); ``projected`` from ``project_keys``. Options (003 §6):

    * ``temperature`` T:  α = softmax(e / T), as ``masked_softmax``.
    * ``dropout`` p while training (needs ``rng``):  c = Σ_j α̃_j v_j,  α̃_j = α_j m_j / (1 − p),
      m_j ~ Bernoulli(1 − p), so E[α̃_j] = α_j; the weights returned are α.
    * ``window`` W: α_j = 0 where |j − t| > W, t = ``position`` (needed for a query (B, Dq)).
    """

    def __init__(self, score: Module, temperature: float = 1.0, dropout: float = 0.0,
                 window: int | None = None):
        check_options(type(self).__name__, temperature=temperature, dropout=dropout, window=window)
        self.score = score
        self.temperature = float(temperature)
        self.dropout = float(dropout)
        self.window = window
