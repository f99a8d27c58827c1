"""Naming the classic mistake behind a wrong gradient, from the gradient alone.

``a`` is the learner's (analytic) gradient of one input, ``n`` the numeric one (central
differences), which has the input's shape. Two questions, in this order:

* wrong shape?  broadcasting not undone (say which axes to sum), an axis that was never put
  back after a reduction, a transposed matrix;
* wrong values? a sign error (a ≈ −n), a transposed matrix, a constant factor (a ≈ c·n),
  nonzero where the gradient must be 0, a missing elementwise factor (a/n varies but keeps
  its sign).

Exercise-specific mistakes (``catalog.Mistake``) are tried by the checker before these.
A forward exercise's wrong output gets ``output_diagnosis``, in the same spirit.
"""
from __future__ import annotations

import numpy as np

from minigrad.engine import unbroadcast

TOL = 1e-5      # a gradient passes when every element's relative error is at most this
FLOOR = 1e-3    # magnitudes below FLOOR count as FLOOR: rounding noise near 0 is not magnified
MATCH = 1e-4    # "looks like": how close a wrong gradient must be to a pattern to be named it


def rel_error(a: np.ndarray, n: np.ndarray) -> np.ndarray:
    """|a − n| / max(|a|, |n|, FLOOR), elementwise; NaN and inf count as infinitely wrong."""
    with np.errstate(invalid="ignore", over="ignore"):
        r = np.abs(a - n) / np.maximum(np.maximum(np.abs(a), np.abs(n)), FLOOR)
    return np.where(np.isfinite(r), r, np.inf)


def close(a: np.ndarray, n: np.ndarray, tol: float = MATCH) -> bool:
    return a.shape == n.shape and (a.size == 0 or rel_error(a, n).max() <= tol)


def _axes(axes) -> str:
    return str(axes[0]) if len(axes) == 1 else str(tuple(axes))


def _axes_phrase(axes) -> str:
    return f"axis {axes[0]}" if len(axes) == 1 else f"axes {tuple(axes)}"


def _after_fix(fixed: np.ndarray, n: np.ndarray) -> str:
    if close(fixed, n):
        return " -- after that it matches the numeric gradient"
    return " (and even then the values differ: check the formula too)"


# ---- wrong shape -----------------------------------------------------------------------------

def shape_diagnosis(a: np.ndarray, n: np.ndarray, name: str) -> str:
    """Why ``a`` has a shape other than ``n``'s (the input's), and how to fix it."""
    sa, sx = a.shape, n.shape
    if a.ndim == 0:
        return (f"d{name} is a single number, but {name} has shape {sx}: an @ or np.dot (or a "
                f"sum) where an elementwise * belongs?")
    if a.ndim == n.ndim >= 2 and sa == sx[:-2] + (sx[-1], sx[-2]):
        t = np.swapaxes(a, -1, -2)
        if close(t, n):
            return (f"transposed: your d{name} {sa} is the transpose of the right gradient "
                    f"{sx}. A gradient has its input's shape; for C = A @ B, dA = G Bᵀ and "
                    f"dB = Aᵀ G")
        return f"shape {sa} is {name}'s shape {sx} transposed (and the values differ too)"
    if a.ndim == n.ndim >= 3 and sa == sx[::-1]:
        return (f"all axes reversed: {sa} vs {sx} -- .T on a batched array? It reverses "
                f"every axis; `np.swapaxes(X, -1, -2)` transposes only the last two")
    summed = _summing_fixes(a, n, name)
    if summed:  # prefer the reading under which the summed gradient is right
        text, fixed = next((f for f in summed if close(f[1], n)), summed[0])
        return text + _after_fix(fixed, n)
    missing = [k for k in range(n.ndim) if a.ndim + 1 == n.ndim and sx[:k] + sx[k + 1:] == sa]
    if missing or _broadcasts(sa, sx):
        which = f"axis {missing[0]}" if len(missing) == 1 else "the reduced axis"
        return (f"d{name} has shape {sa}, smaller than {name}'s {sx}: it looks like g before "
                f"it was spread back. Put {which} back (`np.expand_dims(g, axis)`) and "
                f"broadcast to {sx} (`np.broadcast_to`)")
    if a.size == n.size:
        return (f"right number of elements, wrong shape: {sa}, expected {sx} -- a reshape or "
                f"transpose in the wrong place?")
    return f"wrong shape {sa}: d{name} must have {name}'s shape {sx}"


