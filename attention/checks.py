"""The entry checks of the read (``attention/read.py``) and of what builds on it.

Shape letters: B batch, T queries, S source positions, D value width, h heads.

Each public function validates its inputs once, at its entry, with these; the math in
``read.py`` assumes what they check. Every error is a ``ValueError`` that names the function,
the role and the shapes.
"""
from __future__ import annotations

import numpy as np

from attention.masking import as_mask
from attention.shapes import scores_letters, shape_str
from minigrad.coerce import pair
from minigrad.tensor import Tensor


def check_read(who: str, scores, values, role: str = "scores") -> None:
    """Scores (B, [T,] S) fit values (B, S, D) with S ≥ 1 (an axis h after B in both, with
    heads), or a ValueError naming ``who``."""
    def error(why):
        return ValueError(f"{who}: {role} {shape_str(scores.shape, scores_letters(scores.ndim))} "
                          f"vs values {shape_str(values.shape, 'BS')}: {why}")
    if scores.ndim not in (values.ndim - 1, values.ndim) or values.ndim < 3:
        raise error(f"expected {role} (B, S) or (B, T, S) for values (B, S, D)")
    one = scores.ndim == values.ndim - 1                            # one query per value set
    lead = scores.shape[:-1] if one else scores.shape[:-2]
    if lead != values.shape[:-2] or scores.shape[-1] != values.shape[-2]:
        raise error("batch or source length differs")
    if values.shape[-2] == 0:
        raise error("S = 0: there is no source position to attend to")


def read_inputs(who: str, scores, values, mask) -> tuple:
    """``(scores, values, mask)``: tensors that fit (plain arrays take the other's float dtype)
    and the mask ready to broadcast against the scores (or None)."""
    scores, values = pair(scores, values)
    check_read(who, scores, values)
    if mask is not None:
        mask = as_mask(mask, scores.shape, who)                     # (B, [1|T,] S)
    return scores, values, mask


def score_grad_inputs(weights, values, context, grad_context) -> tuple:
    """``score_grad``'s inputs ``(a, h, c, g)`` whose shapes fit: Tensors stay Tensors (under
    ``create_graph``), anything else becomes an array."""
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


def check_masked_values(who: str, context, values, mask):
    """``context``, after checking the read's precondition when it is not finite.

    Values at masked positions must be finite: their weight is exactly 0, but 0 · inf and
    0 · NaN are NaN, so such a value would reach the context of a query that may not read it.
    A finite context proves the precondition; otherwise the values are looked at, and a value
    vector h_j that holds inf or NaN where the mask hides j from some query is refused. Inf or
    NaN at positions that are read reach the context as NumPy's arithmetic makes them.
    """
    c = context.data if isinstance(context, Tensor) else context
    if mask is not None and not np.isfinite(c).all():
        _refuse_hidden(who, "values", values, mask, "finite (zero them before the read)")
    return context


def checked_mask(who: str, mask, scores, keys):
    """``as_mask(mask)`` for the scores, after checking that keys at masked positions are
    finite (``check_masked_keys``)."""
    mask = as_mask(mask, scores.shape, who)                         # (B, [1|T,] S)
    check_masked_keys(who, scores, keys, mask)
    return mask


def check_masked_keys(who: str, scores, keys, mask, role: str = "keys") -> None:
    """Keys at masked positions must be finite, as values must. A masked score e_j gets weight
    0 and ∂L/∂e_j = 0, but its backward multiplies that 0 by k_j (∂(q·k_j)/∂q = k_j), and
    0 · NaN is NaN: the NaN would reach q.grad although the output is finite.

    A NaN or inf key makes its dot or general score NaN or inf, so finite scores prove the
    precondition at the cost of one pass over them; otherwise the keys are looked at. (A tanh
    score, additive or concat, can saturate an inf key to a finite e_j: q.grad stays finite
    then, as 1 − tanh² = 0, but W_k's gradient gets 0 · inf; ``detect_anomaly`` names it.)"""
    e = scores.data if isinstance(scores, Tensor) else np.asarray(scores)
    if mask is not None and not np.isfinite(e).all():
        _refuse_hidden(who, role, keys, mask, "finite, as values must (zero them first: their "
                       "weight is 0, but 0 · NaN would reach the query's gradient)")


def _refuse_hidden(who: str, role: str, vectors, mask, rule: str) -> None:
    """A ValueError if a vector (B, [h,] S, D) holds inf or NaN where the mask hides j from some
    query: mask (B, [h,] S) for one query, else (B, [h,] 1|T, S)."""
    x = vectors.data if isinstance(vectors, Tensor) else np.asarray(vectors)
    bad = ~np.isfinite(x).all(axis=-1)                              # (B, [h,] S): x_j not finite
    one = mask.ndim == bad.ndim
    hidden = bad & ~mask if one else (bad[..., None, :] & ~mask).any(axis=-2)  # (B, [h,] S)
    if hidden.any():
        where = ", ".join(str(int(i)) for i in np.argwhere(hidden)[0])
        letters = "BhS" if x.ndim == 4 else "BS"
        raise ValueError(f"{who}: {role} {shape_str(x.shape, letters)} hold inf or NaN at a "
                         f"masked position, {role}[{where}]; {role} at masked positions must be "
                         f"{rule}")


def check_options(dropout, window) -> tuple:
    """``Attention``'s dropout p in [0, 1) and window W (None or an int ≥ 0), or a ValueError."""
    if not (isinstance(dropout, (int, float)) and 0 <= dropout < 1):
        raise ValueError(f"Attention: dropout p must be a number in [0, 1), got {dropout!r}")
    if window is not None and (isinstance(window, bool) or not isinstance(window, (int, np.integer))
                               or window < 0):
        raise ValueError(f"Attention: window W must be None or an int >= 0, got {window!r}")
    return float(dropout), window
