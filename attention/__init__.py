"""attention: every attention mechanism of the sources, on minigrad.

Shape letters: B batch, T queries (target length), S source length, D widths.

    from attention import AdditiveScore, Attention
    att = Attention(AdditiveScore(query_dim=64, key_dim=128, attn_dim=64))
    context, weights = att(s_prev, annotations, mask=real_tokens)   # (B, 128), (B, S)

Masks are boolean, True where a position may be attended. ``python -m attention`` runs the
articles' worked examples (``--list`` names them).
"""
from attention.masking import causal_mask, masked_softmax
from attention.scores import (AdditiveScore, Attention, ConcatScore, DotScore, GeneralScore,
                              ScaledDotScore)
from attention.read import attend, read, score_grad
from attention.multihead import MultiHeadAttention, scaled_dot_product_attention
from attention.local import LocalAttention

__all__ = [
    "masked_softmax", "causal_mask",
    "AdditiveScore", "DotScore", "GeneralScore", "ConcatScore", "ScaledDotScore",
    "attend", "read", "score_grad", "Attention",
    "scaled_dot_product_attention", "MultiHeadAttention", "LocalAttention",
]
