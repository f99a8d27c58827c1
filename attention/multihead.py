"""Scaled dot-product attention and multi-head attention (Vaswani et al. 2017).

Shape letters: B batch, T queries, S keys, E embedding width, h heads, d = E / h head width.

    Attention(Q, K, V) = softmax(Q Kᵀ / √d) V
    MultiHead(Q, K, V) = Concat(head_1, …, head_h) W_o,
    head_i = Attention(Q W_q^i, K W_k^i, V W_v^i)

Masks: True = may be attended (PyTorch's ``key_padding_mask`` and ``attn_mask``, True = ignore,
are refused). Attention dropout (§5.4): c_t = Σ_j dropout(α)_tj v_j while training.
"""
from __future__ import annotations

import numpy as np

from attention.checks import as_mask, check_masked, check_options, fit
from attention.masking import causal_mask
from attention.read import read_op
from minigrad import init
from minigrad.ops import as_tensor
from minigrad.nn import Linear, Module, check_sizes
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
    q, k, v = as_tensor(query), as_tensor(key), as_tensor(value)
    fit(who, q=(q, "B h? T d+"), k=(k, "B h? S+ d"), v=(v, "B h? S dv"))
    T, S = q.shape[-2], k.shape[-2]
    if scale is not None and not np.isfinite(scale):  # inf · 0 = NaN in every weight
        raise ValueError(f"{who}: scale must be a finite number (None: 1/√d), got {scale}")
    mask = None if attn_mask is None else as_mask(attn_mask, q.shape[:-1] + (S,), who,
                                                  role="attn_mask", broadcast=True)  # (…, T, S)
    if is_causal:
        mask = causal_mask(T, S, align="top-left", mask=mask)         # (…, T, S)
    check_masked(who, "k", k, mask)
    check_masked(who, "values", v, mask)
    out, weights = _attention(q, k, v, mask, dropout_p, scale, rng)
    return (out, weights) if return_weights else out


def _attention(q, k, v, mask, dropout_p: float, scale, rng) -> tuple:
    """``(out, α)`` for checked q, k, v and a mask ready to broadcast to the scores."""
    scores = q @ k.swapaxes(-1, -2)                                   # (B, [h,] T, S)
    scores = scores / np.sqrt(q.shape[-1]) if scale is None else scores * scale
    return read_op(scores, v, mask, dropout_p, rng)                   # (B, [h,] T, dv), α


class MultiHeadAttention(Module):
    """h heads of scaled dot-product attention on ``Linear(E, E)`` projections W_q, W_k, W_v,
    then W_o; head i uses columns i·d … (i+1)·d. ``forward(query (B, T, E), key (B, S, E),
    value (B, S, E), *, mask=None, causal=False, rng=None) -> (out (B, T, E), weights
    (B, h, T, S))``: ``mask (B, S)`` and ``causal`` (bottom-right) are keyword-only, so that
    PyTorch's ``key_padding_mask`` cannot slip in."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, *,
                 rng: np.random.Generator | None = None, dtype=np.float64):
        check_sizes("MultiHeadAttention", embed_dim=embed_dim, num_heads=num_heads)
        if embed_dim % num_heads:
            raise ValueError(f"MultiHeadAttention: embed_dim {embed_dim} must be a multiple of "
                             f"num_heads {num_heads}")
        check_options("MultiHeadAttention", dropout=dropout)
        rng = init.generator("MultiHeadAttention", rng)
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.dropout = float(dropout)
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
        return causal_mask(T, S, mask=full) if causal else full       # (B|1, 1, 1|T, S)

    def forward(self, query, key, value, *, mask=None, causal: bool = False,
                rng: np.random.Generator | None = None, key_padding_mask=None,
                attn_mask=None) -> tuple:
        for name, given in (("key_padding_mask", key_padding_mask), ("attn_mask", attn_mask)):
            if given is not None:
                raise TypeError(f"MultiHeadAttention: {name} is PyTorch's (True = ignore) and is "
                                f"not taken; pass mask=~{name} (True = may be attended)")
        who = "MultiHeadAttention"
        query, key, value = as_tensor(query), as_tensor(key), as_tensor(value)
        fit(who, E=self.embed_dim, query=(query, "B T E"), key=(key, "B S E"),
            value=(value, "B S E"))
        if mask is not None:
            mask = as_mask(mask, key.shape[:2], who, what="the keys")   # (B, S)
        k, v = self.project_kv(key, value)                            # (B, h, S, d) each
        hidden = self._mask(mask, causal, query.shape[1], key.shape[1])
        check_masked(who, "k", k, hidden)
        check_masked(who, "values", v, hidden)
        return self.attend(query, k, v, mask=mask, causal=causal, rng=rng)
