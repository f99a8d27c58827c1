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

NUMBER = (int, float, np.integer, np.floating)
OPTIONS = {  # attention's options: name -> (valid, what it must be)
    "dropout": (lambda p: isinstance(p, NUMBER) and 0 <= p < 1, "a number in [0, 1)"),
    "window": (lambda W: W is None or isinstance(W, (int, np.integer)) and not isinstance(W, bool)
               and W >= 0, "an int >= 0"),
    "temperature": (lambda T: isinstance(T, NUMBER) and bool(np.isfinite(T)) and T > 0,
                    "a finite number > 0 (1 = plain softmax)"),
    "activation": (lambda a: a in ("tanh", None), "'tanh' or None"),
    "scale": (lambda s: s is None or isinstance(s, NUMBER) and bool(np.isfinite(s)) and s > 0,
              "a finite number > 0 (None: √d)"),
}


def check_options(op: str, **options) -> None:
    """Refuse an option (dropout p, window W, temperature T, …) not as ``OPTIONS`` wants it."""
    for name, value in options.items():
        valid, what = OPTIONS[name]
        if not valid(value):
            rng = isinstance(value, np.random.Generator)                # a positional rng
            hint = " (rng is keyword-only: rng=...)" if rng else ""
            raise ValueError(f"{op}: {name} must be {what}, got {value!r}{hint}")


def check_temperature(who: str, temperature) -> float:
    """``temperature`` as a float: finite and > 0, or a ValueError naming ``who``."""
    check_options(who, temperature=temperature)
    return float(temperature)


def check_choice(who: str, name: str, value, choices) -> None:
    """A setting chosen by name (a score, a cell, an activation …): ``value`` one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{who}: {name} must be one of {choices}, got {value!r}")


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
    size, done = {}, []                                              # letter -> n (None: missing)
    for role, shape, *pattern in filter(None, roles):               # None: skipped
        known, axes = dict(size), None
        if not pattern:                                              # a size given: E=8
            size[role] = shape
        else:
            axes, missing = _layout(pattern[0], len(shape), size)
            size.update(dict.fromkeys(missing))                      # missing here: everywhere
            if axes is None or any(size.setdefault(L, n) != n or positive and n < 1
                                   for (L, positive), n in zip(axes, shape)):
                raise _misfit(op, role, shape, pattern[0], axes, known, done)
        done.append((role, shape, axes))


def _layout(pattern: str, ndim: int, size: dict) -> tuple:
    """The first way ``pattern`` lies on ``ndim`` axes, ``((letter, at least 1), ...)``, and the
    optional letters it leaves out: those seen are there, those missing before stay missing, the
    others come from the left. ``(None, [])`` if there is none."""
    axes = pattern.split()
    opt = [a[:-1] for a in axes if a[-1] == "?"]
    k = ndim - len(axes) + len(opt)                                  # optional letters there
    for on in itertools.combinations(opt, k) if k >= 0 else ():
        missing = [L for L in opt if L not in on]
        if all(size.get(L, 0) is not None for L in on) and \
                all(size.get(L) is None for L in missing):
            return tuple((a.rstrip("?+"), a[-1] == "+") for a in axes
                         if a.rstrip("?+") not in missing), missing
    return None, []


def _misfit(op: str, role: str, shape: tuple, pattern: str, axes, known: dict, done: list):
    """``fit``'s error: the role's shape, lettered, against its pattern with the sizes known."""
    def lettered(shape, axes):
        return str(shape) if axes is None else shape_str(shape, [L for L, _ in axes])
    want = ", ".join(f"{L}={known[L]}" if known.get(L) is not None else f"[{L}]" if a[-1] == "?"
                     else f"{L} >= 1" if a[-1] == "+" else L
                     for a in pattern.split() for L in [a.rstrip("?+")]
                     if known.get(L, 0) is not None or a[-1] != "?")
    given = ", ".join(f"{r}={s}" if u is None else f"{r} {lettered(s, u)}" for r, s, u in done)
    return ValueError(f"{op}: {role} {lettered(shape, axes)} does not fit ({want})"
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
    if not broadcast and bool_ and mask.shape == (B, S):
        return mask.reshape((B,) + (1,) * (nd - 2) + (S,))          # (B, [1, …,] S)
    if fits and (broadcast or mask.ndim == nd > 2):
        return mask.reshape((1,) * (nd - mask.ndim) + mask.shape)   # (…, 1|T, S)
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
