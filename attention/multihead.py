"""Scaled dot-product attention and multi-head attention (Vaswani et al. 2017).

Shape letters: B batch, T queries, S keys, E embedding width, h heads, d = E / h head width.

    Attention(Q, K, V) = softmax(Q Kᵀ / √d) V
    MultiHead(Q, K, V) = Concat(head_1, …, head_h) W_o,
    head_i = Attention(Q W_q^i, K W_k^i, V W_v^i)

Masks: True = may be attended (PyTorch's ``key_padding_mask`` and ``attn_mask``, True = ignore,
are refused). Attention dropout (§5.4): c_t = Σ_j dropout(α)_tj v_j while training.
Incremental decoding: a decoder caches ``project_kv``'s heads and ``attend`` reads them.
"""
from __future__ import annotations

import numpy as np

from attention.checks import as_mask, check_masked, shape_str
from attention.masking import causal_mask
from attention.read import read_op, weighted_sum
from minigrad import functional as F, init
from minigrad.ops import as_tensor
from minigrad.nn import Linear, Module
from minigrad.tensor import Tensor


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None, *,
                                 rng: np.random.Generator | None = None,
                                 return_weights: bool = False):
    """out = softmax(scale · q kᵀ) v, PyTorch's ``F.scaled_dot_product_attention`` (and α with
    ``return_weights``): q (B, [h,] T, d), k (B, [h,] S, d), v (B, [h,] S, dv). ``attn_mask``:
    boolean, True = takes part, broadcast as PyTorch's (2-D is (T, S)). ``is_causal``: the
    top-left ``causal_mask``. ``scale``: 1/√d. ``dropout_p`` > 0 drops from α (needs ``rng``)."""
    who = "scaled_dot_product_attention"
    q, k, v = _checked_qkv(query, key, value)
    T, S = q.shape[-2], k.shape[-2]
    mask = None
    if attn_mask is not None:
        mask = as_mask(attn_mask, q.shape[:-1] + (S,), who, role="attn_mask", broadcast=True)
    if is_causal:
        past = causal_mask(T, S, align="top-left")                    # (T, S)
        mask = past if mask is None else mask & past                  # (…, T, S)
    check_masked(who, "k", k, mask)
    check_masked(who, "values", v, mask)
    out, weights = _attention(q, k, v, mask, dropout_p, scale, rng)
    return (out, weights) if return_weights else out


def _attention(q, k, v, mask, dropout_p: float, scale, rng) -> tuple:
    """``(out, α)`` for checked q, k, v and a mask ready to broadcast to the scores."""
    scores = q @ k.swapaxes(-1, -2)                                   # (B, [h,] T, S)
    scores = scores / np.sqrt(q.shape[-1]) if scale is None else scores * scale
    if dropout_p == 0:
        return read_op(scores, v, mask)                               # (B, [h,] T, dv), α
    weights = F.softmax_op(scores, -1, mask)                          # α (B, [h,] T, S)
    return weighted_sum(F.dropout(weights, dropout_p, rng=rng), v), weights


def _checked_qkv(q, k, v) -> tuple:
    """``scaled_dot_product_attention``'s q, k, v as tensors that fit, with d ≥ 1 and S ≥ 1."""
    q, k, v = as_tensor(q), as_tensor(k), as_tensor(v)
    fit = 3 <= q.ndim <= 4 and k.ndim == v.ndim == q.ndim and k.shape[-1] == q.shape[-1] and \
        k.shape[:-2] == q.shape[:-2] and v.shape[:-1] == k.shape[:-1]
    if fit and q.shape[-1] > 0 and k.shape[-2] > 0:
        return q, k, v
    lead = "Bh" if q.ndim == 4 else "B"
    q_, k_, v_ = (f"{n} {shape_str(x.shape, lead + L)}" for n, x, L in
                  (("q", q, "T"), ("k", k, "S"), ("v", v, "S")))
    why = (f"{q_}, {k_} and {v_} do not fit: expected (B, [h,] T|S, d) and v (B, [h,] S, dv)"
           if not fit else f"{q_} and {k_} have width d = 0" if q.shape[-1] == 0  # kᵀq / √0: NaN
           else f"{k_} has S = 0: there is no key to attend to")  # a softmax over no keys
    raise ValueError(f"scaled_dot_product_attention: {why}")


