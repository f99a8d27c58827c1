"""The graph to draw: nodes with their labels and kinds, edges in the direction data flows,
and the grouping of nodes by scope (``collapse``).

A node is one tensor (``build``) or one group of tensors (``collapse``). Nodes are numbered in
a topological order found deterministically from the root (each node after its inputs, the
inputs visited in argument order), so the same graph always gives the same numbers.
"""
from __future__ import annotations

import dataclasses
import weakref
from dataclasses import dataclass, field

import numpy as np

from minigrad import engine
from minigrad.nn import Parameter

KINDS = ("const", "leaf", "param", "op", "root", "group")
KEEP_NODES = 500  # a graph this small keeps its shape and gradients when backward frees it,
KEEP_NUMBERS = 100_000  # so that draw_graph can draw it after backward

KEPT = {}  # id(node) -> (its parents, ∂L/∂node): what backward() kept of a small graph


def keep(node, parents: tuple, g) -> None:
    KEPT[id(node)] = parents, g  # by identity (a Tensor's == is elementwise)
    weakref.finalize(node, KEPT.pop, id(node), None)  # the entry goes with its node


def keep_small_graph(order: list):
    """``engine.on_free``: how ``backward()`` keeps the graph ``order`` it frees, if it is small
    (a training step's is not: it is freed whole, at no cost). Set when the viewer is imported."""
    small = len(order) <= KEEP_NODES and sum([n.data.size for n in order]) <= KEEP_NUMBERS
    return keep if small else None


engine.on_free = keep_small_graph


@dataclass
class Node:
    kind: str                    # one of KINDS
    title: str                   # the op, or the leaf's name, or the group's scope
    lines: list                  # shape and dtype, value, gradient (already formatted)
    scope: tuple = ()            # scope frames (see trace.py), outermost first
    highlight: bool = False      # the problem the drawing points at
    tip: str = ""                # longer text shown on hover (SVG)
    members: list = field(default_factory=list)  # a group's node numbers in the full graph


@dataclass
class Graph:
    nodes: list                  # Node, numbered by position
    edges: list                  # (from, to) node numbers, data flowing from -> to, no repeats
    tensors: list = field(default_factory=list, compare=False, repr=False)  # each node's


def summary(array) -> str:
    """The values themselves when there are at most four, else min / mean / max."""
    a = np.asarray(array)
    if a.size == 0:
        return "(empty)"
    if a.size <= 4:
        vals = [f"{v:.4g}" for v in a.reshape(-1).astype(float)]
        return vals[0] if a.ndim == 0 else "[" + " ".join(vals) + "]"
    a = a.astype(float)
    finite = np.isfinite(a)
    bad = "" if finite.all() else f" ({int((~finite).sum())} non-finite)"
    a = a[finite] if finite.any() else a
    return f"min {a.min():.4g} mean {a.mean():.4g} max {a.max():.4g}{bad}"


def _shape(a) -> str:
    return f"{tuple(np.shape(a))} {np.asarray(a).dtype}"


def _order(root, parents_of) -> list:
    """Every tensor reachable from root, each after its inputs (iterative depth-first search)."""
    order, seen = [], {root}
    stack = [(root, iter(parents_of(root)))]
    while stack:
        node, it = stack[-1]
        for p in it:
            if p not in seen:
                seen.add(p)
                stack.append((p, iter(parents_of(p))))
                break
        else:
            stack.pop()
            order.append(node)
    return order


def build(root, trace=None, names=None, highlight=(), show_grads: bool = True) -> Graph:
    """The graph of ``root`` from its recorded parents (``trace``), its live ``_parents``, or
    what ``backward()`` kept of a small graph when it freed it (``KEPT``: parents, gradient).

    ``names``: {name: tensor} for leaves (or any node) to be named; a ``trace`` adds the
    parameter names and scopes it recorded and the gradients of every node. ``highlight``:
    tensors to mark.
    """
    known = dict(trace.names) if trace is not None else {}
    known.update((t, n) for n, t in (names or {}).items())
    recorded = trace.parents if trace is not None else {}
    kept = lambda t: KEPT.get(id(t)) or (t._parents, None)  # noqa: E731  (after backward)
    parents_of = lambda t: recorded.get(t, t._parents or kept(t)[0])  # noqa: E731
    order = _order(root, parents_of)
    number = {t: i for i, t in enumerate(order)}
    marked = {id(t) for t in highlight}
    nodes, edges = [], []
    for t in order:
        ps = parents_of(t)
        kind = ("root" if t is root else "op" if ps else "param" if isinstance(t, Parameter)
                else "leaf" if t.requires_grad or t in known else "const")
        title = (f"{known[t]} = {t._op}" if t in known else t._op) if ps else \
            known.get(t, {"param": "param", "leaf": "input"}.get(kind, "constant"))
        lines = [_shape(t.data), "value " + summary(t.data)]
        grad = (t.grad if not ps else trace.grads.get(t) if trace is not None else kept(t)[1])
        if show_grads and grad is not None:
            lines.append("grad " + summary(grad))
        nodes.append(Node(kind, title, lines, (trace.scopes.get(t, ()) if trace else ()),
                          id(t) in marked))
        for p in ps:
            e = (number[p], number[t])
            if e not in edges[-len(ps):]:  # x * x: one edge
                edges.append(e)
    _scope_leaves(nodes, edges)
    return Graph(nodes, edges, order)


