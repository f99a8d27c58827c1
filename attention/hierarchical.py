"""Hierarchical attention (source 003 §6; Yang et al. 2016): read the words of each sentence
into a sentence vector, then the sentence vectors into one document vector.
Shape letters: B documents, K sentences, L words per sentence, D width.

    word level:      α_kl = softmax_l(score(u_w, h_kl)),    s_k = Σ_l α_kl h_kl
    sentence level:  β_k  = softmax_k(score(u_s, s_k)),     d   = Σ_k β_k s_k

u_w and u_s are learned queries, one per level, each read with an additive score. A sentence
with no real word reads zeros and is masked at the sentence level.
"""
from __future__ import annotations

import numpy as np

from attention.checks import check_masked, fit
from attention.scores import AdditiveScore, Attention
from minigrad import init
from minigrad.ops import as_tensor, boolean_mask
from minigrad.nn import Module, Parameter, check_sizes
from minigrad.shape_ops import broadcast_to


class HierarchicalAttention(Module):
    """``forward(h, mask=None) -> (d, alpha, beta)``: word vectors h (B, K, L, D), mask (B, K, L)
    boolean (True = a real word); the document vector d (B, D), word weights α (B, K, L) and
    sentence weights β (B, K)."""

    def __init__(self, dim: int, attn_dim: int, rng: np.random.Generator | None = None,
                 dtype=np.float64):
        check_sizes("HierarchicalAttention", dim=dim, attn_dim=attn_dim)
        rng = init.generator("HierarchicalAttention", rng)
        self.word = Attention(AdditiveScore(dim, dim, attn_dim, rng=rng, dtype=dtype))
        self.sentence = Attention(AdditiveScore(dim, dim, attn_dim, rng=rng, dtype=dtype))
        self.u_word = Parameter(init.uniform(rng, dim, (dim,), dtype))      # u_w (D,)
        self.u_sentence = Parameter(init.uniform(rng, dim, (dim,), dtype))  # u_s (D,)

    def forward(self, h, mask=None) -> tuple:
        who, h = "HierarchicalAttention", as_tensor(h)
        mask = None if mask is None else boolean_mask(who, "mask", mask)
        fit(who, D=self.u_word.shape[0], h=(h, "B K L D"), mask=(mask, "B K L"))
        B, K, L, D = h.shape
        mask = np.ones((B, K, L), bool) if mask is None else mask
        words, real = h.reshape(B * K, L, D), mask.reshape(B * K, L)         # (B·K, L, D), (B·K, L)
        check_masked(who, "words", words, real)
        u_w = broadcast_to(self.u_word, (B * K, D))                           # (B·K, D)
        s, alpha = self.word.step(u_w, words, mask=real)                      # (B·K, D), (B·K, L)
        u_s = broadcast_to(self.u_sentence, (B, D))                           # (B, D)
        d, beta = self.sentence.step(u_s, s.reshape(B, K, D),
                                     mask=mask.any(axis=-1))                  # (B, D), (B, K)
        return d, alpha.reshape(B, K, L), beta
