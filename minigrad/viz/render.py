"""A ``Graph`` as text: SVG (laid out by ``layout.py``), Graphviz DOT, Mermaid, or a listing
for the terminal. Every node of the graph is one box (SVG), one node statement (DOT, Mermaid)
or one line (text); every edge one arrow. Nothing here depends on dict or set iteration
order, so a graph always gives the same bytes.
"""
from __future__ import annotations

from minigrad.draw.common import BLUES, CHAR_W, columns, fit, pad, printable
from minigrad.i18n import translator
from minigrad.draw.svg import _esc, _svg
from minigrad.viz.layout import layout

FONT = 12                 # px
LINE_H = 15               # px per label line
MAX_CHARS = 46            # a label line is cut to this many characters (the whole in the tooltip)
STYLE = {  # kind -> (fill, stroke, stroke width, corner radius, dashes, legend text)
    "const": ("#f4f4f4", "#969696", 1.0, 0, "4 3", "constant"),
    "leaf": ("#e5f5e0", "#31a354", 1.5, 0, "", "input (leaf)"),
    "param": ("#fee6ce", "#e6550d", 1.5, 0, "", "parameter"),
    "op": (BLUES[1], BLUES[5], 1.2, 8, "", "op"),
    "root": (BLUES[3], BLUES[8], 3.0, 8, "", "root (output)"),
    "group": ("#efedf5", "#756bb1", 2.0, 3, "", "group (collapsed)"),
}
HIGHLIGHT = ("#fcbba1", "#d62728", 4.0)

_ = translator("minigrad")


def _lines(node) -> list:
    """The visible label lines of a node: its title, then shape/value/grad lines."""
    title = ("▸ " if node.kind == "group" else "") + printable(node.title)  # no raw ESC, ␛
    return [fit(title, MAX_CHARS)] + [fit(s, MAX_CHARS) for s in node.lines]


def _box_size(lines) -> tuple:
    return (max(columns(s) for s in lines) * FONT * CHAR_W + 18, len(lines) * LINE_H + 10)


def _tip(i, node) -> str:
    kind = "highlighted " + node.kind if node.highlight else node.kind
    where = f"  scope {'/'.join(node.scope)}" if node.scope else ""
    return f"n{i} {kind}: {node.title}{where}\n" + "\n".join(node.lines)


def to_svg(graph, title=None) -> str:
    labels = [_lines(n) for n in graph.nodes]
    top = 58 if title else 36
    boxes, routes = layout([_box_size(ls) for ls in labels], graph.edges, margin=12)
    parts = ['<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
             'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
             'fill="#555"/></marker></defs>']
    if title:
        parts.append(f'<text class="title" x="12" y="24" font-size="15" font-weight="bold">'
                     f'{_esc(title)}</text>')
    parts.append(_legend(graph, top - 16))
    for (a, b), pts in zip(graph.edges, routes):
        d = " ".join(f"{'M' if k == 0 else 'L'} {x:.1f} {y + top:.1f}"
                     for k, (x, y) in enumerate(pts))
        parts.append(f'<g class="edge" data-from="n{a}" data-to="n{b}"><path d="{d}" fill="none" '
                     f'stroke="#666" stroke-width="1.2" marker-end="url(#arrow)"/></g>')
    for i, (node, lines, (x, y, w, h)) in enumerate(zip(graph.nodes, labels, boxes)):
        fill, stroke, sw, rx, dash, _label = STYLE[node.kind]
        if node.highlight:
            fill, stroke, sw = HIGHLIGHT
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        body = [f'<rect class="box" x="{x:.1f}" y="{y + top:.1f}" width="{w:.1f}" height="{h:.1f}" '
                f'rx="{rx}" fill="{fill}" stroke="{stroke}" stroke-width="{sw}"{extra}/>']
        for k, s in enumerate(lines):
            weight = ' font-weight="bold"' if k == 0 else ""
            body.append(f'<text x="{x + 9:.1f}" y="{y + top + 5 + LINE_H * (k + 1) - 3:.1f}"'
                        f'{weight}>{_esc(s)}</text>')
        cls = node.kind + (" highlight" if node.highlight else "")
        parts.append(f'<g class="node {cls}" id="n{i}"><title>{_esc(_tip(i, node))}</title>'
                     + "".join(body) + "</g>")
    width = max([x + w + 12 for x, _, w, _ in boxes] +
                [600, 24 + columns(title or "") * 15 * CHAR_W])
    height = max([y + h for _, y, _, h in boxes] + [0]) + top + 12
    return _svg(width, height, parts, None)


