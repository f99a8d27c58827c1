"""Pictures as standalone SVG documents: a heatmap with a colour bar, and a line plot (with
an optional second y axis on the right).

``grid_svg`` lays several documents out as one (a heatmap per attention head, say).

Heatmaps use a fixed 0..1 scale, so two pictures of weights can be compared by eye. Tokens are
shown visibly: a space becomes "␣" and a control character its Unicode control picture
(U+2400 + code), since XML cannot hold most of them. A document is also written to ``path``
when one is given, atomically (``minigrad.files``).
"""
from __future__ import annotations

import html
import math
import re
from typing import Mapping, Optional, Sequence, Tuple

import numpy as np

from minigrad.draw.common import columns as _cols  # text width: a CJK character is 2 columns
from minigrad.draw.common import (BLUES, Drawing, CHAR_W, PALETTE, blue, check_heatmap,
                                  check_series, fit, nice_ticks, printable, segments, tick_label,
                                  token)
from minigrad.files import write_text_atomic


def _svg(width: float, height: float, parts: Sequence[str], path) -> str:
    """Wrap parts in a standalone SVG document on a white page; write it to path if given."""
    width, height = math.ceil(width), math.ceil(height)
    text = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans Mono, Menlo, monospace" '
            f'font-size="12">\n<rect class="page" width="100%" height="100%" fill="white"/>\n'
            + "\n".join(parts) + "\n</svg>\n")
    text = Drawing(text)  # shows as the picture in Jupyter
    if path is not None:
        write_text_atomic(path, text)
    return text


