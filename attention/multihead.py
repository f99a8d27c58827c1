"""Scaled dot-product attention and multi-head attention (Vaswani et al. 2017).

Shape letters: B batch, T queries, S keys, E embedding width, h heads, d = E / h head width.

    Attention(Q, K, V) = softmax(Q Kᵀ / √d) V
    MultiHead(Q, K, V) = Concat(head_1, …, head_h) W_o,
    head_i = Attention(Q W_q^i, K W_k^i, V W_v^i)

Masks: True = may be attended. ``key_padding_mask (B, S)`` removes padded keys for every
query; ``causal=True`` lets query t see only keys j ≤ t (self-attention).

Attention dropout (Vaswani et al. 2017, §5.4, as in PyTorch): while training, each weight
α_tj is zeroed with probability p and the rest scaled by 1/(1 − p) before the read, so the
expected context is unchanged: c_t = Σ_j dropout(α)_tj v_j.

Incremental decoding: ``project_kv`` gives the per-head keys and values of new positions,
which a decoder appends to a cache (``concatenate`` along the length axis) and ``attend``
reads, so step t costs O(t), not a re-run of the whole prefix.
"""
from __future__ import annotations

import numpy as np

from attention.masking import as_mask, causal_mask
from attention.shapes import shape_str
from attention.checks import check_masked_values
from attention.read import read, weighted_sum
from minigrad import functional as F, init
from minigrad.nn import Linear, Module
from minigrad.coerce import as_tensor
from minigrad.tensor import Tensor


def scaled_dot_product_attention(q, k, v, mask=None, causal: bool = False,
                                 dropout: float = 0.0, rng: np.random.Generator | None = None) -> tuple:
    """out = softmax(q kᵀ / √d) v  with optional mask and causal mask; returns ``(out, weights)``.

    q (B, [h,] T, d), k (B, [h,] S, d), v (B, [h,] S, dv) -> out (B, [h,] T, dv),
    weights (B, [h,] T, S). ``mask``: (B, S) or broadcastable to the weights; ``causal``: see
    ``causal_mask`` (for T = S, query t sees keys 0..t). Read with ``read``; with ``dropout``
    p > 0 (needs ``rng``) the read uses dropout(α) and the weights returned are α. Values at
    masked positions (the padding, a causal query's future) must be finite, as in ``read``.
    """
    q, k, v = _checked_qkv(q, k, v)
    d = q.shape[-1]
    scores = (q @ k.swapaxes(-1, -2)) / np.sqrt(d)                   # (B, [h,] T, S)
    T, S = scores.shape[-2:]
    if mask is not None:
        mask = as_mask(mask, scores.shape, "scaled_dot_product_attention")
    if causal:
        past = causal_mask(T, S).reshape((1,) * (scores.ndim - 2) + (T, S))  # (1, [1,] T, S)
        mask = past if mask is None else mask & past                  # (B, [h,] T, S)
    if dropout == 0:
        return read(scores, v, mask)
    weights = F.softmax(scores, mask=mask)                           # (B, [h,] T, S): α alone
    out = weighted_sum(F.dropout(weights, dropout, rng), v)           # (B, [h,] T, dv)
    return check_masked_values("scaled_dot_product_attention", out, v, mask), weights


def _checked_qkv(q, k, v) -> tuple:
    """``scaled_dot_product_attention``'s q, k, v as tensors that fit, with d ≥ 1 and S ≥ 1."""
    q, k, v = as_tensor(q), as_tensor(k), as_tensor(v)
    letters = "BhT" if q.ndim == 4 else "BT"
    if not 3 <= q.ndim <= 4 or k.ndim != q.ndim or v.ndim != q.ndim:
        raise ValueError(f"scaled_dot_product_attention: q {q.shape}, k {k.shape} and v "
                         f"{v.shape} must all be (B, T, d) or all (B, h, T, d)")
    if k.shape[-1] != q.shape[-1] or k.shape[:-2] != q.shape[:-2] or v.shape[:-1] != k.shape[:-1]:
        raise ValueError(f"scaled_dot_product_attention: q {shape_str(q.shape, letters)}, "
                         f"k {shape_str(k.shape, letters[:-1] + 'S')} and v "
                         f"{shape_str(v.shape, letters[:-1] + 'S')} do not fit: q and k need "
                         f"the same width d, k and v the same batch and length S")
    if q.shape[-1] == 0:  # q kᵀ would be all zeros and / √0 NaN
        raise ValueError(f"scaled_dot_product_attention: q {shape_str(q.shape, letters)} and "
                         f"k {shape_str(k.shape, letters[:-1] + 'S')} have width d = 0")
    if k.shape[-2] == 0:  # softmax over no keys has no value
        raise ValueError(f"scaled_dot_product_attention: k {shape_str(k.shape, letters[:-1] + 'S')} "
                         f"has S = 0: there is no key to attend to")
    return q, k, v


