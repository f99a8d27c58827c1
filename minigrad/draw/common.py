"""What the terminal and SVG drawings share: visible labels, colours, ticks and input checks.

Shape letters: T rows (a heatmap's target steps), S columns (its source positions).
"""
from __future__ import annotations

import math
import unicodedata
from typing import Mapping, Sequence, Tuple

import numpy as np

SHADES = " ░▒▓█"
SHADE_EDGES = (0.01, 0.25, 0.5, 0.75)  # a weight below 0.01 prints blank: "effectively zero"
BLUES = ("#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6",  # ColorBrewer "Blues", light
          "#4292c6", "#2171b5", "#08519c", "#08306b")               # to dark at 0, 1/8, .., 1
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
            "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
MARKERS = "*o+x#@%&"
CHAR_W = 0.62  # width of a monospace character, in em, to size SVG margins without a font


class Drawing(str):
    """A drawing's text (a ``str``) that Jupyter shows as the picture: SVG inline, the other
    formats as preformatted text."""

    def _repr_svg_(self):
        return str(self) if self.lstrip().startswith("<svg") else None

    def _repr_html_(self):
        if self.lstrip().startswith("<svg"):
            return None
        return "<pre>" + self.replace("&", "&amp;").replace("<", "&lt;") + "</pre>"


_INVISIBLE = (0xAD, 0x61C, 0x180E, *range(0x200B, 0x2010), *range(0x2028, 0x202F),
              *range(0x2060, 0x2070), 0xFEFF)  # soft hyphen, zero-width, bidi, U+2028/9
_PRINTABLE = {**{i: chr(0x2400 + i) for i in range(32)}, 0x7F: "␡",
              **{i: f"\\x{i:02x}" for i in range(0x80, 0xA0)},
              **{i: f"\\u{i:04x}" for i in _INVISIBLE},
              **{i: "\ufffd" for i in (*range(0xD800, 0xE000), 0xFFFE, 0xFFFF)}}


def printable(text) -> str:
    """``text`` safe in a terminal and in XML: control characters (C0 and DEL) shown as their
    pictures ␀ … ␟ ␡ (ESC as ␛, never raw), C1 ones (U+0080–U+009F; U+009B is ESC [ to some
    terminals) as ``\\x9b``, the invisible ones that hide or reorder text (zero-width, bidi
    overrides such as U+202E) as ``\\u202e``, and what XML cannot hold (lone surrogates, U+FFFE,
    U+FFFF) as �."""
    return str(text).translate(_PRINTABLE)


def token(label, max_len: int) -> str:
    """A label made visible (space -> ␣, control chars -> their pictures), cut to max_len."""
    s = printable(label).replace(" ", "␣") or "∅"
    return s if len(s) <= max_len else s[:max_len - 1] + "…"


def columns(text: str) -> int:
    """Terminal columns ``text`` takes: 2 for a wide (East Asian) character, else 1."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def pad(text: str, width: int, right: bool = False) -> str:
    """``text`` padded with spaces to ``width`` terminal columns (on the left if ``right``)."""
    room = " " * max(0, width - columns(text))
    return room + text if right else text + room


def fit(line: str, width: int) -> str:
    """``line`` made printable and cut to ``width`` characters, at a space when there is one, so
    that no number is cut in the middle (``6.774e…`` would read as another number)."""
    line = printable(line)
    if len(line) <= width:
        return line
    cut = line[:width - 1]
    return (cut[:cut.rindex(" ")] if " " in cut.strip() else cut).rstrip() + "…"


def blue(v: float) -> str:
    """Hex colour for v in [0, 1], interpolated linearly between the ColorBrewer stops."""
    rgb = np.array([[int(h[k:k + 2], 16) for k in (1, 3, 5)] for h in BLUES], dtype=float)
    stops = np.linspace(0.0, 1.0, len(BLUES))
    return "#" + "".join(f"{round(np.interp(v, stops, rgb[:, k])):02x}" for k in range(3))


def nice_ticks(lo: float, hi: float, n: int = 5, expand: bool = True):
    """Round ticks (1, 2, 2.5 or 5 times 10^k apart) for [lo, hi].

    With expand, the range grows to the enclosing ticks. Returns (lo, hi, ticks, decimals).
    """
    if not hi > lo:  # one value (or none): give it some room
        pad = abs(lo) * 0.1 or 0.5
        lo, hi = lo - pad, hi + pad
    raw = (hi - lo) / max(n - 1, 1)
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw * (1 - 1e-9))
    first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    if expand:
        first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
        lo, hi = first * step, last * step
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    decimals += round(step, decimals) != step  # 2.5 x 10^k needs one more digit
    return lo, hi, [k * step for k in range(first, last + 1)], decimals


def tick_label(t: float, decimals: int) -> str:
    s = f"{t:.{decimals}f}"
    return s.lstrip("-") if float(s) == 0 else s  # no "-0.0"


def check_heatmap(fn: str, weights, row_labels, col_labels) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    if w.ndim != 2 or w.size == 0:
        raise ValueError(f"{fn}: weights must be a non-empty 2-D array (T rows, S columns) but "
                         f"has shape {w.shape}; for a batch, pass one example, e.g. weights[0]")
    for role, labels, axis, name in (("row_labels", row_labels, 0, "rows"),
                                     ("col_labels", col_labels, 1, "columns")):
        if len(labels) != w.shape[axis]:
            raise ValueError(f"{fn}: {role} has {len(labels)} entries but weights has "
                             f"{w.shape[axis]} {name} (shape {w.shape})")
    if not np.all(np.isfinite(w)) or w.min() < -1e-6 or w.max() > 1 + 1e-6:
        raise ValueError(f"{fn}: weights must be finite and in [0, 1] (the fixed colour scale) "
                         f"but range from {w.min()} to {w.max()}")
    return np.clip(w, 0.0, 1.0)


def check_series(fn: str, series: Mapping[str, Tuple[Sequence[float], Sequence[float]]]):
    """Series as a list of (name, xs, ys) float arrays, plus the finite (x, y) range."""
    if not series:
        raise ValueError(f"{fn}: series is empty; pass a dict name -> (xs, ys)")
    out = []
    for name, (xs, ys) in series.items():
        xs, ys = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
        if xs.ndim != 1 or xs.shape != ys.shape or xs.size == 0:
            raise ValueError(f"{fn}: series {name!r} needs xs and ys of one equal, non-zero "
                             f"length but has xs shape {xs.shape}, ys shape {ys.shape}")
        out.append((str(name), xs, ys))
    ok = [np.isfinite(x) & np.isfinite(y) for _, x, y in out]  # NaN and inf leave gaps
    fx = np.concatenate([x[m] for (_, x, _), m in zip(out, ok)])
    fy = np.concatenate([y[m] for (_, _, y), m in zip(out, ok)])
    xr = (fx.min(), fx.max()) if fx.size else (0.0, 1.0)
    yr = (fy.min(), fy.max()) if fy.size else (0.0, 1.0)
    return out, xr, yr


def segments(xs: np.ndarray, ys: np.ndarray):
    """Runs of consecutive finite points, as lists of indices (NaN or inf breaks a run)."""
    runs = []
    for i in np.flatnonzero(np.isfinite(xs) & np.isfinite(ys)):
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs
