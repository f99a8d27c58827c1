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

import re

import numpy as np

from minigrad.engine import unbroadcast
from minigrad.i18n import translator

_ = translator("minigrad")

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
    return (_("axis {axis}").format(axis=axes[0]) if len(axes) == 1 else
            _("axes {axes}").format(axes=tuple(axes)))


def _after_fix(fixed: np.ndarray, n: np.ndarray) -> str:
    if close(fixed, n):
        return _(" -- after that it matches the numeric gradient")
    return _(" (and even then the values differ: check the formula too)")


# ---- wrong shape -----------------------------------------------------------------------------

def shape_diagnosis(a: np.ndarray, n: np.ndarray, name: str) -> str:
    """Why ``a`` has a shape other than ``n``'s (the input's), and how to fix it."""
    sa, sx = a.shape, n.shape
    if a.ndim == 0:
        return _("d{name} is a single number, but {name} has shape {right}: an @ or np.dot (or "
                 "a sum) where an elementwise * belongs?").format(name=name, right=sx)
    if a.ndim == n.ndim >= 2 and sa == sx[:-2] + (sx[-1], sx[-2]):
        t = np.swapaxes(a, -1, -2)
        if close(t, n):
            return _("transposed: your d{name} {shape} is the transpose of the right gradient "
                     "{right}. A gradient has its input's shape; for C = A @ B, dA = G Bᵀ and "
                     "dB = Aᵀ G").format(name=name, shape=sa, right=sx)
        return _("shape {shape} is {name}'s shape {right} transposed (and the values differ "
                 "too)").format(name=name, shape=sa, right=sx)
    if a.ndim == n.ndim >= 3 and sa == sx[::-1]:
        return _("all axes reversed: {shape} vs {right} -- .T on a batched array? It reverses "
                 "every axis; `np.swapaxes(X, -1, -2)` transposes only the last two").format(
                     shape=sa, right=sx)
    summed = _summing_fixes(a, n, name)
    if summed:  # prefer the reading under which the summed gradient is right
        text, fixed = next((f for f in summed if close(f[1], n)), summed[0])
        return text + _after_fix(fixed, n)
    missing = [k for k in range(n.ndim) if a.ndim + 1 == n.ndim and sx[:k] + sx[k + 1:] == sa]
    if missing or _broadcasts(sa, sx):
        which = (_("axis {axis}").format(axis=missing[0]) if len(missing) == 1 else
                 _("the reduced axis"))
        return _("d{name} has shape {shape}, smaller than {name}'s {right}: it looks like g "
                 "before it was spread back. Put {which} back (`np.expand_dims(g, axis)`) and "
                 "broadcast to {right} (`np.broadcast_to`)").format(name=name, shape=sa,
                                                                    right=sx, which=which)
    if a.size == n.size:
        return _("right number of elements, wrong shape: {shape}, expected {right} -- a "
                 "reshape or transpose in the wrong place?").format(shape=sa, right=sx)
    return _("wrong shape {shape}: d{name} must have {name}'s shape {right}").format(
        name=name, shape=sa, right=sx)


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
        text = _("broadcasting not undone: {name} {right} was stretched to {shape} in the "
                 "forward, so its gradient is summed over the stretched {axes}: d{name} = "
                 "`{code}`").format(name=name, right=sx, shape=sa, axes=_axes_phrase(axes),
                                    code=code)
        fixes.append((text, unbroadcast(a, sx, a.dtype)))
    for k in range(a.ndim):
        if a.ndim == n.ndim + 1 and sa[:k] + sa[k + 1:] == sx:
            text = _("extra axis {axis} (size {size}): {name} was used at every index along it "
                     "(broadcast over it in the forward), so sum over it: d{name} = "
                     "`grad.sum(axis={axis})`").format(axis=k, size=sa[k], name=name)
            fixes.append((text, a.sum(axis=k)))
    return fixes


def _broadcasts(small: tuple, big: tuple) -> bool:
    """True when ``small`` broadcasts to exactly ``big``."""
    try:
        return small != big and np.broadcast_shapes(small, big) == big
    except ValueError:
        return False


# ---- an error NumPy raised -------------------------------------------------------------------

_MATMUL = re.compile(r"ValueError: (matmul: Input operand \d has a mismatch in its core dimension "
                     r"\d, with gufunc signature \S+ \(size (\d+) is different from (\d+)\)|"
                     r"operands could not be broadcast together with remapped shapes[^\n]*)")


