"""Scaled dot-product attention and multi-head attention (Vaswani et al. 2017).

Shape letters: B batch, T queries, S keys, E embedding width, h heads, d = E / h head width.

    Attention(Q, K, V) = softmax(Q Kᵀ / √d) V
    MultiHead(Q, K, V) = Concat(head_1, …, head_h) W_o,
    head_i = Attention(Q W_q^i, K W_k^i, V W_v^i)

Masks: True = may be attended. ``MultiHeadAttention``'s ``mask (B, S)`` removes padded keys
for every query; ``causal=True`` lets query t see only keys j ≤ t (self-attention). PyTorch's
``key_padding_mask`` and ``attn_mask`` mean True = ignore, so those names are refused, not
read with the opposite meaning.

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
from attention.checks import check_masked_keys, check_masked_values
from attention.read import read, weighted_sum
from minigrad import functional as F, init
from minigrad.nn import Linear, Module
from minigrad.coerce import as_tensor
from minigrad.tensor import Tensor


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None, *,
                                 rng: np.random.Generator | None = None,
                                 return_weights: bool = False):
    """out = softmax(scale · q kᵀ) v, PyTorch's ``F.scaled_dot_product_attention``; with
    ``return_weights=True`` returns ``(out, weights)``.

    query (B, [h,] T, d), key (B, [h,] S, d), value (B, [h,] S, dv) -> out (B, [h,] T, dv),
    weights α (B, [h,] T, S). ``attn_mask``: boolean, True = takes part in attention (PyTorch's
    boolean mask), broadcast to the scores as in PyTorch (a 2-D one is (T, S); key padding
    (B, S) is passed as (B, 1, S), or (B, 1, 1, S) with heads); a float (additive) mask is
    refused. ``is_causal``: query t sees keys 0..t (PyTorch's top-left alignment when T ≠ S);
    combined with ``attn_mask`` by "and". ``scale`` defaults to 1/√d. Dropout p =
    ``dropout_p`` > 0 (applied whenever given, as PyTorch; needs ``rng``) drops from α before
    the read; the weights returned are α. Keys and values at masked positions must be finite
    (``read``; ``checks.check_masked_keys``).
    """
    q, k, v = _checked_qkv(query, key, value)
    kt = k.swapaxes(-1, -2)                                           # (B, [h,] d, S)
    scores = (q @ kt) / np.sqrt(q.shape[-1]) if scale is None else (q @ kt) * scale  # (B, [h,] T, S)
    T, S = scores.shape[-2:]
    mask = None
    if attn_mask is not None:
        mask = as_mask(attn_mask, scores.shape, "scaled_dot_product_attention",
                       role="attn_mask", broadcast=True)              # (1|B, [1|h,] 1|T, S)
    if is_causal:
        past = np.tril(np.ones((T, S), dtype=bool)).reshape((1,) * (scores.ndim - 2) + (T, S))
        mask = past if mask is None else mask & past                  # (…, T, S)
    check_masked_keys("scaled_dot_product_attention", scores, k, mask, role="k")
    if dropout_p == 0:
        out, weights = read(scores, v, mask)
    else:
        weights = F.softmax(scores, mask=mask)                       # (B, [h,] T, S): α alone
        out = weighted_sum(F.dropout(weights, dropout_p, rng=rng), v)  # (B, [h,] T, dv)
        out = check_masked_values("scaled_dot_product_attention", out, v, mask)
    return (out, weights) if return_weights else out


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
    ``forward(query (B, T, E), key (B, S, E), value (B, S, E), *, mask=None, causal=False,
    rng=None) -> (out (B, T, E), weights (B, h, T, S))``, batch first. ``mask (B, S)``: True =
    the key may be attended (a real token), keyword-only so that PyTorch's positional
    ``key_padding_mask`` (True = ignore) cannot slip in. Self-attention: pass the same tensor
    three times. ``dropout``: attention dropout while training (needs ``rng``), the third
    argument as in ``torch.nn.MultiheadAttention``; ``rng`` (the initial weights) and ``dtype``
    are keyword-only.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, *,
                 rng: np.random.Generator | None = None, dtype=np.float64):
        for name, v in (("embed_dim", embed_dim), ("num_heads", num_heads)):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
                raise ValueError(f"MultiHeadAttention: {name} must be a positive int, got {v!r}")
        if embed_dim % num_heads:
            raise ValueError(f"MultiHeadAttention: embed_dim {embed_dim} must be a multiple of "
                             f"num_heads {num_heads}")
        if not isinstance(dropout, (int, float, np.integer, np.floating)) or not 0 <= dropout < 1:
            hint = " (rng is keyword-only: rng=...)" if isinstance(dropout, np.random.Generator) else ""
            raise ValueError(f"MultiHeadAttention: dropout must be a number in [0, 1), got "
                             f"{dropout!r}{hint}")
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

    def attend(self, query, k, v, *, mask=None, causal: bool = False,
               rng: np.random.Generator | None = None) -> tuple:
        """Attention of ``query (B, T, E)`` over projected heads ``k, v (B, h, S, d)``;
        ``mask (B, S)`` True = the key may be attended."""
        B, T, E = query.shape
        q = self._split(self.W_q(query))                              # (B, h, T, d)
        p = self.dropout if self.training else 0.0
        S = k.shape[-2]
        full = None if mask is None else as_mask(
            mask, (B, S), "MultiHeadAttention", what="the keys").reshape(B, 1, 1, S)  # (B, 1, 1, S)
        if causal:  # the queries are the last T positions (a cached decoder's step)
            past = causal_mask(T, S)                                  # (T, S)
            full = past if full is None else full & past              # (B, 1, T, S)
        heads, weights = scaled_dot_product_attention(q, k, v, full, p, rng=rng,
                                                      return_weights=True)  # (B, h, T, d)
        out = heads.transpose(0, 2, 1, 3).reshape(B, T, E)            # (B, T, E)
        return self.W_o(out), weights                                 # (B, T, E), (B, h, T, S)

    def forward(self, query, key, value, *, mask=None, causal: bool = False,
                rng: np.random.Generator | None = None, key_padding_mask=None,
                attn_mask=None) -> tuple:
        """``mask (B, S)``: True = may be attended. PyTorch's ``key_padding_mask`` and
        ``attn_mask`` (True = ignore) raise a TypeError that says to pass ``mask=~m``."""
        for name, given in (("key_padding_mask", key_padding_mask), ("attn_mask", attn_mask)):
            if given is not None:
                raise TypeError(f"MultiHeadAttention: {name} is PyTorch's (True = ignore) and is "
                                f"not taken; pass mask=~{name} (True = may be attended)")
        query, key, value = self._checked(query, key, value)
        k, v = self.project_kv(key, value)                            # (B, h, S, d) each
        return self.attend(query, k, v, mask=mask, causal=causal, rng=rng)

    def _checked(self, query, key, value) -> tuple:
        """``forward``'s inputs as tensors (B, T, E), (B, S, E), (B, S, E)."""
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
        return query, key, value
