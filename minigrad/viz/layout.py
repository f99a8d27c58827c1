"""A layered (Sugiyama-style) layout: boxes in rows by depth, data flowing downwards.

1. **Layers.** A node's layer is the length of the longest path to it from a source, so every
   edge points down; a source (a leaf) is then moved down to just above its first reader.
2. **Long edges** spanning several layers get a thin dummy node in each layer they cross, so
   they are routed between boxes rather than through them; the long edges of one source
   share their dummies (one line runs down, branching off to each reader).
3. **Order.** Within each layer nodes are sorted by the barycentre (mean position) of their
   neighbours in the layer above, then the layer below, sweeping down and up; the ordering
   with the fewest edge crossings seen is kept (crossings counted as inversions).
4. **Coordinates.** Each node wants the mean x of its neighbours; the wanted positions are
   made feasible (no overlap, order kept) by pushing right from the left and left from the
   right and averaging the two. Rows are stacked with a fixed gap.

Every step breaks ties by node number and uses no randomness, so the same graph always gets
the same picture.
"""
from __future__ import annotations

import bisect
import heapq

ITERATIONS = 8   # down+up sweeps of the ordering and of the coordinate passes
DUMMY_W = 6      # width of a long edge's dummy node, px


def _topological(n: int, edges) -> list:
    """Node numbers, each after its predecessors; smallest number first among the ready."""
    indeg, succ = [0] * n, [[] for _ in range(n)]
    for a, b in edges:
        succ[a].append(b)
        indeg[b] += 1
    ready = [v for v in range(n) if indeg[v] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        v = heapq.heappop(ready)
        order.append(v)
        for w in succ[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                heapq.heappush(ready, w)
    if len(order) != n:
        raise ValueError("layout: the graph has a cycle; only acyclic graphs can be layered")
    return order


def _layers(n: int, edges) -> list:
    pred, succ = [[] for _ in range(n)], [[] for _ in range(n)]
    for a, b in edges:
        pred[b].append(a)
        succ[a].append(b)
    layer = [0] * n
    for v in _topological(n, edges):
        layer[v] = max((layer[u] + 1 for u in pred[v]), default=0)
    for v in range(n):
        if not pred[v] and succ[v]:
            layer[v] = min(layer[w] for w in succ[v]) - 1
    return layer


def _crossings(rows, down) -> int:
    """Edge crossings between consecutive rows: inversions of the lower ends' positions."""
    total = 0
    for upper, lower in zip(rows, rows[1:]):
        pos = {v: i for i, v in enumerate(lower)}
        ends = sorted((i, pos[w]) for i, v in enumerate(upper) for w in down[v])
        seen = []
        for _, p in ends:
            total += len(seen) - bisect.bisect_right(seen, p)
            bisect.insort(seen, p)
    return total


def _order(rows, up, down) -> list:
    """Barycentre sweeps; returns the rows with the fewest crossings seen."""
    best, best_c = [list(r) for r in rows], _crossings(rows, down)
    for it in range(2 * ITERATIONS):
        sweep = range(1, len(rows)) if it % 2 == 0 else range(len(rows) - 2, -1, -1)
        near = up if it % 2 == 0 else down
        for li in sweep:
            ref = rows[li - 1] if it % 2 == 0 else rows[li + 1]
            pos = {v: i for i, v in enumerate(ref)}
            keyed = []
            for i, v in enumerate(rows[li]):
                ns = [pos[u] for u in near[v] if u in pos]
                keyed.append((sum(ns) / len(ns) if ns else i, i, v))
            rows[li] = [v for _, _, v in sorted(keyed)]
        c = _crossings(rows, down)
        if c < best_c:
            best, best_c = [list(r) for r in rows], c
    return best


def _place(row, want, width, gap) -> dict:
    """x centres as near ``want`` as the order and the gaps allow (no two boxes overlap)."""
    sep = [width[a] / 2 + width[b] / 2 + (gap if min(width[a], width[b]) > DUMMY_W else 4)
           for a, b in zip(row, row[1:])]
    right = [want[v] for v in row]
    for i in range(1, len(row)):
        right[i] = max(right[i], right[i - 1] + sep[i - 1])
    left = [want[v] for v in row]
    for i in range(len(row) - 2, -1, -1):
        left[i] = min(left[i], left[i + 1] - sep[i])
    return {v: (l + r) / 2 for v, l, r in zip(row, left, right)}


def _coordinates(rows, up, down, width, gap) -> dict:
    x = {}
    for row in rows:
        at = 0.0
        for v in row:
            x[v] = at + width[v] / 2
            at += width[v] + gap
    for it in range(2 * ITERATIONS):
        near = up if it % 2 == 0 else down
        for row in (rows if it % 2 == 0 else rows[::-1]):
            want = {v: (sum(x[u] for u in near[v]) / len(near[v]) if near[v] else x[v])
                    for v in row}
            x.update(_place(row, want, width, gap))
    return x


def layout(sizes, edges, gap_x: float = 28, gap_y: float = 46, margin: float = 12):
    """Boxes ``(x, y, w, h)`` for nodes of ``sizes`` ``(w, h)`` and, for each edge, the points
    of its route from the bottom of its first box to the top of its second."""
    n = len(sizes)
    layer = _layers(n, edges)
    n_rows = max(layer, default=-1) + 1
    width = [w for w, _ in sizes]
    up, down = [[] for _ in range(n)], [[] for _ in range(n)]
    bus: dict = {}  # (source, layer) -> the source's dummy node in that layer
    chains = []
    for a, b in edges:  # long edges: one dummy per layer crossed, shared by a source's edges
        chain, prev = [], a
        for li in range(layer[a] + 1, layer[b]):
            d = bus.get((a, li))
            if d is None:
                d = bus[(a, li)] = len(width)
                width.append(DUMMY_W)
                layer.append(li)
                up.append([prev]), down.append([])
                down[prev].append(d)
            chain.append(d)
            prev = d
        down[prev].append(b)
        up[b].append(prev)
        chains.append(chain)
    rows = [[] for _ in range(n_rows)]
    for v in range(len(width)):
        rows[layer[v]].append(v)
    rows = _order(rows, up, down)
    x = _coordinates(rows, up, down, width, gap_x)
    shift = margin - min((x[v] - width[v] / 2 for v in x), default=0)
    row_h = [max((sizes[v][1] for v in row if v < n), default=0) for row in rows]
    tops = [margin]
    for h in row_h[:-1]:
        tops.append(tops[-1] + h + gap_y)
    boxes = [(x[v] + shift - sizes[v][0] / 2, tops[layer[v]], sizes[v][0], sizes[v][1])
             for v in range(n)]
    routes = []
    for (a, b), chain in zip(edges, chains):
        pts = []
        for d in chain:
            top = tops[layer[d]]
            pts += [(x[d] + shift, top - 6), (x[d] + shift, top + row_h[layer[d]] + 6)]
        routes.append(pts)
    return boxes, _ports(boxes, edges, routes)


def _ports(boxes, edges, routes) -> list:
    """Spread the ends of a box's edges along its bottom (outgoing) and top (incoming) side
    in the order of where they go, so arrows do not pile onto one point; edges that go on
    along the same shared dummy line leave from one point."""
    outs, ins = {}, {}
    for k, (a, b) in enumerate(edges):
        bx, ax = boxes[b], boxes[a]
        nxt = routes[k][0] if routes[k] else (bx[0] + bx[2] / 2, b)
        prev = routes[k][-1] if routes[k] else (ax[0] + ax[2] / 2, a)
        outs.setdefault(a, {}).setdefault(nxt, []).append(k)
        ins.setdefault(b, {}).setdefault(prev, []).append(k)
    start, end = {}, {}
    for ends, at, bottom in ((outs, start, True), (ins, end, False)):
        for v, by_point in ends.items():
            x, y, w, h = boxes[v]
            for i, point in enumerate(sorted(by_point)):
                for k in by_point[point]:
                    at[k] = (x + w * (i + 1) / (len(by_point) + 1), y + h if bottom else y)
    return [[start[k]] + routes[k] + [end[k]] for k in range(len(edges))]
