"""The Transformer's layers, pre-norm (Xiong et al. 2020), on ``attention.MultiHeadAttention``.
Shape letters: B batch, S source length, T target length, D model width, F feed-forward
width, h heads, d = D / h, t the decoder step (cached positions).

Every sub-layer is a residual around a normalised input, x ← x + Sublayer(LN(x)), so the
identity path is never normalised away and training is stable without a learning-rate warm-up::

    encoder:  x ← x + SelfAttn(LN(x), key padding)           then  x ← x + FFN(LN(x))
    decoder:  y ← y + SelfAttn(LN(y), causal)
              y ← y + CrossAttn(LN(y), memory, key padding)  then  y ← y + FFN(LN(y))
"""
from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad.nn import LayerNorm, Linear, Module, check_sizes
from minigrad.nn_ops import gelu

from attention import MultiHeadAttention
from attention.checks import check_choice, check_masked, fit
from attention.masking import causal_mask

ACTIVATIONS = {"relu": mg.relu, "gelu": gelu}


class FeedForward(Module):
    """FFN(x) = W_2 act(W_1 x + b_1) + b_2, (…, D) -> (…, D), at every position alike."""

    def __init__(self, dim: int, hidden: int, activation: str = "relu",
                 rng: np.random.Generator | None = None, dtype=np.float64):
        check_sizes("FeedForward", dim=dim, hidden=hidden)
        check_choice("FeedForward", "activation", activation, tuple(ACTIVATIONS))
        self.activation = activation
        self.fc1 = Linear(dim, hidden, rng=rng, dtype=dtype)
        self.fc2 = Linear(hidden, dim, rng=rng, dtype=dtype)

    def forward(self, x):
        return self.fc2(ACTIVATIONS[self.activation](self.fc1(x)))      # (…, D)


class EncoderLayer(Module):
    def __init__(self, dim: int, heads: int, ff: int, dropout: float = 0.0,
                 activation: str = "relu", rng=None, dtype=np.float64):
        self.norm1 = LayerNorm(dim, dtype=dtype)
        self.self_attn = MultiHeadAttention(dim, heads, dropout, rng=rng, dtype=dtype)
        self.norm2 = LayerNorm(dim, dtype=dtype)
        self.ff = FeedForward(dim, ff, activation, rng=rng, dtype=dtype)

    def forward(self, x, mask, rng=None) -> tuple:
        """x (B, S, D), mask (B, S) True = real -> (x (B, S, D), weights (B, h, S, S))."""
        h = self.norm1(x)                                                # (B, S, D)
        a, weights = self.self_attn(h, h, h, mask=mask, rng=rng)         # (B, S, D)
        x = x + a                                                        # (B, S, D)
        return x + self.ff(self.norm2(x)), weights                       # (B, S, D)


class DecoderLayer(Module):
    def __init__(self, dim: int, heads: int, ff: int, dropout: float = 0.0,
                 activation: str = "relu", rng=None, dtype=np.float64):
        self.norm1 = LayerNorm(dim, dtype=dtype)
        self.self_attn = MultiHeadAttention(dim, heads, dropout, rng=rng, dtype=dtype)
        self.norm2 = LayerNorm(dim, dtype=dtype)
        self.cross_attn = MultiHeadAttention(dim, heads, dropout, rng=rng, dtype=dtype)
        self.norm3 = LayerNorm(dim, dtype=dtype)
        self.ff = FeedForward(dim, ff, activation, rng=rng, dtype=dtype)

    def forward(self, y, memory_kv, mask, rng=None, cache=None) -> tuple:
        """y (B, T, D): the T positions after the t of ``cache = (k, v)``, each (B, h, t, d)
        (None: t = 0, all T teacher-forced at once), attending to themselves and the cache
        (causal, bottom-right) and to ``memory_kv``, the cross keys and values (B, h, S, d) from
        ``cross_attn.project_kv``. Returns (y (B, T, D), the cache grown to t + T, self weights
        (B, h, T, t + T), cross weights (B, h, T, S))."""
        fit("DecoderLayer", D=self.self_attn.embed_dim, y=(y, "B T D"))  # not an unpack error
        h = self.norm1(y)                                                # (B, T, D)
        k, v = self.self_attn.project_kv(h, h)                           # (B, h, T, d) each
        if cache is not None:                                            # (B, h, t + T, d) each
            k, v = (mg.concatenate([old, new], axis=2) for old, new in zip(cache, (k, v)))
        else:  # the full pass: nothing hidden from a query may be inf or NaN (0 · inf = NaN)
            future = causal_mask(y.shape[1])                             # (T, T): False = hidden
            check_masked("DecoderLayer", "k", k, future)
            check_masked("DecoderLayer", "values", v, future)
        a, self_weights = self.self_attn.attend(h, k, v, causal=True, rng=rng)  # (B, T, D)
        y = y + a                                                        # (B, T, D)
        c, cross_weights = self.cross_attn.attend(self.norm2(y), *memory_kv, mask=mask,
                                                  rng=rng)               # (B, T, D), (B, h, T, S)
        y = y + c                                                        # (B, T, D)
        return y + self.ff(self.norm3(y)), (k, v), self_weights, cross_weights
