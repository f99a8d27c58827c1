"""The entry checks of attention. Each public function checks what a user hands in once, with
these; the code it calls assumes it. Errors are ValueErrors naming the function, role, shapes.

Shape letters: B batch, T queries, S keys (source positions), D width, h heads.
"""
from __future__ import annotations

import numpy as np

from attention.shapes import scores_letters, shape_str
from minigrad.coerce import pair
from minigrad.tensor import Tensor


def as_mask(mask, scores_shape: tuple, who: str, role: str = "mask", what: str = "scores",
            broadcast: bool = False) -> np.ndarray:
    """``mask`` (True = may be attended) for the scores: (B, S) key padding, even if B = T, or as
    many axes as they have; with ``broadcast`` (PyTorch's) any that broadcasts, 2-D as (T, S)."""
    mask = np.asarray(mask.data if isinstance(mask, Tensor) else mask)
    if mask.dtype != bool:
        raise ValueError(f"{who}: {role} must be a boolean array (True = may be attended), "
                         f"got dtype {mask.dtype}")
    nd, B, S = len(scores_shape), scores_shape[0], scores_shape[-1]
    fits = mask.ndim <= nd and all(m in (1, n) for m, n in zip(mask.shape[::-1], scores_shape[::-1]))
    if broadcast and fits:
        return mask.reshape((1,) * (nd - mask.ndim) + mask.shape)   # (…, 1|T, S)
    if not broadcast and mask.shape == (B, S):
        return mask.reshape((B,) + (1,) * (nd - 2) + (S,))          # (B, [1, …,] S)
    if not broadcast and fits and mask.ndim == nd > 2:
        return mask
    raise _mask_error(mask, scores_shape, who, role, what, broadcast)


def _mask_error(mask, scores_shape: tuple, who: str, role: str, what: str, broadcast: bool):
    nd, B, S = len(scores_shape), scores_shape[0], scores_shape[-1]
    scores = shape_str(scores_shape, scores_letters(nd))
    if broadcast:
        return ValueError(f"{who}: {role} {mask.shape} does not broadcast to {what} {scores} "
                          f"(key padding (B, S) is ({B}, 1, {S}) here)")
    also = f" or {nd} axes broadcastable to {scores}" if nd > 2 else ""
    if nd > 2 and mask.ndim == 2:
        also += "; a 2-D mask is (B, S) key padding; give a per-query (T, S) mask as (1, T, S)"
    return ValueError(f"{who}: {role} {mask.shape} does not fit {what} {scores}: expected (B, S) "
                      f"= ({B}, {S}){also}")


def check_read(who: str, scores, values, role: str = "scores") -> None:
    """Scores (B, [T,] S) fit values (B, S, D) with S ≥ 1 (with heads, an axis h after B)."""
    one = scores.ndim == values.ndim - 1                            # one query per value set
    lead = scores.shape[:-1] if one else scores.shape[:-2]
    if values.ndim < 3 or scores.ndim not in (values.ndim - 1, values.ndim):
        why = f"expected {role} (B, S) or (B, T, S) for values (B, S, D)"
    elif lead != values.shape[:-2] or scores.shape[-1] != values.shape[-2]:
        why = "batch or source length differs"
    elif values.shape[-2] == 0:
        why = "S = 0: there is no source position to attend to"
    else:
        return
    raise ValueError(f"{who}: {role} {shape_str(scores.shape, scores_letters(scores.ndim))} vs "
                     f"values {shape_str(values.shape, 'BS')}: {why}")


def read_inputs(who: str, scores, values, mask) -> tuple:
    """A read's Tensors ``(scores, values)``, checked, and the mask ready to broadcast (or None)."""
    scores, values = pair(scores, values)
    check_read(who, scores, values)
    if mask is not None:
        mask = as_mask(mask, scores.shape, who)                     # (B, [1|T,] S)
        check_masked(who, "values", values, mask)
    return scores, values, mask


def check_masked(who: str, role: str, vectors, mask, proof=None) -> None:
    """Keys and values (B, [h,] S, D) hidden by the mask must be finite: their weight is 0, but
    0 · inf = NaN would reach the context (values) or, by ∂(q·k_j)/∂q = k_j, the query's gradient
    (keys). A finite ``proof`` (the scores, for keys) spares looking at them."""
    x = vectors.data if isinstance(vectors, Tensor) else np.asarray(vectors)
    if mask is not None and not np.isfinite(x if proof is None else proof).all():
        _refuse_hidden(who, role, x, mask)


def _refuse_hidden(who: str, role: str, x: np.ndarray, mask) -> None:
    bad = ~np.isfinite(x).all(axis=-1)                              # (B, [h,] S): x_j not finite
    one = mask.ndim == bad.ndim                                     # mask (B, [h,] S)
    hidden = bad & ~mask if one else (bad[..., None, :] & ~mask).any(axis=-2)  # (B, [h,] S)
    if hidden.any():
        where = ", ".join(str(int(i)) for i in np.argwhere(hidden)[0])
        raise ValueError(f"{who}: {role} {shape_str(x.shape, 'BhS' if x.ndim == 4 else 'BS')} "
                         f"hold inf or NaN at a masked position, {role}[{where}]; {role} at "
                         f"masked positions must be finite (zero them before the read)")


def score_grad_inputs(weights, values, context, grad_context) -> tuple:
    """``score_grad``'s (α, h, c, g), checked: Tensors stay Tensors (under ``create_graph``),
    anything else becomes an array."""
    a, h, c, g = (x if isinstance(x, Tensor) else np.asarray(x)
                  for x in (weights, values, context, grad_context))
    check_read("score_grad", a, h, role="weights")
    want = a.shape[:-1] + h.shape[-1:]                              # (B, [T,] D)
    for role, x in (("context", c), ("grad_context", g)):
        if x.shape != want:
            raise ValueError(f"score_grad: {role} {x.shape} does not fit weights "
                             f"{shape_str(a.shape, scores_letters(a.ndim))} and values "
                             f"{shape_str(h.shape, 'BS')}: expected {want}")
    return a, h, c, g


def check_options(dropout, window) -> tuple:
    """``Attention``'s dropout p in [0, 1) and window W (None or an int ≥ 0)."""
    if not (isinstance(dropout, (int, float)) and 0 <= dropout < 1):
        raise ValueError(f"Attention: dropout p must be a number in [0, 1), got {dropout!r}")
    if window is not None and (isinstance(window, bool) or not isinstance(window, (int, np.integer))
                               or window < 0):
        raise ValueError(f"Attention: window W must be None or an int >= 0, got {window!r}")
    return float(dropout), window
