"""The entry checks of attention: each public function checks what a user hands in once, with
these; the code it calls assumes it. Errors are one-line ValueErrors naming the op, role, shapes.
Shape letters: B batch, T queries, S keys (source positions), D width, h heads.
"""
from __future__ import annotations

import functools
import itertools

import numpy as np

from minigrad.ops import boolean_mask, pair
from minigrad.tensor import Tensor


def shape_str(shape, letters="") -> str:
    """``(4, 7, 8)`` with letters "BS" (or ["B", "S"]) -> ``"(B=4, S=7, 8)"``."""
    names = list(letters) + [" "] * len(shape)
    return "(" + ", ".join(f"{l}={n}" if l != " " else str(n) for l, n in zip(names, shape)) + ")"


def fit(op: str, **roles) -> None:
    """Check lettered axes role by role: ``role=(x, "B T? S+")`` (an array, a Tensor or a shape;
    None is skipped) or ``E=8``. A letter keeps the size it is first given; ``T?`` may be missing
    (then in every role), ``S+`` is at least 1. The same shapes fit once (a cache)."""
    _fit(op, tuple((r, s) if isinstance(s, (int, np.integer)) else None if s[0] is None else
                   (r, tuple(getattr(s[0], "shape", s[0])), s[1]) for r, s in roles.items()))


@functools.lru_cache(maxsize=1024)
def _fit(op: str, roles: tuple) -> None:
    size, done = {}, []
    for role, shape, *pattern in filter(None, roles):               # None: skipped
        axes = None
        if not pattern:                                              # a size given: E=8
            size[role] = shape
        else:
            known, layout = dict(size), _layout(pattern[0], len(shape), size)
            if layout:
                axes = layout[1]
                size.update(dict.fromkeys(layout[3]))                # missing here: everywhere
            for (L, positive), n in zip(axes or (), shape):
                if size.setdefault(L, n) != n or positive and n < 1:
                    axes = None
            if axes is None:
                raise _misfit(op, role, shape, pattern[0], known, done)
        done.append((role, shape, axes))


def _layout(pattern: str, ndim: int, size: dict):
    """The first way ``pattern`` lies on ``ndim`` axes, ``(ndim, ((letter, at least 1), ...),
    optional letters there, optional letters missing)``: those seen are there, those missing
    before stay missing, the others come from the left."""
    axes = pattern.split()
    opt = [a for a in axes if a[-1] == "?"]
    for on in (on for k in range(len(opt) + 1) for on in itertools.combinations(opt, k)):
        used = tuple((a.rstrip("?+"), a[-1] == "+") for a in axes if a[-1] != "?" or a in on)
        there, missing = [a[:-1] for a in on], [a[:-1] for a in opt if a not in on]
        if len(used) == ndim and all(size.get(L, 0) is not None for L in there) and \
                all(size.get(L) is None for L in missing):
            return ndim, used, there, missing
    return None


def _misfit(op: str, role: str, shape: tuple, pattern: str, known: dict, done: list):
    """``fit``'s error: the role's shape, lettered, against its pattern with the sizes known."""
    def lettered(shape, axes):
        return shape_str(shape, [L for L, _ in axes])
    axes = (_layout(pattern, len(shape), known) or (0, None))[1]
    got = str(shape) if axes is None else lettered(shape, axes)
    want = ", ".join(f"{L}={known[L]}" if known.get(L) is not None else f"[{L}]" if a[-1] == "?"
                     else f"{L} >= 1" if a[-1] == "+" else L
                     for a in pattern.split() for L in [a.rstrip("?+")]
                     if known.get(L, 0) is not None or a[-1] != "?")
    given = ", ".join(f"{r}={s}" if u is None else f"{r} {lettered(s, u)}" for r, s, u in done)
    return ValueError(f"{op}: {role} {got} does not fit ({want})"
                      + (f", given {given}" if given else ""))


def read_inputs(op: str, scores, values, mask) -> tuple:
    """A read's Tensors ``(scores, values)``, checked, and the mask ready to broadcast (or None);
    values hidden by the mask must be finite."""
    scores, values = pair(scores, values)
    fit(op, values=(values, "B h? S+ D"), scores=(scores, "B h? T? S"))
    mask = None if mask is None else as_mask(mask, scores.shape, op)  # (B, [1|T,] S)
    check_masked(op, "values", values, mask)
    return scores, values, mask