def _legend(graph, y) -> str:
    kinds = [k for k in STYLE if any(n.kind == k for n in graph.nodes)]
    items, x = [], 12.0
    entries = [(STYLE[k][0], STYLE[k][1], STYLE[k][5]) for k in kinds]
    if any(n.highlight for n in graph.nodes):
        entries.append((HIGHLIGHT[0], HIGHLIGHT[1], "the problem"))
    for fill, stroke, text in entries:
        items.append(f'<rect x="{x:.1f}" y="{y - 10}" width="14" height="12" fill="{fill}" '
                     f'stroke="{stroke}"/><text x="{x + 19:.1f}" y="{y}" font-size="11">'
                     f'{_esc(text)}</text>')
        x += 19 + columns(text) * 11 * CHAR_W + 16
    return '<g class="legend">' + "".join(items) + "</g>"


def _dot_escape(s: str) -> str:
    return printable(s).replace("\\", "\\\\").replace('"', '\\"')


def to_dot(graph, title=None) -> str:
    out = ["digraph minigrad {", "  rankdir=TB;",
           '  node [shape=box, fontname="DejaVu Sans Mono", fontsize=10];']
    if title:
        out.append(f'  label="{_dot_escape(title)}"; labelloc=t;')
    for i, node in enumerate(graph.nodes):
        fill, stroke, sw, rx, dash, _label = STYLE[node.kind]
        if node.highlight:
            fill, stroke, sw = HIGHLIGHT
        style = ["filled"] + (["rounded"] if rx else []) + (["dashed"] if dash else [])
        label = "\\n".join(_dot_escape(s) for s in _lines(node))
        out.append(f'  n{i} [label="{label}", style="{",".join(style)}", fillcolor="{fill}", '
                   f'color="{stroke}", penwidth={sw}];')
    out += [f"  n{a} -> n{b};" for a, b in graph.edges]
    return "\n".join(out + ["}"]) + "\n"


def _mermaid_escape(s: str) -> str:
    return (printable(s).replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;")
            .replace(">", "#gt;"))


def to_mermaid(graph, title=None) -> str:
    out = (["---", f"title: {_mermaid_escape(title)}", "---"] if title else []) + ["flowchart TD"]
    for i, node in enumerate(graph.nodes):
        label = "<br/>".join(_mermaid_escape(s) for s in _lines(node))
        out.append(f'  n{i}["{label}"]')
    out += [f"  n{a} --> n{b}" for a, b in graph.edges]
    for kind in STYLE:
        fill, stroke, sw = STYLE[kind][:3]
        out.append(f"  classDef {kind} fill:{fill},stroke:{stroke},stroke-width:{sw}px")
    out.append(f"  classDef highlight fill:{HIGHLIGHT[0]},stroke:{HIGHLIGHT[1]},"
               f"stroke-width:{HIGHLIGHT[2]}px")
    for i, node in enumerate(graph.nodes):
        out.append(f"  class n{i} {'highlight' if node.highlight else node.kind}")
    return "\n".join(out) + "\n"


def to_text(graph, title=None) -> str:
    """One line per node, inputs before the nodes that read them: number, kind, label, and
    the numbers of the nodes it reads (``<- n0 n1``). A highlighted node starts with ``!!``."""
    inputs: dict = {}
    for a, b in graph.edges:
        inputs.setdefault(b, []).append(a)
    out = [printable(title)] if title else []
    out.append(_("computation graph: {nodes} nodes, {edges} edges (each node after the nodes "
                 "it reads)").format(nodes=len(graph.nodes), edges=len(graph.edges)))
    memo: dict = {}
    order = sorted(range(len(graph.nodes)), key=lambda i: (_depth(i, inputs, memo), i))
    for i in order:
        node = graph.nodes[i]
        lines = _lines(node)
        reads = "  <- " + " ".join(f"n{a}" for a in inputs[i]) if i in inputs else ""
        mark = "!!" if node.highlight else "  "
        out.append(f"{mark}n{i:<4} {node.kind:<6} {pad(lines[0], 24)} "
                   f"{' | '.join(lines[1:])}{reads}")
    return "\n".join(out) + "\n"


def _depth(i, inputs, memo) -> int:
    """Longest path from a source to node i (iterative, memoised)."""
    stack = [i]
    while stack:
        v = stack[-1]
        todo = [a for a in inputs.get(v, ()) if a not in memo]
        if todo:
            stack.extend(todo)
            continue
        stack.pop()
        memo[v] = max((memo[a] + 1 for a in inputs.get(v, ())), default=0)
    return memo[i]
