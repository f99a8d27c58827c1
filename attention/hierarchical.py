"""Hierarchical attention (source 003 §6, experience three; Yang et al. 2016, hierarchical
attention networks): read the words of each sentence into a sentence vector, then the sentence
vectors into one document vector.

Shape letters: B documents, K sentences per document, L words per sentence, D width, A the
scores' attention width.

    word level:      α_kl = softmax_l(score(u_w, h_kl)),    s_k = Σ_l α_kl h_kl
    sentence level:  β_k  = softmax_k(score(u_s, s_k)),     d   = Σ_k β_k s_k

u_w and u_s are learned query vectors, one per level ("which word / which sentence is
informative here"), each read with an additive score, as Yang et al. A sentence with no real
word reads zeros and is masked at the sentence level.
"""
from __future__ import annotations

import numpy as np

from attention.checks import check_masked
from attention.scores import AdditiveScore, Attention
from minigrad import init
from minigrad.ops import as_tensor
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
        h = as_tensor(h)
        if h.ndim != 4 or h.shape[-1] != self.u_word.shape[0]:
            raise ValueError(f"HierarchicalAttention: word vectors must be (B, K, L, D) with "
                             f"D = {self.u_word.shape[0]}, got shape {h.shape}")
        B, K, L, D = h.shape
        mask = np.ones((B, K, L), bool) if mask is None else np.asarray(mask)
        if mask.dtype != bool or mask.shape != (B, K, L):
            raise ValueError(f"HierarchicalAttention: mask must be boolean (B, K, L) = "
                             f"{(B, K, L)}, got {mask.dtype} {mask.shape}")
        words, real = h.reshape(B * K, L, D), mask.reshape(B * K, L)         # (B·K, L, D), (B·K, L)
        check_masked("HierarchicalAttention", "words", words, real)
        u_w = broadcast_to(self.u_word, (B * K, D))                           # (B·K, D)
        s, alpha = self.word.step(u_w, words, mask=real)                      # (B·K, D), (B·K, L)
        u_s = broadcast_to(self.u_sentence, (B, D))                           # (B, D)
        d, beta = self.sentence.step(u_s, s.reshape(B, K, D),
                                     mask=mask.any(axis=-1))                  # (B, D), (B, K)
        return d, alpha.reshape(B, K, L), beta
