"""Masks and the masked softmax.

Shape letters: B batch, T queries (target length), S keys (source length).

A mask is a boolean array, **True where a position may be attended** (a real token) and False
for padding. Scores are ``(B, S)`` (one query per example) or ``(B, T, S)``, or
``(B, h, T, S)`` with heads. A mask is either ``(B, S)`` -- the same padding for every query --
or has as many axes as the scores and broadcasts to them (``(B, T, S)``, ``(B, 1, S)``,
``(1, T, S)`` …). A query whose every key is masked gets all-zero weights: never NaN.

A 2-D mask is always ``(B, S)`` key padding, also when T happens to equal B: a per-query
``(T, S)`` mask (causal, say) must be given with a leading 1, as ``(1, T, S)``. Any other
shape raises ``ValueError``.
"""
from __future__ import annotations

import numpy as np

from attention.shapes import scores_letters, shape_str
from minigrad import functional as F
from minigrad.coerce import as_tensor
from minigrad.tensor import Tensor


def as_mask(mask, scores_shape: tuple, who: str, role: str = "mask",
            what: str = "scores", broadcast: bool = False) -> np.ndarray:
    """Check ``mask`` (True = may be attended) against the scores' shape and return it ready to
    broadcast against them.

    A ``(B, S)`` mask is given singleton axes in between: ``(B, 1, S)`` for ``(B, T, S)``
    scores, ``(B, 1, 1, S)`` for ``(B, h, T, S)``; a 2-D mask is never read as ``(T, S)``,
    even when B == T (pass ``(1, T, S)`` for that). With ``broadcast=True`` (PyTorch's rule for
    ``scaled_dot_product_attention``'s ``attn_mask``) there is no (B, S) reading: any mask that
    broadcasts to the scores is taken, a 2-D one as ``(T, S)``, and given leading axes.
    Raises ``ValueError`` naming ``who``, the role and both shapes (``what`` names the second)
    when the mask is not boolean or does not fit.
    """
    mask = np.asarray(mask.data if isinstance(mask, Tensor) else mask)
    nd, B, S = len(scores_shape), scores_shape[0], scores_shape[-1]
    if mask.dtype != bool:
        raise ValueError(f"{who}: {role} must be a boolean array (True = may be attended), "
                         f"got dtype {mask.dtype}")
    if broadcast and mask.ndim <= nd and all(m in (1, n) for m, n in
                                             zip(mask.shape[::-1], scores_shape[::-1])):
        return mask.reshape((1,) * (nd - mask.ndim) + mask.shape)
    if not broadcast and mask.shape == (B, S):
        return mask.reshape((B,) + (1,) * (nd - 2) + (S,))
    if not broadcast and nd > 2 and mask.ndim == nd and all(
            m in (1, n) for m, n in zip(mask.shape, scores_shape)):
        return mask
    refuse_mask(mask, scores_shape, who, role, what, broadcast)


def refuse_mask(mask, scores_shape: tuple, who: str, role: str, what: str, broadcast: bool):
    """The ValueError of ``as_mask`` for a mask that does not fit the scores."""
    nd, B, S = len(scores_shape), scores_shape[0], scores_shape[-1]
    letters = scores_letters(nd)
    if broadcast:
        raise ValueError(f"{who}: {role} {tuple(mask.shape)} does not broadcast to {what} "
                         f"{shape_str(scores_shape, letters)} (key padding (B, S) "
                         f"is ({B}, 1, {S}) here)")
    also = f" or {nd} axes broadcastable to {shape_str(scores_shape, letters)}" if nd > 2 else ""
    if nd > 2 and mask.ndim == 2:
        also += "; a 2-D mask is (B, S) key padding; give a per-query (T, S) mask as (1, T, S)"
    raise ValueError(f"{who}: {role} {tuple(mask.shape)} does not fit {what} "
                     f"{shape_str(scores_shape, letters)}: expected (B, S) = ({B}, {S}){also}")


def causal_mask(T: int, S: int | None = None) -> np.ndarray:
    """``(T, S)`` boolean: query t may see key j when j ≤ t + (S − T).

    For T = S this is the lower triangle (each position sees itself and the past). When there
    are more keys than queries the queries are taken to be the *last* T positions.
    """
    S = T if S is None else S
    return np.tril(np.ones((T, S), dtype=bool), k=S - T)


def window_mask(position, S: int, window: int) -> np.ndarray:
    """Truncated attention (source 003 §6, "only a fixed window, such as ±50 words"):
    True where |j − t| ≤ W, for source positions j = 0 … S−1 and positions t of any shape:
    (…,) -> (…, S). Positions past S + W keep nothing (their row reads zeros)."""
    t = np.asarray(position)[..., None]                              # (…, 1)
    return np.abs(np.arange(S) - t) <= window                        # (…, S)


def masked_softmax(scores, mask=None, axis: int = -1, temperature: float = 1.0) -> Tensor:
    """α = softmax(e / T) over ``axis`` with masked entries left out of the sum (weight 0).

        α_j = exp(e_j / T) / Σ_{k kept} exp(e_k / T)   for kept j,   α_j = 0 for masked j.

    ``mask``: boolean, True = may be attended; ``(B, S)`` or broadcastable to the scores (see
    the module docstring). A row with every entry masked is all zeros, with zero gradient.
    ``temperature`` T > 0 (source 003 §6): T < 1 sharpens the weights (a smaller divisor
    spreads the scores apart), T > 1 flattens them; dividing by √d_k is T = √d_k.
    """
    scores = as_tensor(scores)
    if temperature != 1.0:
        scores = scores / check_temperature("masked_softmax", temperature)  # e / T
    if mask is not None:
        if axis in (-1, scores.ndim - 1):
            mask = as_mask(mask, scores.shape, "masked_softmax")
        else:  # along another axis the (B, S) convention does not apply: plain broadcasting
            mask = np.asarray(mask.data if isinstance(mask, Tensor) else mask)
    return F.softmax(scores, axis=axis, mask=mask)


def check_temperature(who: str, temperature) -> float:
    """``temperature`` as a float, or a ValueError naming ``who``: it must be finite and > 0."""
    try:
        T = float(temperature)
    except (TypeError, ValueError):
        T = float("nan")
    if not (np.isfinite(T) and T > 0):
        raise ValueError(f"{who}: temperature must be a finite number > 0 (1 = plain softmax), "
                         f"got {temperature!r}")
    return T