class MultiHeadAttention(Module):
    """h heads of scaled dot-product attention on learned projections, then W_o.

    ``W_q, W_k, W_v, W_o``: ``Linear(E, E)`` each (PyTorch's initialisation, with bias); head i
    uses columns i·d … (i+1)·d of the projected queries, keys and values.
    ``forward(query (B, T, E), key (B, S, E), value (B, S, E), key_padding_mask=None,
    causal=False, rng=None) -> (out (B, T, E), weights (B, h, T, S))``. Self-attention: pass
    the same tensor three times. ``dropout``: attention dropout while training (needs ``rng``).
    """

    def __init__(self, embed_dim: int, num_heads: int, rng: np.random.Generator | None = None,
                 dtype=np.float64, dropout: float = 0.0):
        for name, v in (("embed_dim", embed_dim), ("num_heads", num_heads)):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
                raise ValueError(f"MultiHeadAttention: {name} must be a positive int, got {v!r}")
        if embed_dim % num_heads:
            raise ValueError(f"MultiHeadAttention: embed_dim {embed_dim} must be a multiple of "
                             f"num_heads {num_heads}")
        if not 0 <= dropout < 1:
            raise ValueError(f"MultiHeadAttention: dropout must be in [0, 1), got {dropout}")
        self.dropout = dropout
        rng = init.generator("MultiHeadAttention", rng)
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.W_q = Linear(embed_dim, embed_dim, rng=rng, dtype=dtype)
        self.W_k = Linear(embed_dim, embed_dim, rng=rng, dtype=dtype)
        self.W_v = Linear(embed_dim, embed_dim, rng=rng, dtype=dtype)
        self.W_o = Linear(embed_dim, embed_dim, rng=rng, dtype=dtype)

    def _split(self, x: Tensor) -> Tensor:
        """(B, L, E) -> (B, h, L, d): head i takes columns i·d … (i+1)·d."""
        B, L, _ = x.shape
        d = self.embed_dim // self.num_heads  # not -1: B = 0 or L = 0 leaves -1 undefined
        return x.reshape(B, L, self.num_heads, d).transpose(0, 2, 1, 3)  # (B, h, L, d)

    def project_kv(self, key, value) -> tuple:
        """The heads' keys and values ``(k, v)``, each (B, h, S, d): what a decoder caches."""
        return self._split(self.W_k(key)), self._split(self.W_v(value))  # (B, h, S, d) each

    def attend(self, query, k, v, key_padding_mask=None, causal: bool = False,
               rng: np.random.Generator | None = None) -> tuple:
        """Attention of ``query (B, T, E)`` over projected heads ``k, v (B, h, S, d)``."""
        B, T, E = query.shape
        q = self._split(self.W_q(query))                              # (B, h, T, d)
        p = self.dropout if self.training else 0.0
        heads, weights = scaled_dot_product_attention(q, k, v, key_padding_mask, causal, p, rng)
        out = heads.transpose(0, 2, 1, 3).reshape(B, T, E)            # (B, T, E)
        return self.W_o(out), weights                                 # (B, T, E), (B, h, T, S)

    def forward(self, query, key, value, key_padding_mask=None, causal: bool = False,
                rng: np.random.Generator | None = None) -> tuple:
        query, key, value, key_padding_mask = self._checked(query, key, value, key_padding_mask)
        k, v = self.project_kv(key, value)                            # (B, h, S, d) each
        return self.attend(query, k, v, key_padding_mask, causal, rng)

    def _checked(self, query, key, value, key_padding_mask) -> tuple:
        """``forward``'s inputs as tensors (B, T, E), (B, S, E), (B, S, E) and the mask (B, S)."""
        query, key, value = as_tensor(query), as_tensor(key), as_tensor(value)
        E = self.embed_dim
        for role, x, letters in (("query", query, "BT"), ("key", key, "BS"),
                                 ("value", value, "BS")):
            if x.ndim != 3 or x.shape[-1] != E:
                raise ValueError(f"MultiHeadAttention: {role} {shape_str(x.shape, letters)} vs "
                                 f"embed_dim {E}: expected (B, {letters[1]}, {E})")
        if key.shape[:2] != value.shape[:2] or key.shape[0] != query.shape[0]:
            raise ValueError(f"MultiHeadAttention: query {shape_str(query.shape, 'BT')}, key "
                             f"{shape_str(key.shape, 'BS')} and value "
                             f"{shape_str(value.shape, 'BS')}: batch sizes, or key and value "
                             f"lengths, differ")
        B, S = query.shape[0], key.shape[1]
        if key_padding_mask is not None:
            key_padding_mask = as_mask(key_padding_mask, (B, S), "MultiHeadAttention",
                                       role="key_padding_mask", what="the keys")  # (B, S)
        return query, key, value, key_padding_mask