def _summing_fixes(a: np.ndarray, n: np.ndarray, name: str) -> list:
    """(explanation, summed gradient) for each way ``a`` could be ``n`` before summing over
    the axes along which the input was reused: NumPy broadcasting, or one extra axis."""
    sa, sx = a.shape, n.shape
    fixes = []
    if _broadcasts(sx, sa) and a.size > n.size:
        lead = tuple(range(a.ndim - n.ndim))
        size1 = tuple(i for i in range(n.ndim) if sx[i] == 1 and sa[len(lead) + i] != 1)
        code = "grad"
        if lead:
            code += f".sum(axis={_axes(lead)})"
        if size1:
            code += f".sum(axis={_axes(size1)}, keepdims=True)"
        axes = lead + tuple(len(lead) + i for i in size1)
        fixes.append((f"broadcasting not undone: {name} {sx} was stretched to {sa} in the "
                      f"forward, so its gradient is summed over the stretched "
                      f"{_axes_phrase(axes)}: d{name} = `{code}`", unbroadcast(a, sx, a.dtype)))
    for k in range(a.ndim):
        if a.ndim == n.ndim + 1 and sa[:k] + sa[k + 1:] == sx:
            fixes.append((f"extra axis {k} (size {sa[k]}): {name} was used at every index "
                          f"along it (broadcast over it in the forward), so sum over it: "
                          f"d{name} = `grad.sum(axis={k})`", a.sum(axis=k)))
    return fixes


def _broadcasts(small: tuple, big: tuple) -> bool:
    """True when ``small`` broadcasts to exactly ``big``."""
    try:
        return small != big and np.broadcast_shapes(small, big) == big
    except ValueError:
        return False


# ---- wrong values ----------------------------------------------------------------------------

def value_diagnosis(a: np.ndarray, n: np.ndarray, name: str, nan_hint: str = "") -> str | None:
    """Name the pattern of a same-shaped but wrong gradient, or None if none is recognised."""
    bad = ~np.isfinite(a)
    if bad.any():
        where = _index(np.argwhere(bad)[0])
        return (f"d{name} has NaN/inf at {where} ({bad.sum()} element(s)): look for 0/0, "
                f"log(0) or inf − inf" + (f" -- often {nan_hint}" if nan_hint else ""))
    scale = max(np.abs(n).max(initial=0.0), FLOOR)
    if np.abs(a).max(initial=0.0) <= TOL * FLOOR and scale > FLOOR:
        return f"d{name} is all zeros, but the true gradient is not"
    if close(-a, n):
        return (f"sign error: your d{name} is the negative of the true gradient "
                f"(analytic ≈ −numeric); check the sign of each term")
    if a.ndim >= 2 and a.shape[-1] == a.shape[-2] and close(np.swapaxes(a, -1, -2), n):
        return (f"transposed: your d{name} is the transpose of the right gradient (a square "
                f"matrix, so the shape did not give it away); for C = A @ B, dA = G Bᵀ and "
                f"dB = Aᵀ G")
    c = float(np.sum(a * n) / np.sum(n * n)) if np.any(n) else 0.0
    if c and abs(c - 1) > 10 * MATCH and close(a, c * n):
        return (f"off by a constant factor: your d{name} ≈ {c:.4g} × the true gradient"
                + _factor_guess(c))
    zero = np.abs(n) <= TOL * FLOOR
    leak = zero & (np.abs(a) > TOL * FLOOR)
    if leak.any():
        rest = ("elsewhere it matches" if close(np.where(zero, 0.0, a), n)
                else "other elements differ too")
        return (f"nonzero where the gradient must be 0: d{name} at {_index(np.argwhere(leak)[0])} "
                f"({leak.sum()} element(s)) should be 0 -- e.g. a masked position, which gets "
                f"no gradient; {rest}")
    big = np.abs(n) > scale * 1e-2
    if big.any():
        ratio = a[big] / n[big]
        lo, hi = ratio.min(), ratio.max()
        if lo > 0 and hi / lo > 1 + 10 * MATCH:
            size = ("smaller everywhere" if hi <= 1 + MATCH else
                    "larger everywhere" if lo >= 1 - MATCH else "off")
            return (f"missing factor? d{name} has the right sign everywhere but is {size} by a "
                    f"factor that varies from element to element (analytic/numeric from "
                    f"{lo:.3g} to {hi:.3g}): a local derivative is missing or wrong, such as "
                    f"1 − tanh² or σ(1 − σ)")
    return None