def error_diagnosis(error: str, ndim: int) -> str:
    """``error`` (the learner's exception and its line) with NumPy's matmul error in words: an
    @ whose inner sizes differ, most often a transpose missing (``x @ W.T``) or, on a batched
    input (``ndim`` ≥ 3), ``.T``, which reverses every axis, where the last two were meant."""
    m = _MATMUL.search(error)
    if not m or (m.group(2) is None and ndim < 3):
        return error
    sizes = (_("the sides of an @ do not fit (inner sizes {k} and {n})").format(
        k=m.group(3), n=m.group(2)) if m.group(2) else _("the batch axes of an @ do not line up"))
    why = (_(": .T on a batched array? It reverses every axis ((2, 4, 5).T is (5, 4, 2)); "
             "transpose only the last two with `np.swapaxes(X, -1, -2)`") if ndim >= 3 else
           _(": a transpose missing? A @ B needs A's last axis as long as B's second-to-last; "
             "a weight stored (out, in), as PyTorch does, is used as `x @ W.T` (on a batch, "
             "transpose the last two axes: `np.swapaxes(W, -1, -2)`)"))
    return error[:m.start(1)] + sizes + why + error[m.end():]


# ---- wrong values ----------------------------------------------------------------------------

def value_diagnosis(a: np.ndarray, n: np.ndarray, name: str, nan_hint: str = "") -> str | None:
    """Name the pattern of a same-shaped but wrong gradient, or None if none is recognised."""
    bad = ~np.isfinite(a)
    if bad.any():
        text = _("d{name} has NaN/inf at {index} ({count} element(s)): look for 0/0, log(0) or "
                 "inf − inf").format(name=name, index=_index(np.argwhere(bad)[0]),
                                     count=bad.sum())
        return text + (_(" -- often {hint}").format(hint=nan_hint) if nan_hint else "")
    scale = max(np.abs(n).max(initial=0.0), FLOOR)
    if np.abs(a).max(initial=0.0) <= TOL * FLOOR and scale > FLOOR:
        return _("d{name} is all zeros, but the true gradient is not").format(name=name)
    if close(-a, n):
        return _("sign error: your d{name} is the negative of the true gradient (analytic ≈ "
                 "−numeric); check the sign of each term").format(name=name)
    if a.ndim >= 2 and a.shape[-1] == a.shape[-2] and close(np.swapaxes(a, -1, -2), n):
        return _("transposed: your d{name} is the transpose of the right gradient (a square "
                 "matrix, so the shape did not give it away); for C = A @ B, dA = G Bᵀ and "
                 "dB = Aᵀ G").format(name=name)
    c = float(np.sum(a * n) / np.sum(n * n)) if np.any(n) else 0.0
    if c and abs(c - 1) > 10 * MATCH and close(a, c * n):
        return (_("off by a constant factor: your d{name} ≈ {c:.4g} × the true gradient").format(
            name=name, c=c) + _factor_guess(c))
    zero = np.abs(n) <= TOL * FLOOR
    leak = zero & (np.abs(a) > TOL * FLOOR)
    if leak.any():
        rest = (_("elsewhere it matches") if close(np.where(zero, 0.0, a), n)
                else _("other elements differ too"))
        return _("nonzero where the gradient must be 0: d{name} at {index} ({count} "
                 "element(s)) should be 0 -- e.g. a masked position, which gets no gradient; "
                 "{rest}").format(name=name, index=_index(np.argwhere(leak)[0]),
                                  count=leak.sum(), rest=rest)
    big = np.abs(n) > scale * 1e-2
    if big.any():
        ratio = a[big] / n[big]
        lo, hi = ratio.min(), ratio.max()
        if lo > 0 and hi / lo > 1 + 10 * MATCH:
            size = (_("smaller everywhere") if hi <= 1 + MATCH else
                    _("larger everywhere") if lo >= 1 - MATCH else _("off"))
            return _("missing factor? d{name} has the right sign everywhere but is {size} by a "
                     "factor that varies from element to element (analytic/numeric from "
                     "{lo:.3g} to {hi:.3g}): a local derivative is missing or wrong, such as "
                     "1 − tanh² or σ(1 − σ)").format(name=name, size=size, lo=lo, hi=hi)
    return None


