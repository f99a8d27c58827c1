"""Dependency-free pictures: attention heatmaps and line plots, as terminal text or SVG.

Shape letters: T target length (heatmap rows), S source length (heatmap columns).

Heatmaps use a fixed 0..1 scale (never rescaled to the matrix maximum), so two pictures of
attention weights can be compared by eye. Tokens are shown visibly: a space becomes "␣" and a
control character its Unicode control picture (U+2400 + code), since XML cannot hold most of them.
"""
from __future__ import annotations

import html
import math
import os
import tempfile
from typing import Mapping, Optional, Sequence, Tuple

import numpy as np

_SHADES = " ░▒▓█"
_SHADE_EDGES = (0.01, 0.25, 0.5, 0.75)  # a weight below 0.01 prints blank: "effectively zero"
_BLUES = ("#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6",  # ColorBrewer "Blues", light
          "#4292c6", "#2171b5", "#08519c", "#08306b")               # to dark at 0, 1/8, .., 1
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
            "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
_MARKERS = "*o+x#@%&"
_CHAR_W = 0.62  # width of a monospace character, in em, to size SVG margins without a font


def _token(label, max_len: int) -> str:
    """A label made visible (space -> ␣, control chars -> their pictures), cut to max_len."""
    s = "".join("␣" if c == " " else chr(0x2400 + ord(c)) if ord(c) < 32 else
                "␡" if c == "\x7f" else c for c in str(label)) or "∅"
    return s if len(s) <= max_len else s[:max_len - 1] + "…"


def _fit(line: str, width: int) -> str:
    return line if len(line) <= width else line[:width - 1] + "…"


def _blue(v: float) -> str:
    """Hex colour for v in [0, 1], interpolated linearly between the ColorBrewer stops."""
    rgb = np.array([[int(h[k:k + 2], 16) for k in (1, 3, 5)] for h in _BLUES], dtype=float)
    stops = np.linspace(0.0, 1.0, len(_BLUES))
    return "#" + "".join(f"{round(np.interp(v, stops, rgb[:, k])):02x}" for k in range(3))


def _nice_ticks(lo: float, hi: float, n: int = 5, expand: bool = True):
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


def _tick_label(t: float, decimals: int) -> str:
    s = f"{t:.{decimals}f}"
    return s.lstrip("-") if float(s) == 0 else s  # no "-0.0"


