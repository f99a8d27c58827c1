"""The entry checks of attention. Each public function checks what a user hands in once, with
these; the code it calls assumes it. Errors are ValueErrors naming the function, role, shapes.

Shape letters: B batch, T queries, S keys (source positions), D width, h heads.
"""
from __future__ import annotations

import numpy as np

from minigrad.ops import pair
from minigrad.tensor import Tensor


def shape_str(shape, letters: str = "") -> str:
    """``(4, 7, 8)`` with letters "BS" -> ``"(B=4, S=7, 8)"``: names the leading dimensions."""
    parts = [f"{l}={n}" if l != " " else str(n) for l, n in zip(letters.ljust(len(shape)), shape)]
    return "(" + ", ".join(parts) + ")"


def scores_str(shape) -> str:
    """The shape of scores (B, S), (B, T, S) or (B, h, T, S), lettered."""
    return shape_str(shape, {2: "BS", 3: "BTS", 4: "BhTS"}.get(len(shape), ""))


def as_mask(mask, scores_shape: tuple, who: str, role: str = "mask", what: str = "scores",
            broadcast: bool = False) -> np.ndarray:
    """``mask`` (True = may be attended) for the scores: (B, S) key padding, even if B = T, or as
    many axes as they have; with ``broadcast`` (PyTorch's) any that broadcasts, 2-D as (T, S)."""
    mask = np.asarray(mask.data if isinstance(mask, Tensor) else mask)
    nd, B, S = len(scores_shape), scores_shape[0], scores_shape[-1]
    fits = mask.ndim <= nd and all(m in (1, n)
                                   for m, n in zip(mask.shape[::-1], scores_shape[::-1]))
    if mask.dtype == bool and broadcast and fits:
        return mask.reshape((1,) * (nd - mask.ndim) + mask.shape)   # (…, 1|T, S)
    if mask.dtype == bool and not broadcast and mask.shape == (B, S):
        return mask.reshape((B,) + (1,) * (nd - 2) + (S,))          # (B, [1, …,] S)
    if mask.dtype == bool and not broadcast and fits and mask.ndim == nd > 2:
        return mask
    raise _mask_error(mask, scores_shape, who, role, what, broadcast)


def _mask_error(mask, scores_shape: tuple, who: str, role: str, what: str, broadcast: bool):
    nd, B, S = len(scores_shape), scores_shape[0], scores_shape[-1]
    if mask.dtype != bool:
        return ValueError(f"{who}: {role} must be a boolean array (True = may be attended), "
                          f"got dtype {mask.dtype}")
    if broadcast:
        return ValueError(f"{who}: {role} {mask.shape} does not broadcast to {what} "
                          f"{scores_str(scores_shape)} (key padding (B, S) is ({B}, 1, {S}) here)")
    also = f" or {nd} axes broadcastable to {scores_str(scores_shape)}" if nd > 2 else ""
    if nd > 2 and mask.ndim == 2:
        also += "; a 2-D mask is (B, S) key padding; give a per-query (T, S) mask as (1, T, S)"
    return ValueError(f"{who}: {role} {mask.shape} does not fit {what} "
                      f"{scores_str(scores_shape)}: expected (B, S) = ({B}, {S}){also}")


def check_read(who: str, scores, values, role: str = "scores") -> None:
    """Scores (B, [T,] S) fit values (B, S, D) with S ≥ 1 (with heads, an axis h after B)."""
    e, h = scores.shape, values.shape
    lead = e[:-1] if len(e) == len(h) - 1 else e[:-2]               # (B, [h])
    if not (len(h) >= 3 and len(e) in (len(h) - 1, len(h)) and lead == h[:-2] and
            e[-1] == h[-2] > 0):
        raise _read_error(who, role, e, h, lead)


def _read_error(who: str, role: str, e: tuple, h: tuple, lead: tuple) -> ValueError:
    if len(h) < 3 or len(e) not in (len(h) - 1, len(h)):
        why = f"expected {role} (B, S) or (B, T, S) for values (B, S, D)"
    elif lead != h[:-2] or e[-1] != h[-2]:
        why = "batch or source length differs"
    else:
        why = "S = 0: there is no source position to attend to"
    return ValueError(f"{who}: {role} {scores_str(e)} vs values {shape_str(h, 'BS')}: {why}")


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
                             f"{scores_str(a.shape)} and values {shape_str(h.shape, 'BS')}: "
                             f"expected {want}")
    return a, h, c, g


def check_options(dropout, window) -> tuple:
    """``Attention``'s dropout p in [0, 1) and window W (None or an int ≥ 0)."""
    if not (isinstance(dropout, (int, float)) and 0 <= dropout < 1):
        raise ValueError(f"Attention: dropout p must be a number in [0, 1), got {dropout!r}")
    if window is not None and (isinstance(window, bool) or not isinstance(window, (int, np.integer))
                               or window < 0):
        raise ValueError(f"Attention: window W must be None or an int >= 0, got {window!r}")
    return float(dropout), window


def check_position(who: str, position, scores_shape: tuple) -> np.ndarray:
    """A window's centre t (local-m's p_t = t, the decoder step) as an array of the scores'
    leading shape (B,) or (B, T); for T queries, None is t = 0 … T−1."""
    shape, S = scores_shape[:-1], scores_shape[-1]
    if position is None and len(shape) == 1:
        raise ValueError(f"{who}: window with a query (B, Dq) needs position, the decoder step t")
    if position is None:
        return np.broadcast_to(np.arange(shape[1]), shape)              # (B, T): t
    try:
        p = np.broadcast_to(np.asarray(position, dtype=float), shape)   # (B, [T])
    except ValueError:
        raise ValueError(f"{who}: position of shape {np.shape(position)} does not fit "
                         f"{shape_str(shape, 'BT')} (an int or (B,) for a query (B, Dq); "
                         "broadcastable to (B, T) for (B, T, Dq))") from None
    whole = np.isfinite(p) & (p == np.floor(p)) & (p >= 0)
    if not whole.all():
        t = p[~whole].flat[0]
        why = ("is not an integer: local-m's p_t = t is a decoder step" if t >= 0 else
               "is negative: local-m reads around p_t = t, the decoder step t >= 0")  # NaN too
        raise ValueError(f"{who}: position {t:g} {why} (S={S} source positions, 0 … {S - 1})")
    return p