def _scope_leaves(nodes, edges) -> None:
    """A parameter or constant (made outside any scope) belongs where all its readers are:
    the longest scope prefix they share. Inputs that require grad stay outside the groups."""
    readers: dict = {}
    for a, b in edges:
        readers.setdefault(a, []).append(nodes[b].scope)
    for i, node in enumerate(nodes):
        if node.scope or node.kind not in ("param", "const") or i not in readers:
            continue
        common = readers[i][0]
        for s in readers[i][1:]:
            k = 0
            while k < min(len(common), len(s)) and common[k] == s[k]:
                k += 1
            common = common[:k]
        node.scope = common


def group_of(scope: tuple, depth: int, expand) -> tuple:
    """The group a node of this scope is drawn in: the shortest closed prefix of its scope
    (a prefix is open when shorter than ``depth`` or listed in ``expand``); () when every
    prefix is open, i.e. the node is drawn on its own."""
    for k in range(1, len(scope) + 1):
        if k >= depth and scope[:k] not in expand:
            return scope[:k]
    return ()


def collapse(graph: Graph, depth: int = 1, expand=()) -> Graph:
    """One box per group, with its node count, inputs and outputs; nodes outside any group stay.

    ``depth`` 1 gives one box per outermost scope (``encoder``, ``decoder``); ``expand`` lists
    groups (tuples of frames, or "a/b" strings) to open: an open group shows its own nodes and
    one box per scope inside it (``expand=["decoder"]`` gives one box per decoder step). Every edge
    between two groups (or a group and a node) of the full graph is kept, once.
    """
    if depth < 1:
        raise ValueError(f"collapse: depth must be at least 1, got {depth}")
    expand = {tuple(e.split("/")) if isinstance(e, str) else tuple(e) for e in expand}
    key_of, keys = [], {}
    for i, node in enumerate(graph.nodes):
        g = group_of(node.scope, depth, expand)
        key = ("group", g) if g else ("node", i)
        key_of.append(key)
        keys.setdefault(key, []).append(i)
    ordered = sorted(keys, key=lambda k: keys[k][-1])  # each box where its last node is
    index = {k: n for n, k in enumerate(ordered)}
    edges = []
    seen = set()
    ins, outs = {}, {}
    for a, b in graph.edges:
        ka, kb = key_of[a], key_of[b]
        if ka == kb:
            continue
        ins.setdefault(kb, set()).add(a)
        outs.setdefault(ka, set()).add(a)
        e = (index[ka], index[kb])
        if e not in seen:
            seen.add(e)
            edges.append(e)
    nodes = []
    for k in ordered:
        members = keys[k]
        if k[0] == "node":
            nodes.append(dataclasses.replace(graph.nodes[members[0]], members=list(members)))
            continue
        nodes.append(_group_node(graph, k[1], members, ins.get(k, ()), outs.get(k, ())))
    return Graph(nodes, sorted(edges))


def _group_node(graph, frames, members, ins, outs) -> Node:
    out_shapes = sorted({graph.nodes[i].lines[0] for i in outs})
    lines = [f"{len(members)} nodes, {len(ins)} in, {len(outs)} out"]
    lines += [f"out {s}" for s in out_shapes[:2]]
    if len(out_shapes) > 2:
        lines.append(f"  +{len(out_shapes) - 2} more")
    return Node("group", frames[-1], lines, frames,
                any(graph.nodes[i].highlight for i in members), "/".join(frames), list(members))