def _write_atomic(path, text: str) -> None:
    """Write text to path via a temporary file in the same directory and os.replace.

    mkstemp makes the file private (0600); it gets the mode a plain open() would give."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".plot-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _check_heatmap(fn: str, weights, row_labels, col_labels) -> np.ndarray:
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


def _check_series(fn: str, series: Mapping[str, Tuple[Sequence[float], Sequence[float]]]):
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


def _segments(xs: np.ndarray, ys: np.ndarray):
    """Runs of consecutive finite points, as lists of indices (NaN or inf breaks a run)."""
    runs = []
    for i in np.flatnonzero(np.isfinite(xs) & np.isfinite(ys)):
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def heatmap_text(weights, row_labels: Sequence, col_labels: Sequence,
                 title: Optional[str] = None, max_width: int = 100) -> str:
    """An alignment heatmap for the terminal: rows are targets (T), columns sources (S).

    Each weight in [0, 1] picks a shade on a fixed scale: blank below 0.01, then ░ ▒ ▓ █ for
    the quarters [.01, .25), [.25, .5), [.5, .75), [.75, 1]. Cells are 2 characters wide when
    that fits in max_width, else 1; columns that still do not fit are cut and a note says so.
    """
    w = _check_heatmap("heatmap_text", weights, row_labels, col_labels)  # (T, S)
    if max_width < 20:
        raise ValueError(f"heatmap_text: max_width must be at least 20, got {max_width}")
    rows = [_token(r, min(12, max_width // 4)) for r in row_labels]
    lw = max(len(r) for r in rows)
    room = max_width - lw - 3  # "label │cells│"
    cell = 2 if 2 * w.shape[1] <= room else 1
    shown = min(w.shape[1], room // cell)
    cols = [_token(c, 8) for c in col_labels[:shown]]
    if all(len(c) <= cell for c in cols):  # one label per column, on one line
        header = ["".join(c.ljust(cell) for c in cols)]
    else:  # longer labels read downwards, one character per line
        header = ["".join((c[k] if k < len(c) else " ").ljust(cell) for c in cols)
                  for k in range(max(len(c) for c in cols))]
    shades = np.searchsorted(_SHADE_EDGES, w[:, :shown], side="right")  # (T, shown)
    lines = [_fit(title, max_width)] if title else []
    lines += [" " * (lw + 2) + h.rstrip() for h in header]
    lines.append(" " * lw + " ┌" + "─" * (shown * cell) + "┐")
    lines += [f"{r:>{lw}} │" + "".join(_SHADES[s] * cell for s in row) + "│"
              for r, row in zip(rows, shades)]
    lines.append(" " * lw + " └" + "─" * (shown * cell) + "┘")
    lines.append(_fit("scale 0-1: [ ] <.01  [░] <.25  [▒] <.5  [▓] <.75  [█] <=1", max_width))
    if shown < w.shape[1]:
        lines.append(_fit(f"(+{w.shape[1] - shown} more columns not shown)", max_width))
    return "\n".join(lines)


def line_plot_text(series: Mapping[str, Tuple[Sequence[float], Sequence[float]]],
                   width: int = 80, height: int = 20, title: Optional[str] = None,
                   xlabel: str = "", ylabel: str = "",
                   ylim: Optional[Tuple[float, float]] = None) -> str:
    """A terminal line plot, exactly `height` lines of at most `width` characters.

    Each series is drawn with its own marker character (* o + x # @ % &, later series on top);
    NaN or inf leaves a gap. Title, y label, the x axis and the legend take lines from the grid.
    """
    fn = "line_plot_text"
    data, (x0, x1), yr = _check_series(fn, series)
    names = [f"{_MARKERS[i % len(_MARKERS)]} {_fit(name, width - 2)}"
             for i, (name, _, _) in enumerate(data)]
    legend = []
    for entry in names:  # wrap the legend to the width
        if legend and len(legend[-1]) + 3 + len(entry) <= width:
            legend[-1] += "   " + entry
        else:
            legend.append(entry)
    n_rows = height - bool(title) - bool(ylabel) - 2 - bool(xlabel) - len(legend)
    if n_rows < 3 or width < 20:
        raise ValueError(f"{fn}: width {width} x height {height} leaves a {n_rows}-row plot; "
                         f"need width >= 20 and at least 3 rows")
    y0, y1, yticks, yd = _nice_ticks(*(ylim or yr), n=max(2, min(6, n_rows // 3 + 1)),
                                     expand=ylim is None)
    ylabels = [_tick_label(t, yd) for t in yticks]
    lw = max(len(s) for s in ylabels)
    n_cols = width - lw - 2  # "label ┤grid"
    x0, x1, xticks, xd = _nice_ticks(x0, x1, n=max(2, min(8, n_cols // 10)))
    col = lambda x: round((x - x0) / (x1 - x0) * (n_cols - 1))
    row = lambda y: round((y1 - y) / (y1 - y0) * (n_rows - 1))

    grid = [[" "] * n_cols for _ in range(n_rows)]  # (rows, cols) of characters
    for i, (_, xs, ys) in enumerate(data):
        for run in _segments(xs, ys):
            pts = [(col(xs[k]), row(ys[k])) for k in run]
            for (c0, r0), (c1, r1) in zip(pts, pts[1:] + pts[-1:]):  # each segment, then the end
                steps = max(abs(c1 - c0), abs(r1 - r0), 1)
                for s in range(steps + 1):
                    c, r = round(c0 + (c1 - c0) * s / steps), round(r0 + (r1 - r0) * s / steps)
                    if 0 <= r < n_rows and 0 <= c < n_cols:  # ylim may cut points off
                        grid[r][c] = _MARKERS[i % len(_MARKERS)]
    at_row = {}
    for t, s in zip(yticks, ylabels):
        at_row.setdefault(row(t), s)
    lines = [_fit(title, width)] if title else []
    lines += [_fit(ylabel, width)] if ylabel else []
    lines += [f"{at_row.get(r, ''):>{lw}} " + ("┤" if r in at_row else "│") + "".join(g).rstrip()
              for r, g in enumerate(grid)]
    axis, labels, end = list("─" * n_cols), [" "] * width, -1
    for t in xticks:
        axis[col(t)] = "┬"
        s = _tick_label(t, xd)
        start = min(max(lw + 2 + col(t) - len(s) // 2, 0), width - len(s))
        if start > end:  # skip a label that would run into the previous one
            labels[start:start + len(s)], end = list(s), start + len(s)
    lines += [" " * lw + " └" + "".join(axis), "".join(labels).rstrip()]
    lines += [_fit(xlabel.center(width).rstrip(), width)] if xlabel else []
    return "\n".join(lines + legend)


def _svg(width: float, height: float, parts: Sequence[str], path) -> str:
    """Wrap parts in a standalone SVG document on a white page; write it to path if given."""
    width, height = math.ceil(width), math.ceil(height)
    text = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans Mono, Menlo, monospace" '
            f'font-size="12">\n<rect class="page" width="100%" height="100%" fill="white"/>\n'
            + "\n".join(parts) + "\n</svg>\n")
    if path is not None:
        _write_atomic(path, text)
    return text


def _esc(s: str) -> str:
    return html.escape(s, quote=True)  # tokens such as "<", "&" and '"' do occur


def _centred(x: float, y: float, text: str, upwards: bool = False, attrs: str = "") -> str:
    """A text centred on (x, y), horizontal or reading upwards (axis titles)."""
    place = f'transform="translate({x:.1f},{y:.1f}) rotate(-90)"' if upwards \
        else f'x="{x:.1f}" y="{y:.1f}"'
    return f'<text {attrs} {place} text-anchor="middle">{_esc(text)}</text>'


def heatmap_svg(weights, row_labels: Sequence, col_labels: Sequence,
                path=None, title: Optional[str] = None, row_title: Optional[str] = None,
                col_title: Optional[str] = None,
                scale_label: Optional[str] = "attention weight") -> str:
    """An alignment heatmap as a standalone SVG document; also written to path if given.

    Rows are targets (T), columns sources (S); source labels sit on top, upright when they fit
    a cell (one character always does) and turned to read upwards when wider. row_title goes
    down the left side, col_title above the column labels. Colours run white -> dark blue on a
    fixed 0..1 scale (the ColorBrewer "Blues" stops, interpolated), shown in a colour bar with
    ticks 0, 0.5, 1 and scale_label beside it. Hovering a cell shows its labels and weight.
    """
    w = _check_heatmap("heatmap_svg", weights, row_labels, col_labels)  # (T, S)
    T, S = w.shape
    cell = int(np.clip(480 // max(T, S), 10, 28))  # px per cell
    fs = min(12, cell - 2)  # label font size, px
    rows, cols = [_token(r, 16) for r in row_labels], [_token(c, 16) for c in col_labels]
    turned = [len(c) * fs * _CHAR_W > cell - 2 for c in cols]  # too wide to stand upright
    label_h = max(len(c) * fs * _CHAR_W if t else fs for c, t in zip(cols, turned))
    band = 38 if title else 12  # top of the column titles; the title's baseline is at 26
    col_title_y = band + 12
    band += 18 if col_title else 0
    top = band + label_h + 6  # the grid's top edge; labels end 6 px above it
    left = 16 + (16 if row_title else 0) + max(len(r) for r in rows) * fs * _CHAR_W
    scale_h = len(scale_label or "") * 12 * _CHAR_W + 8
    bar_x, bar_h = left + S * cell + 16, max(T * cell, 100, scale_h)
    parts = [f'<text class="title" x="10" y="26" font-size="15" font-weight="bold">'
             f'{_esc(title)}</text>'] if title else []
    if col_title:
        parts.append(_centred(left + S * cell / 2, col_title_y, col_title,
                              attrs='class="col-title" fill="#555"'))
    if row_title:
        parts.append(_centred(20, top + T * cell / 2, row_title, upwards=True,
                              attrs='class="row-title" fill="#555"'))
    for i, r in enumerate(rows):
        parts.append(f'<text x="{left - 6:.1f}" y="{top + (i + 0.5) * cell + fs * 0.35:.1f}" '
                     f'font-size="{fs}" text-anchor="end">{_esc(r)}</text>')
    for j, (c, turn) in enumerate(zip(cols, turned)):
        x = left + (j + 0.5) * cell
        place = (f'transform="translate({x + fs * 0.35:.1f},{top - 6:.1f}) rotate(-90)"' if turn
                 else f'x="{x:.1f}" y="{top - 6:.1f}" text-anchor="middle"')
        parts.append(f'<text class="col-label" {place} font-size="{fs}">{_esc(c)}</text>')
    for i in range(T):
        for j in range(S):
            parts.append(f'<rect class="cell" x="{left + j * cell:.1f}" y="{top + i * cell:.1f}" '
                         f'width="{cell}" height="{cell}" fill="{_blue(w[i, j])}"><title>'
                         f'{_esc(rows[i])} / {_esc(cols[j])}: {w[i, j]:.3f}</title></rect>')
    parts.append(f'<rect class="frame" x="{left:.1f}" y="{top:.1f}" width="{S * cell}" '
                 f'height="{T * cell}" fill="none" stroke="#888"/>')
    stops = "".join(f'<stop offset="{k / (len(_BLUES) - 1):.3f}" stop-color="{c}"/>'
                    for k, c in enumerate(_BLUES))
    parts.append(f'<defs><linearGradient id="blues-0-1" x1="0" y1="1" x2="0" y2="0">{stops}'
                 f'</linearGradient></defs>')  # 0 at the bottom of the bar, 1 at the top
    parts.append(f'<rect class="colorbar" x="{bar_x:.1f}" y="{top:.1f}" width="14" '
                 f'height="{bar_h}" fill="url(#blues-0-1)" stroke="#888"/>')
    for v, s in ((0.0, "0"), (0.5, "0.5"), (1.0, "1")):
        y = top + (1 - v) * bar_h
        parts.append(f'<line x1="{bar_x + 14:.1f}" y1="{y:.1f}" x2="{bar_x + 18:.1f}" '
                     f'y2="{y:.1f}" stroke="#333"/><text class="tick" x="{bar_x + 21:.1f}" '
                     f'y="{y + 4:.1f}">{s}</text>')
    if scale_label:  # reads upwards, right of the tick labels
        parts.append(_centred(bar_x + 58, top + bar_h / 2, scale_label, upwards=True,
                              attrs='class="scale-label" fill="#555"'))
    width = max(bar_x + (68 if scale_label else 60), 20 + len(title or "") * 15 * _CHAR_W)
    return _svg(width, top + bar_h + 12, parts, path)


def line_plot_svg(series: Mapping[str, Tuple[Sequence[float], Sequence[float]]],
                  path=None, title: Optional[str] = None, xlabel: str = "", ylabel: str = "",
                  ylim: Optional[Tuple[float, float]] = None, markers: bool = False) -> str:
    """Line plot of series {name: (xs, ys)} as a standalone SVG; also written to path if given.

    Ticks fall on round values with gridlines; the legend sits right of the plot so it never
    hides data. NaN or inf leaves a gap in a line; a point with no finite neighbour (say a
    single-point series) still shows as a dot. markers=True puts a dot on every point.
    """
    data, (x0, x1), yr = _check_series("line_plot_svg", series)
    y0, y1, yticks, yd = _nice_ticks(*(ylim or yr), n=6, expand=ylim is None)
    x0, x1, xticks, xd = _nice_ticks(x0, x1, n=7)
    ylabels = [_tick_label(t, yd) for t in yticks]
    names = [_fit(name, 40) for name, _, _ in data]
    pw, ph, cw = 480, 300, 12 * _CHAR_W  # plot area, px; width of a character
    left = 18 + (20 if ylabel else 0) + max(len(s) for s in ylabels) * cw
    top = 16 + (24 if title else 0)
    px = lambda x: left + (x - x0) / (x1 - x0) * pw
    py = lambda y: top + (y1 - y) / (y1 - y0) * ph
    parts = [f'<defs><clipPath id="plot-area"><rect x="{left:.1f}" y="{top:.1f}" '
             f'width="{pw}" height="{ph}"/></clipPath></defs>']
    parts += [f'<text class="title" x="10" y="26" font-size="15" font-weight="bold">'
              f'{_esc(title)}</text>'] if title else []
    for t, s in zip(yticks, ylabels):
        parts.append(f'<line x1="{left:.1f}" y1="{py(t):.1f}" x2="{left + pw:.1f}" '
                     f'y2="{py(t):.1f}" stroke="#e4e4e4"/><text x="{left - 6:.1f}" '
                     f'y="{py(t) + 4:.1f}" text-anchor="end">{s}</text>')
    for t in xticks:
        parts.append(f'<line x1="{px(t):.1f}" y1="{top:.1f}" x2="{px(t):.1f}" '
                     f'y2="{top + ph:.1f}" stroke="#e4e4e4"/><text x="{px(t):.1f}" '
                     f'y="{top + ph + 17:.1f}" text-anchor="middle">{_tick_label(t, xd)}</text>')
    parts.append(f'<rect class="frame" x="{left:.1f}" y="{top:.1f}" width="{pw}" height="{ph}" '
                 f'fill="none" stroke="#444"/>')
    for i, (_, xs, ys) in enumerate(data):
        colour, runs = _PALETTE[i % len(_PALETTE)], _segments(xs, ys)
        d = " ".join("M " + " L ".join(f"{px(xs[k]):.1f} {py(ys[k]):.1f}" for k in run)
                     for run in runs)
        dots = [k for run in runs for k in run if markers or len(run) == 1]
        parts.append(f'<g clip-path="url(#plot-area)"><path class="series" d="{d}" '
                     f'fill="none" stroke="{colour}" stroke-width="2"/>'
                     + "".join(f'<circle cx="{px(xs[k]):.1f}" cy="{py(ys[k]):.1f}" r="3" '
                               f'fill="{colour}"/>' for k in dots) + "</g>")
    lx = left + pw + 16
    for i, name in enumerate(names):
        y = top + 10 + 20 * i
        parts.append(f'<g class="legend"><line x1="{lx:.1f}" y1="{y}" x2="{lx + 22:.1f}" '
                     f'y2="{y}" stroke="{_PALETTE[i % len(_PALETTE)]}" stroke-width="2"/>'
                     f'<text x="{lx + 28:.1f}" y="{y + 4}">{_esc(name)}</text></g>')
    if xlabel:
        parts.append(_centred(left + pw / 2, top + ph + 38, xlabel))
    if ylabel:
        parts.append(_centred(22, top + ph / 2, ylabel, upwards=True))
    width = max(lx + 38 + max(len(n) for n in names) * cw, 20 + len(title or "") * 15 * _CHAR_W)
    return _svg(width, top + ph + (48 if xlabel else 30), parts, path)