class MultiHeadAttention(Module):
    """h heads of scaled dot-product attention on ``Linear(E, E)`` projections W_q, W_k, W_v,
    then W_o; head i uses columns i·d … (i+1)·d. ``forward(query (B, T, E), key (B, S, E),
    value (B, S, E), *, mask=None, causal=False, rng=None) -> (out (B, T, E), weights
    (B, h, T, S))``: ``mask (B, S)`` and ``causal`` (the bottom-right ``causal_mask``) are
    keyword-only, so that PyTorch's ``key_padding_mask`` cannot slip in; ``dropout`` is the
    third argument, as in PyTorch."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, *,
                 rng: np.random.Generator | None = None, dtype=np.float64):
        for name, v in (("embed_dim", embed_dim), ("num_heads", num_heads)):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
                raise ValueError(f"MultiHeadAttention: {name} must be a positive int, got {v!r}")
        if embed_dim % num_heads:
            raise ValueError(f"MultiHeadAttention: embed_dim {embed_dim} must be a multiple of "
                             f"num_heads {num_heads}")
        if not isinstance(dropout, (int, float, np.integer, np.floating)) or not 0 <= dropout < 1:
            raise ValueError(f"MultiHeadAttention: dropout must be a number in [0, 1), got "
                             f"{dropout!r} (the third argument; rng is keyword-only: rng=...)")
        rng = init.generator("MultiHeadAttention", rng)
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.W_q, self.W_k, self.W_v, self.W_o = (Linear(embed_dim, embed_dim, rng=rng, dtype=dtype)
                                                  for _ in range(4))

    def _split(self, x: Tensor) -> Tensor:
        """(B, L, E) -> (B, h, L, d): head i takes columns i·d … (i+1)·d."""
        B, L, _ = x.shape
        d = self.embed_dim // self.num_heads  # not -1: B = 0 or L = 0 leaves -1 undefined
        return x.reshape(B, L, self.num_heads, d).transpose(0, 2, 1, 3)  # (B, h, L, d)

    def project_kv(self, key, value) -> tuple:
        """The heads' keys and values ``(k, v)``, each (B, h, S, d): what a decoder caches."""
        return self._split(self.W_k(key)), self._split(self.W_v(value))  # (B, h, S, d) each

    def attend(self, query, k, v, *, mask=None, causal: bool = False,
               rng: np.random.Generator | None = None) -> tuple:
        """``forward`` on the heads' ``k, v (B, h, S, d)`` from ``project_kv``, unchecked."""
        B, T, E = query.shape
        q = self._split(self.W_q(query))                              # (B, h, T, d)
        p = self.dropout if self.training else 0.0
        full = self._mask(mask, causal, T, k.shape[-2])               # (B|1, 1, 1|T, S)
        heads, weights = _attention(q, k, v, full, p, None, rng)      # (B, h, T, d)
        out = heads.transpose(0, 2, 1, 3).reshape(B, T, E)            # (B, T, E)
        return self.W_o(out), weights                                 # (B, T, E), (B, h, T, S)

    @staticmethod
    def _mask(mask, causal: bool, T: int, S: int):
        """Key padding (B, S) and, with ``causal``, the bottom-right causal mask; or None."""
        full = None if mask is None else mask[:, None, None, :]       # (B, 1, 1, S)
        if causal:
            past = causal_mask(T, S, align="bottom-right")            # (T, S)
            full = past if full is None else full & past              # (B, 1, T, S)
        return full

    def forward(self, query, key, value, *, mask=None, causal: bool = False,
                rng: np.random.Generator | None = None, key_padding_mask=None,
                attn_mask=None) -> tuple:
        for name, given in (("key_padding_mask", key_padding_mask), ("attn_mask", attn_mask)):
            if given is not None:
                raise TypeError(f"MultiHeadAttention: {name} is PyTorch's (True = ignore) and is "
                                f"not taken; pass mask=~{name} (True = may be attended)")
        query, key, value = self._checked(query, key, value)
        if mask is not None:
            mask = as_mask(mask, key.shape[:2], "MultiHeadAttention", what="the keys")  # (B, S)
        k, v = self.project_kv(key, value)                            # (B, h, S, d) each
        hidden = self._mask(mask, causal, query.shape[1], key.shape[1])
        check_masked("MultiHeadAttention", "k", k, hidden)
        check_masked("MultiHeadAttention", "values", v, hidden)
        return self.attend(query, k, v, mask=mask, causal=causal, rng=rng)

    def _checked(self, query, key, value) -> tuple:
        """``forward``'s inputs as tensors (B, T, E), (B, S, E), (B, S, E)."""
        query, key, value = as_tensor(query), as_tensor(key), as_tensor(value)
        E = self.embed_dim
        for role, x, L in (("query", query, "T"), ("key", key, "S"), ("value", value, "S")):
            if x.ndim != 3 or x.shape[-1] != E:
                raise ValueError(f"MultiHeadAttention: {role} {shape_str(x.shape, 'B' + L)} vs "
                                 f"embed_dim {E}: expected (B, {L}, {E})")
        if key.shape[:2] != value.shape[:2] or key.shape[0] != query.shape[0]:
            q, k, v = (shape_str(x.shape, L)
                       for x, L in ((query, "BT"), (key, "BS"), (value, "BS")))
            raise ValueError(f"MultiHeadAttention: query {q}, key {k} and value {v}: batch sizes, "
                             "or key and value lengths, differ")
        return query, key, value