def as_mask(mask, scores: tuple, op: str, role: str = "mask", what: str = "scores",
            broadcast: bool = False) -> np.ndarray:
    """``mask`` (True = may be attended) for the scores: (B, S) key padding, even if B = T, or as
    many axes as they have; with ``broadcast`` (PyTorch's) any that broadcasts, 2-D as (T, S)."""
    mask = np.asarray(mask.data if isinstance(mask, Tensor) else mask)
    nd, B, S, bool_ = len(scores), scores[0], scores[-1], mask.dtype == bool
    fits = bool_ and mask.ndim <= nd and all(m in (1, n) for m, n in zip(mask.shape[::-1],
                                                                         scores[::-1]))
    if broadcast and fits:
        return mask.reshape((1,) * (nd - mask.ndim) + mask.shape)   # (…, 1|T, S)
    if not broadcast and bool_ and mask.shape == (B, S):
        return mask.reshape((B,) + (1,) * (nd - 2) + (S,))          # (B, [1, …,] S)
    if not broadcast and fits and mask.ndim == nd > 2:
        return mask
    raise _mask_error(mask, scores, op, role, what, broadcast)


def _mask_error(mask, scores: tuple, op: str, role: str, what: str, broadcast: bool):
    nd, B, S = len(scores), scores[0], scores[-1]
    boolean_mask(op, role + " (True = may be attended)", mask)      # refuses another dtype
    why = (f" (key padding (B, S) is ({B}, 1, {S}) here)" if broadcast else
           f": expected (B, S) = ({B}, {S})" + (f" or {nd} axes that broadcast; a 2-D mask is "
           "(B, S) key padding; give a per-query (T, S) mask as (1, T, S)" if nd > 2 else ""))
    lettered = shape_str(scores, {2: "BS", 3: "BTS", 4: "BhTS"}.get(nd, ""))
    return ValueError(f"{op}: {role} {mask.shape} does not "
                      f"{'broadcast to' if broadcast else 'fit'} {what} {lettered}{why}")


def check_masked(op: str, role: str, vectors, mask, proof=None) -> None:
    """Keys and values (B, [h,] S, D) hidden by the mask must be finite: their weight is 0, but
    0 · inf = NaN would reach the context (values) or, by ∂(q·k_j)/∂q = k_j, the query's gradient
    (keys). A finite ``proof`` (the scores, for keys) spares looking at them."""
    x = vectors.data if isinstance(vectors, Tensor) else np.asarray(vectors)
    if mask is not None and not np.isfinite(x if proof is None else proof).all():
        _refuse_hidden(op, role, x, mask)


def _refuse_hidden(op: str, role: str, x: np.ndarray, mask: np.ndarray) -> None:
    bad = ~np.isfinite(x).all(axis=-1)                              # (B, [h,] S): x_j not finite
    where = np.argwhere(bad & ~mask if mask.ndim == bad.ndim else
                        (bad[..., None, :] & ~mask).any(axis=-2))   # hidden and not finite
    if len(where):
        at, shape = ", ".join(map(str, where[0])), shape_str(x.shape, "BhS" if x.ndim > 3 else "BS")
        raise ValueError(f"{op}: {role} {shape} hold inf or NaN at a masked position, {role}[{at}]"
                         f"; {role} at masked positions must be finite (zero them before the read)")


def check_options(op: str, dropout, window=None) -> tuple:
    """Dropout p in [0, 1) and window W (None or an int ≥ 0)."""
    if not (isinstance(dropout, (int, float, np.integer, np.floating)) and 0 <= dropout < 1):
        raise ValueError(f"{op}: dropout must be a number in [0, 1), got {dropout!r}" + (
            " (rng is keyword-only: rng=...)" if isinstance(dropout, np.random.Generator) else ""))
    if window is not None and (isinstance(window, bool) or not isinstance(window, (int, np.integer))
                               or window < 0):
        raise ValueError(f"{op}: window must be an int >= 0, got {window!r}")
    return float(dropout), window