def output_diagnosis(a: np.ndarray, n: np.ndarray, name: str) -> str | None:
    """Name the pattern of a wrong forward output ``a`` against the library's ``n``, or None."""
    sa, sx = a.shape, n.shape
    if sa != sx:
        if a.ndim == n.ndim >= 2 and sa == sx[:-2] + (sx[-1], sx[-2]):
            return (f"transposed: your {name} {sa} is the transpose of the expected {sx}"
                    + ("" if close(np.swapaxes(a, -1, -2), n) else " (and the values differ too)"))
        for k in range(a.ndim):
            if a.ndim == n.ndim + 1 and sa[:k] + sa[k + 1:] == sx:
                summed = " -- summed over it, yours is right" if close(a.sum(axis=k), n) else ""
                return (f"an axis too many: {name} {sa} has an extra axis {k} (size {sa[k]}) "
                        f"that {sx} lacks: a sum (Σ_j) left out?{summed}")
        if a.size == n.size:
            return (f"right number of elements, wrong shape: {sa}, expected {sx} -- a reshape "
                    f"or transpose in the wrong place?")
        return f"wrong shape {sa}: {name} must have shape {sx}"
    bad = ~np.isfinite(a)
    if bad.any():
        return (f"{name} has NaN/inf at {_index(np.argwhere(bad)[0])} ({bad.sum()} element(s)): "
                f"np.exp overflows for large scores -- subtract each row's max before it")
    if np.abs(a).max(initial=0.0) <= TOL * FLOOR < np.abs(n).max(initial=0.0):
        return f"{name} is all zeros, but the expected output is not"
    if close(-a, n):
        return f"sign error: your {name} is the negative of the expected one"
    if a.ndim >= 2 and a.shape[-1] == a.shape[-2] and close(np.swapaxes(a, -1, -2), n):
        return (f"transposed: your {name} is the transpose of the expected one (a square "
                f"matrix, so the shape did not give it away)")
    c = float(np.sum(a * n) / np.sum(n * n)) if np.any(n) else 0.0
    if c and abs(c - 1) > 10 * MATCH and close(a, c * n):
        return (f"off by a constant factor: your {name} ≈ {c:.4g} × the expected one"
                + _factor_guess(c))
    return None


def zero_sum_note(a: np.ndarray, axis: int, name: str) -> str | None:
    """The gradient of a softmax's input sums to 0 along the softmax axis; say so if it doesn't."""
    s = a.sum(axis=axis)
    worst = np.abs(s).max(initial=0.0)
    if np.isfinite(worst) and worst > 1e-6 * max(1.0, np.abs(a).max()):
        return (f"note: d{name} should sum to 0 along axis {axis} (the softmax is "
                f"shift-invariant: adding a constant to all scores changes nothing); yours "
                f"sums to up to {worst:.3g}")
    return None


def _factor_guess(c: float) -> str:
    for k in range(2, 65):
        if abs(abs(c) - k) < 1e-3:
            return (f" (= {'−' if c < 0 else ''}{k}: a division by {k} is missing, e.g. a "
                    f"mean's 1/N?)")
        if abs(1 / abs(c) - k) < 1e-3 * k:
            return f" (= {'−' if c < 0 else ''}1/{k}: divided by {k} once too often?)"
        r = np.sqrt(k)
        if r != int(r) and abs(abs(c) - r) < 1e-3:
            return f" (= √{k}: a missing 1/√{k}, e.g. a scale 1/√d?)"
        if r != int(r) and abs(1 / abs(c) - r) < 1e-3:
            return f" (= 1/√{k}: a scale 1/√{k} applied twice?)"
    return ""


def _index(idx) -> str:
    return "[" + ", ".join(str(int(i)) for i in idx) + "]"