def _esc(s: str) -> str:
    """Text for XML: printable (``common.printable``; line breaks kept, for tooltips), then
    escaped: tokens such as "<", "&" and '"' do occur."""
    return html.escape("\n".join(printable(part) for part in str(s).split("\n")), quote=True)


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
    w = check_heatmap("heatmap_svg", weights, row_labels, col_labels)  # (T, S)
    T, S = w.shape
    cell = int(np.clip(480 // max(T, S), 10, 28))  # px per cell
    fs = min(12, cell - 2)  # label font size, px
    rows, cols = [token(r, 16) for r in row_labels], [token(c, 16) for c in col_labels]
    turned = [_cols(c) * fs * CHAR_W > cell - 2 for c in cols]  # too wide to stand upright
    label_h = max(_cols(c) * fs * CHAR_W if t else fs for c, t in zip(cols, turned))
    band = 38 if title else 12  # top of the column titles; the title's baseline is at 26
    col_title_y = band + 12
    band += 18 if col_title else 0
    top = band + label_h + 6  # the grid's top edge; labels end 6 px above it
    left = 16 + (16 if row_title else 0) + max(_cols(r) for r in rows) * fs * CHAR_W
    scale_h = _cols(scale_label or "") * 12 * CHAR_W + 8
    bar_x, bar_h = left + S * cell + 16, max(T * cell, 100, scale_h)
    parts = [f'<text class="title" x="10" y="26" font-size="15" font-weight="bold">'
             f'{_esc(title)}</text>'] if title else []
    if col_title:
        parts.append(_centred(left + S * cell / 2, col_title_y, col_title,
                              attrs='class="col-title" fill="#555"'))
    if row_title:
        parts.append(_centred(20, top + T * cell / 2, row_title, upwards=True,
                              attrs='class="row-title" fill="#555"'))
    parts += _cell_labels(rows, cols, turned, left, top, cell, fs)
    for i in range(T):
        for j in range(S):
            parts.append(f'<rect class="cell" x="{left + j * cell:.1f}" y="{top + i * cell:.1f}" '
                         f'width="{cell}" height="{cell}" fill="{blue(w[i, j])}"><title>'
                         f'{_esc(rows[i])} / {_esc(cols[j])}: {w[i, j]:.3f}</title></rect>')
    parts.append(f'<rect class="frame" x="{left:.1f}" y="{top:.1f}" width="{S * cell}" '
                 f'height="{T * cell}" fill="none" stroke="#888"/>')
    parts += _colour_bar(bar_x, top, bar_h, scale_label)
    width = max(bar_x + (68 if scale_label else 60), 20 + _cols(title or "") * 15 * CHAR_W)
    return _svg(width, top + bar_h + 12, parts, path)


def _cell_labels(rows: list, cols: list, turned: list, left: float, top: float, cell: int,
                 fs: int) -> list:
    """Row labels right-aligned left of the grid; column labels above it, upright or turned."""
    parts = [f'<text x="{left - 6:.1f}" y="{top + (i + 0.5) * cell + fs * 0.35:.1f}" '
             f'font-size="{fs}" text-anchor="end">{_esc(r)}</text>' for i, r in enumerate(rows)]
    for j, (c, turn) in enumerate(zip(cols, turned)):
        x = left + (j + 0.5) * cell
        place = (f'transform="translate({x + fs * 0.35:.1f},{top - 6:.1f}) rotate(-90)"' if turn
                 else f'x="{x:.1f}" y="{top - 6:.1f}" text-anchor="middle"')
        parts.append(f'<text class="col-label" {place} font-size="{fs}">{_esc(c)}</text>')
    return parts


def _colour_bar(bar_x: float, top: float, bar_h: float, scale_label: Optional[str]) -> list:
    """The 0..1 colour bar at (bar_x, top), bar_h tall: ticks 0, 0.5, 1 and the scale label."""
    stops = "".join(f'<stop offset="{k / (len(BLUES) - 1):.3f}" stop-color="{c}"/>'
                    for k, c in enumerate(BLUES))
    parts = [f'<defs><linearGradient id="blues-0-1" x1="0" y1="1" x2="0" y2="0">{stops}'
             f'</linearGradient></defs>',  # 0 at the bottom of the bar, 1 at the top
             f'<rect class="colorbar" x="{bar_x:.1f}" y="{top:.1f}" width="14" '
             f'height="{bar_h}" fill="url(#blues-0-1)" stroke="#888"/>']
    for v, s in ((0.0, "0"), (0.5, "0.5"), (1.0, "1")):
        y = top + (1 - v) * bar_h
        parts.append(f'<line x1="{bar_x + 14:.1f}" y1="{y:.1f}" x2="{bar_x + 18:.1f}" '
                     f'y2="{y:.1f}" stroke="#333"/><text class="tick" x="{bar_x + 21:.1f}" '
                     f'y="{y + 4:.1f}">{s}</text>')
    if scale_label:  # reads upwards, right of the tick labels
        parts.append(_centred(bar_x + 58, top + bar_h / 2, scale_label, upwards=True,
                              attrs='class="scale-label" fill="#555"'))
    return parts


def line_plot_svg(series: Mapping[str, Tuple[Sequence[float], Sequence[float]]],
                  path=None, title: Optional[str] = None, xlabel: str = "", ylabel: str = "",
                  ylim: Optional[Tuple[float, float]] = None, markers: bool = False,
                  right: Optional[Mapping[str, Tuple[Sequence[float], Sequence[float]]]] = None,
                  right_label: str = "", right_lim: Optional[Tuple[float, float]] = None) -> str:
    """Line plot of series {name: (xs, ys)} as a standalone SVG; also written to path if given.

    Ticks fall on round values with gridlines; the legend sits right of the plot so it never
    hides data. NaN or inf leaves a gap in a line; a point with no finite neighbour (say a
    single-point series) still shows as a dot. markers=True puts a dot on every point.
    ``right``: more series on a second y axis, on the right, with its own ticks, ``right_label``
    and ``right_lim`` (quantities of another scale, such as a loss and an accuracy); they are
    drawn dashed with a dot on every point, and their line in the legend is dashed.
    """
    data, (x0, x1), yr = check_series("line_plot_svg", series)
    rdata, rx, rr = check_series("line_plot_svg", right) if right else ([], (x0, x1), None)
    x0, x1 = min(x0, rx[0]), max(x1, rx[1])
    y0, y1, yticks, yd = nice_ticks(*(ylim or yr), n=6, expand=ylim is None)
    x0, x1, xticks, xd = nice_ticks(x0, x1, n=7)
    ylabels = [tick_label(t, yd) for t in yticks]
    names = [fit(name, 40) for name, _, _ in data + rdata]
    pw, ph, cw = 480, 300, 12 * CHAR_W  # plot area, px; width of a character
    left = 18 + (20 if ylabel else 0) + max(_cols(s) for s in ylabels) * cw
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
                     f'y="{top + ph + 17:.1f}" text-anchor="middle">{tick_label(t, xd)}</text>')
    parts.append(f'<rect class="frame" x="{left:.1f}" y="{top:.1f}" width="{pw}" height="{ph}" '
                 f'fill="none" stroke="#444"/>')
    parts += [_series_path(xs, ys, PALETTE[i % len(PALETTE)], px, py, markers)
              for i, (_, xs, ys) in enumerate(data)]
    lx = left + pw + 16
    if rdata:
        axis, lx = _right_axis(rdata, len(data), rr, right_label, right_lim, left + pw, top, ph,
                               px)
        parts += axis
    parts += _legend(names, lx, top, dashed_from=len(data) if rdata else None)
    if xlabel:
        parts.append(_centred(left + pw / 2, top + ph + 38, xlabel))
    if ylabel:
        parts.append(_centred(22, top + ph / 2, ylabel, upwards=True))
    width = max(lx + 38 + max(_cols(n) for n in names) * cw, 20 + _cols(title or "") * 15 * CHAR_W)
    return _svg(width, top + ph + (48 if xlabel else 30), parts, path)


def _right_axis(rdata, first: int, yr, label: str, ylim, x: float, top: float, ph: float,
                px) -> tuple:
    """The second y axis at x (the plot's right edge): its ticks, its label and its series
    (colours go on from the ``first`` left series, drawn dashed); returns (parts, legend x)."""
    y0, y1, ticks, decimals = nice_ticks(*(ylim or yr), n=6, expand=ylim is None)
    py = lambda y: top + (y1 - y) / (y1 - y0) * ph
    labels = [tick_label(t, decimals) for t in ticks]
    parts = [f'<g class="right-axis"><line x1="{x:.1f}" y1="{py(t):.1f}" x2="{x + 4:.1f}" '
             f'y2="{py(t):.1f}" stroke="#444"/><text x="{x + 7:.1f}" y="{py(t) + 4:.1f}">'
             f'{s}</text></g>' for t, s in zip(ticks, labels)]
    parts += [_series_path(xs, ys, PALETTE[(first + i) % len(PALETTE)], px, py, True,
                           dash=True) for i, (_, xs, ys) in enumerate(rdata)]
    lx = x + 12 + max(_cols(s) for s in labels) * 12 * CHAR_W
    if label:  # rotated text's glyphs lie left of its baseline: the baseline 16 px further
        parts.append(_centred(lx + 16, top + ph / 2, label, upwards=True,
                              attrs='class="right-label"'))
        lx += 24
    return parts, lx + 10


def _series_path(xs, ys, colour: str, px, py, markers: bool, dash: bool = False) -> str:
    """One series, clipped to the plot: a path per run of finite points, and dots on every
    point (``markers``) or only on points with no finite neighbour; dashed if ``dash``."""
    runs = segments(xs, ys)
    d = " ".join("M " + " L ".join(f"{px(xs[k]):.1f} {py(ys[k]):.1f}" for k in run)
                 for run in runs)
    dots = [k for run in runs for k in run if markers or len(run) == 1]
    style = ' stroke-dasharray="6 3"' if dash else ""
    return (f'<g clip-path="url(#plot-area)"><path class="series" d="{d}" '
            f'fill="none" stroke="{colour}" stroke-width="2"{style}/>'
            + "".join(f'<circle cx="{px(xs[k]):.1f}" cy="{py(ys[k]):.1f}" r="3" '
                      f'fill="{colour}"/>' for k in dots) + "</g>")


def _legend(names: Sequence[str], lx: float, top: float, dashed_from: Optional[int] = None) -> list:
    """A line of each series' colour and its name, one under the other, from (lx, top); the
    lines from index ``dashed_from`` on are dashed (the right axis's series)."""
    parts = []
    for i, name in enumerate(names):
        y = top + 10 + 20 * i
        dash = ' stroke-dasharray="6 3"' if dashed_from is not None and i >= dashed_from else ""
        parts.append(f'<g class="legend"><line x1="{lx:.1f}" y1="{y}" x2="{lx + 22:.1f}" '
                     f'y2="{y}" stroke="{PALETTE[i % len(PALETTE)]}" stroke-width="2"{dash}/>'
                     f'<text x="{lx + 28:.1f}" y="{y + 4}">{_esc(name)}</text></g>')
    return parts


def grid_svg(documents: Sequence[str], columns: int, path=None,
             title: Optional[str] = None, gap: int = 10) -> str:
    """Several SVG documents (``heatmap_svg`` ones, say) as one, laid out in a grid of
    ``columns`` columns, row by row; each keeps its own size. Written to path if given."""
    if not documents or columns < 1:
        raise ValueError(f"grid_svg: need at least one document and columns >= 1, got "
                         f"{len(documents)} documents, columns={columns}")
    sizes = []
    for k, doc in enumerate(documents):
        m = re.match(r'<svg [^>]*width="(\d+)" height="(\d+)"', doc)
        if m is None:
            raise ValueError(f"grid_svg: document {k} is not one of ours (no <svg width height>)")
        sizes.append((int(m.group(1)), int(m.group(2))))
    rows = [list(range(i, min(i + columns, len(documents))))
            for i in range(0, len(documents), columns)]
    col_w = [max(sizes[r[c]][0] for r in rows if c < len(r)) for c in range(columns)]
    y = 38 if title else gap
    parts = [f'<text class="title" x="10" y="26" font-size="15" font-weight="bold">'
             f'{_esc(title)}</text>'] if title else []
    for row in rows:
        x = gap
        for c, k in enumerate(row):
            parts.append(documents[k].replace("<svg ", f'<svg x="{x}" y="{y}" ', 1).rstrip())
            x += col_w[c] + gap
        y += max(sizes[k][1] for k in row) + gap
    width = max(gap + sum(col_w[:columns]) + gap * columns, 20 + _cols(title or "") * 15 * CHAR_W)
    return _svg(width, y, parts, path)
