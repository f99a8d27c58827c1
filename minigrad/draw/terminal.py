"""Pictures as terminal text: a heatmap in shade characters and a line plot in markers.

Heatmaps use a fixed 0..1 scale (never rescaled to the matrix maximum), so two pictures of
weights can be compared by eye.
"""
from __future__ import annotations

from typing import Mapping, Optional, Sequence, Tuple

import numpy as np

from minigrad.i18n import translator
from minigrad.draw.common import (MARKERS, SHADE_EDGES, SHADES, Drawing, check_heatmap, columns,
                                  pad, check_series, fit, nice_ticks, segments, tick_label, token)

_ = translator("minigrad")


def heatmap_text(weights, row_labels: Sequence, col_labels: Sequence,
                 title: Optional[str] = None, max_width: int = 100) -> str:
    """An alignment heatmap for the terminal: rows are targets (T), columns sources (S).

    Each weight in [0, 1] picks a shade on a fixed scale: blank below 0.01, then ░ ▒ ▓ █ for
    the quarters [.01, .25), [.25, .5), [.5, .75), [.75, 1]. Cells are 2 characters wide when
    that fits in max_width, else 1; columns that still do not fit are cut and a note says so.
    """
    w = check_heatmap("heatmap_text", weights, row_labels, col_labels)  # (T, S)
    if max_width < 20:
        raise ValueError(f"heatmap_text: max_width must be at least 20, got {max_width}")
    rows = [token(r, min(12, max_width // 4)) for r in row_labels]
    lw = max(columns(r) for r in rows)
    room = max_width - lw - 3  # "label │cells│"
    cell = 2 if 2 * w.shape[1] <= room else 1
    shown = min(w.shape[1], room // cell)
    cols = [token(c, 8) for c in col_labels[:shown]]
    if all(columns(c) <= cell for c in cols):  # one label per column, on one line
        header = ["".join(pad(c, cell) for c in cols)]
    else:  # longer labels read downwards, one character per line
        header = ["".join(pad(c[k] if k < len(c) else " ", cell) for c in cols)
                  for k in range(max(len(c) for c in cols))]
    shades = np.searchsorted(SHADE_EDGES, w[:, :shown], side="right")  # (T, shown)
    lines = [fit(title, max_width)] if title else []
    lines += [" " * (lw + 2) + h.rstrip() for h in header]
    lines.append(" " * lw + " ┌" + "─" * (shown * cell) + "┐")
    lines += [pad(r, lw, right=True) + " │" + "".join(SHADES[s] * cell for s in row) + "│"
              for r, row in zip(rows, shades)]
    lines.append(" " * lw + " └" + "─" * (shown * cell) + "┘")
    lines.append(fit(_("scale 0-1: [ ] <.01  [░] <.25  [▒] <.5  [▓] <.75  [█] <=1"), max_width))
    if shown < w.shape[1]:
        lines.append(fit(f"(+{w.shape[1] - shown} more columns not shown)", max_width))
    return Drawing("\n".join(lines))


def line_plot_text(series: Mapping[str, Tuple[Sequence[float], Sequence[float]]],
                   width: int = 80, height: int = 20, title: Optional[str] = None,
                   xlabel: str = "", ylabel: str = "",
                   ylim: Optional[Tuple[float, float]] = None) -> str:
    """A terminal line plot, exactly `height` lines of at most `width` characters.

    Each series is drawn with its own marker character (* o + x # @ % &, later series on top);
    NaN or inf leaves a gap. Title, y label, the x axis and the legend take lines from the grid.
    """
    fn = "line_plot_text"
    data, (x0, x1), yr = check_series(fn, series)
    legend = _legend([name for name, _, _ in data], width)
    n_rows = height - bool(title) - bool(ylabel) - 2 - bool(xlabel) - len(legend)
    if n_rows < 3 or width < 20:
        raise ValueError(f"{fn}: width {width} x height {height} leaves a {n_rows}-row plot; "
                         f"need width >= 20 and at least 3 rows")
    y0, y1, yticks, yd = nice_ticks(*(ylim or yr), n=max(2, min(6, n_rows // 3 + 1)),
                                     expand=ylim is None)
    ylabels = [tick_label(t, yd) for t in yticks]
    lw = max(len(s) for s in ylabels)
    n_cols = width - lw - 2  # "label ┤grid"
    x0, x1, xticks, xd = nice_ticks(x0, x1, n=max(2, min(8, n_cols // 10)))
    col = lambda x: round((x - x0) / (x1 - x0) * (n_cols - 1))
    row = lambda y: round((y1 - y) / (y1 - y0) * (n_rows - 1))

    grid = [[" "] * n_cols for _ in range(n_rows)]  # (rows, cols) of characters
    for i, (_, xs, ys) in enumerate(data):
        for run in segments(xs, ys):
            _draw_run([(col(xs[k]), row(ys[k])) for k in run], grid, MARKERS[i % len(MARKERS)])
    at_row = {}
    for t, s in zip(yticks, ylabels):
        at_row.setdefault(row(t), s)
    lines = [fit(title, width)] if title else []
    lines += [fit(ylabel, width)] if ylabel else []
    lines += [f"{at_row.get(r, ''):>{lw}} " + ("┤" if r in at_row else "│") + "".join(g).rstrip()
              for r, g in enumerate(grid)]
    lines += _x_axis([(col(t), tick_label(t, xd)) for t in xticks], n_cols, lw, width)
    lines += [fit(xlabel.center(width).rstrip(), width)] if xlabel else []
    return Drawing("\n".join(lines + legend))


def _legend(names: Sequence[str], width: int) -> list:
    """Each series' marker and name, as many to a line as fit in ``width``."""
    legend = []
    for i, name in enumerate(names):
        entry = f"{MARKERS[i % len(MARKERS)]} {fit(name, width - 2)}"
        if legend and len(legend[-1]) + 3 + len(entry) <= width:
            legend[-1] += "   " + entry
        else:
            legend.append(entry)
    return legend


def _draw_run(pts: list, grid: list, marker: str) -> None:
    """Mark the points (column, row) of one run of finite values on ``grid``, and every cell on
    the straight line between neighbours; points outside the grid (cut off by ylim) are skipped."""
    for (c0, r0), (c1, r1) in zip(pts, pts[1:] + pts[-1:]):  # each segment, then the end
        steps = max(abs(c1 - c0), abs(r1 - r0), 1)
        for s in range(steps + 1):
            c, r = round(c0 + (c1 - c0) * s / steps), round(r0 + (r1 - r0) * s / steps)
            if 0 <= r < len(grid) and 0 <= c < len(grid[0]):
                grid[r][c] = marker


def _x_axis(ticks: list, n_cols: int, lw: int, width: int) -> list:
    """The x axis under a grid ``n_cols`` wide after a ``lw``-wide label column, with a ┬ at
    each tick (column, label), and the line of tick labels (one that would collide is skipped)."""
    axis, labels, end = list("─" * n_cols), [" "] * width, -1
    for c, s in ticks:
        axis[c] = "┬"
        start = min(max(lw + 2 + c - len(s) // 2, 0), width - len(s))
        if start > end:  # skip a label that would run into the previous one
            labels[start:start + len(s)], end = list(s), start + len(s)
    return [" " * lw + " └" + "".join(axis), "".join(labels).rstrip()]


def side_by_side(blocks: Sequence[str], gap: int = 3) -> str:
    """Text blocks (``heatmap_text`` ones, say) next to each other, tops aligned."""
    split = [b.split("\n") for b in blocks]
    widths = [max(columns(line) for line in lines) for lines in split]
    height = max(len(lines) for lines in split)
    return "\n".join((" " * gap).join(pad(lines[i] if i < len(lines) else "", w)
                                      for lines, w in zip(split, widths)).rstrip()
                     for i in range(height))