def output_diagnosis(a: np.ndarray, n: np.ndarray, name: str) -> str | None:
    """Name the pattern of a wrong forward output ``a`` against the library's ``n``, or None."""
    sa, sx = a.shape, n.shape
    if sa != sx:
        if a.ndim == n.ndim >= 2 and sa == sx[:-2] + (sx[-1], sx[-2]):
            text = _("transposed: your {name} {shape} is the transpose of the expected "
                     "{right}").format(name=name, shape=sa, right=sx)
            return text + ("" if close(np.swapaxes(a, -1, -2), n) else
                           _(" (and the values differ too)"))
        for k in range(a.ndim):
            if a.ndim == n.ndim + 1 and sa[:k] + sa[k + 1:] == sx:
                text = _("an axis too many: {name} {shape} has an extra axis {axis} (size "
                         "{size}) that {right} lacks: a sum (Σ_j) left out?").format(
                             name=name, shape=sa, axis=k, size=sa[k], right=sx)
                return text + (_(" -- summed over it, yours is right")
                               if close(a.sum(axis=k), n) else "")
        if a.size == n.size:
            return _("right number of elements, wrong shape: {shape}, expected {right} -- a "
                     "reshape or transpose in the wrong place?").format(shape=sa, right=sx)
        return _("wrong shape {shape}: {name} must have shape {right}").format(
            name=name, shape=sa, right=sx)
    bad = ~np.isfinite(a)
    if bad.any():
        return _("{name} has NaN/inf at {index} ({count} element(s)): np.exp overflows for "
                 "large scores -- subtract each row's max before it").format(
                     name=name, index=_index(np.argwhere(bad)[0]), count=bad.sum())
    if np.abs(a).max(initial=0.0) <= TOL * FLOOR < np.abs(n).max(initial=0.0):
        return _("{name} is all zeros, but the expected output is not").format(name=name)
    if close(-a, n):
        return _("sign error: your {name} is the negative of the expected one").format(
            name=name)
    if a.ndim >= 2 and a.shape[-1] == a.shape[-2] and close(np.swapaxes(a, -1, -2), n):
        return _("transposed: your {name} is the transpose of the expected one (a square "
                 "matrix, so the shape did not give it away)").format(name=name)
    c = float(np.sum(a * n) / np.sum(n * n)) if np.any(n) else 0.0
    if c and abs(c - 1) > 10 * MATCH and close(a, c * n):
        return (_("off by a constant factor: your {name} ≈ {c:.4g} × the expected one").format(
            name=name, c=c) + _factor_guess(c))
    return None


def zero_sum_note(a: np.ndarray, axis: int, name: str) -> str | None:
    """The gradient of an input the forward is shift-invariant in (a softmax's scores, layer
    norm's x) sums to 0 along that axis; say so if it doesn't."""
    s = a.sum(axis=axis)
    worst = np.abs(s).max(initial=0.0)
    if np.isfinite(worst) and worst > 1e-6 * max(1.0, np.abs(a).max()):
        return _("note: d{name} should sum to 0 along axis {axis} (the forward is "
                 "shift-invariant there: adding one constant to every {name} along it changes "
                 "nothing); yours sums to up to {worst:.3g}").format(name=name, axis=axis,
                                                                      worst=worst)
    return None


def _factor_guess(c: float) -> str:
    sign = "−" if c < 0 else ""
    for k in range(2, 65):
        if abs(abs(c) - k) < 1e-3:
            return _(" (= {sign}{k}: a division by {k} is missing, e.g. a mean's 1/N?)").format(
                sign=sign, k=k)
        if abs(1 / abs(c) - k) < 1e-3 * k:
            return _(" (= {sign}1/{k}: divided by {k} once too often?)").format(sign=sign, k=k)
        r = np.sqrt(k)
        if r != int(r) and abs(abs(c) - r) < 1e-3:
            return _(" (= √{k}: a missing 1/√{k}, e.g. a scale 1/√d?)").format(k=k)
        if r != int(r) and abs(1 / abs(c) - r) < 1e-3:
            return _(" (= 1/√{k}: a scale 1/√{k} applied twice?)").format(k=k)
    return ""


def _index(idx) -> str:
    return "[" + ", ".join(str(int(i)) for i in idx) + "]"
