"""Masks and the masked softmax. Shape letters: B batch, T queries, S keys.

A mask is boolean, **True where a position may be attended** (a real token), False for padding:
``(B, S)`` for every query, or as many axes as the scores ``(B, [h,] T, S)``, broadcasting to
them (``as_mask`` in ``checks.py``). A query whose every key is masked gets all-zero weights.
"""
from __future__ import annotations

import numpy as np

from attention.checks import as_mask, check_temperature
from minigrad import functional as F
from minigrad.ops import as_tensor
from minigrad.tensor import Tensor


def causal_mask(T: int, S: int | None = None, align: str = "bottom-right",
                mask: np.ndarray | None = None) -> np.ndarray:
    """``(T, S)``, True where query t may see key j (for T = S both are the lower triangle), and
    where ``mask`` (…, T|1, S) is, if one is given:
        "top-left"      j ≤ t           PyTorch's ``is_causal``: query t is position t
        "bottom-right"  j ≤ t + S − T   the queries are the last T of S positions (a cached decoder)
    """
    S = T if S is None else S
    past = np.tril(np.ones((T, S), dtype=bool), k={"top-left": 0, "bottom-right": S - T}[align])
    return past if mask is None else mask & past                     # (…, T, S)


def window_mask(position, S: int, window: int) -> np.ndarray:
    """Truncated attention (source 003 §6, "only a fixed window, such as ±50 words"): True where
    |j − t| ≤ W, for j = 0 … S−1 and positions t of any shape: (…,) -> (…, S)."""
    t = np.asarray(position)[..., None]                              # (…, 1)
    return np.abs(np.arange(S) - t) <= window                        # (…, S)


def masked_softmax(scores, mask=None, axis: int = -1, temperature: float = 1.0) -> Tensor:
    """α = softmax(e / T) over ``axis``, masked entries left out of the sum:

        α_j = exp(e_j / T) / Σ_{k kept} exp(e_k / T)   for kept j,   α_j = 0 for masked j.

    T < 1 sharpens the weights, T > 1 flattens them (source 003 §6); dividing by √d_k is T = √d_k.
    Along another axis than the last, the mask broadcasts as NumPy's (no (B, S) reading)."""
    scores = as_tensor(scores)
    if temperature != 1.0:
        scores = scores / check_temperature("masked_softmax", temperature)  # e / T
    if mask is None or axis not in (-1, scores.ndim - 1):
        return F.softmax(scores, axis=axis, mask=mask)
    return F.softmax_op(scores, -1, as_mask(mask, scores.shape, "masked_softmax"))

