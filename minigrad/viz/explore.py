"""``explore(root)``: one self-contained HTML page of the graph and its backward pass: every
node's name, shape, dtype, value and dL/dnode (L = Σ root), groups per Module call that open on
a click, a search box, and a stepper through the backward pass one VJP at a time, in the
engine's order (``engine.topological_order``) or the naive recursive one (micrograd #64). Its
numbers come from calling each VJP here, as ``engine.run_backward`` does, on the living graph
(before ``backward()``, or after ``retain_graph=True``). Script and style are ``explore.js``
and ``.css`` beside this file, the data one JSON block, the words ``explore.json``; nothing is
fetched (a Content-Security-Policy forbids it) and the same graph gives the same bytes.
"""
from __future__ import annotations

import base64
import hashlib
import html
import json
import os
from pathlib import Path

import numpy as np

from minigrad import i18n
from minigrad.draw.common import printable
from minigrad.engine import FREED, topological_order, unbroadcast
from minigrad.files import write_text_atomic
from minigrad.tensor import ARRAYS
from minigrad.viz.graph import build
from minigrad.viz.layout import layout

SMALL = 16          # an array of at most this many numbers is embedded whole, else summarised
NAIVE_STEPS = 200   # the naive order, exponential on reused nodes: for graphs this small only
MARK = "<!-- minigrad.viz.explore -->"  # a page we made: the only file save() replaces
HERE = Path(__file__).resolve().parent
_ = i18n.translator("minigrad")


def strings() -> dict:
    """The page's words (``explore.json``, English), in the current language (the catalogs)."""
    english = json.loads((HERE / "explore.json").read_text(encoding="utf-8"))
    return {key: _(text) for key, text in english.items()}


def _num(x) -> float | str:
    return float(f"{x:.6g}") if np.isfinite(x) else str(x)  # JSON has no NaN or inf


def _arr(a, hist: bool = False):
    """A small array whole (flat), else its min, mean, max (and an 8-bin histogram)."""
    a = np.asarray(a, dtype=float)
    if a.size <= SMALL:
        return [_num(x) for x in a.reshape(-1)]
    f = a[np.isfinite(a)] if np.isfinite(a).any() else np.zeros(1)
    out = {"min": _num(f.min()), "mean": _num(f.mean()), "max": _num(f.max()),
           "bad": int(a.size - f.size)}
    return {**out, "hist": np.histogram(f, 8)[0].tolist()} if hist else out


def rounded(a) -> list:
    """``a`` as nested lists of numbers to 6 digits (non-finite ones as text), as the page shows."""
    return np.frompyfunc(_num, 1, 1)(np.asarray(a, dtype=float)).tolist()


def read_numbers(trace, node: int, c, e, h) -> dict:
    """The attention panel's numbers (``explore.js``) for a traced read c = Σ_j α_j h_j of scores
    e: g·h_j, g·c (g = ∂L/∂c, kept by the trace) and the engine's ∂L/∂e_j; leading axes stay."""
    g = trace.grads[c][0]                                             # ([h, T,] D)
    return {"node": node, "gh": rounded(g @ h.data[0].swapaxes(-1, -2)),  # ([h, T,] S)
            "gc": rounded((g * c.data[0]).sum(-1, keepdims=True)), "de": rounded(trace.grads[e][0])}


def _vjp(t, g, num, sums) -> list:
    """One step: t's VJP on g; each input's share is added to its running sum ``sums``:
    [input, share] for a first share, [input, share, sum so far] for a later one."""
    if t._vjp is FREED:  # a part of the graph that an earlier backward() released
        raise ValueError(f"explore: op '{t._op}' in this graph was freed by backward(); "
                         f"build the graph again, or use backward(retain_graph=True)")
    to, shares = [], t._vjp(ARRAYS, g, t.data, *[p.data for p in t._parents])
    for p, share in zip(t._parents, shares):
        if share is not None and p.requires_grad:
            share = unbroadcast(share, p.data.shape, p.data.dtype, t._op)
            to.append([num[p], _arr(share)] + ([_arr(sums[p] + share)] if p in sums else []))
            sums[p] = sums[p] + share if p in sums else share
    return to


def backward_steps(root, num) -> tuple:
    """The engine's order, one VJP per step; and the naive recursion ``visit(t): vjp(t) with
    its sum so far, then visit each input``, flagged where g is not yet dL/dt or t runs again."""
    order, seed = topological_order([root]), np.ones_like(root.data)
    sums, steps = {root: seed}, []
    for t in reversed(order):
        if t in sums and callable(t._vjp):
            steps.append({"n": num[t], "g": _arr(sums[t]), "to": _vjp(t, sums[t], num, sums)})
    naive, stack, done, seen = [], [root] if len(order) <= NAIVE_STEPS else [], set(), {root: seed}
    while stack and len(naive) < NAIVE_STEPS:
        t = stack.pop()
        if t in seen and callable(t._vjp):  # (an input no share reached is not visited)
            g = seen[t]
            wrong = t in done or not np.allclose(g, sums.get(t, 0 * g), rtol=1e-9, atol=0)
            naive.append({"n": num[t], "g": _arr(g), "to": _vjp(t, g, num, seen),
                          "wrong": "again" if t in done else "early" if wrong else ""})
            done.add(t)
            stack.extend(reversed(t._parents))
    return [num[t] for t in order], steps, naive, sums, bool(stack)


def _data(root, trace, names, title) -> tuple:
    if not hasattr(root, "_parents"):
        raise TypeError(f"explore: root must be a minigrad Tensor, got {type(root).__name__}")
    if root._vjp is FREED or not root._parents:
        raise ValueError(f"explore: the graph that made this tensor (op '{root._op}') is "
                         f"{'freed' if root._vjp is FREED else 'empty (a leaf)'}; call explore "
                         f"before backward(), or use backward(retain_graph=True)")
    graph = build(root, trace, names)
    num = {t: i for i, t in enumerate(graph.tensors)}
    kept = dict(trace.grads) if trace is not None else {}  # a traced VJP keeps its g: the
    order, steps, naive, sums, cut = backward_steps(root, num)  # naive replay's must not stay
    if trace is not None:
        trace.grads.clear(), trace.grads.update(kept)
    boxes = layout([(8 * len(n.title) + 20, 40) for n in graph.nodes], graph.edges)[0]
    nodes = [{"t": printable(n.title), "k": n.kind, "s": list(t.data.shape),
              "d": str(t.data.dtype), "sc": [printable(f) for f in n.scope],
              "x": round(box[0] + box[2] / 2),  # the page orders a row by x, from layout.py
              "in": [num[p] for p in t._parents],
              "v": _arr(t.data, True), "g": _arr(sums[t], True) if t in sums else None}
             for n, t, box in zip(graph.nodes, graph.tensors, boxes)]
    return {"title": printable(title or ""), "nodes": nodes, "order": order, "steps": steps,
            "naive": naive, "naive_cut": cut, "strings": strings(), "lang": i18n.current()}, num


class Explorer:
    """The page of ``data``: ``save(path)`` writes it, ``_repr_html_()`` shows it in Jupyter."""

    def __init__(self, data: dict, num=None):
        self.data = data  # JSON-able; a caller may add to it (models/app/explore.py does)
        self.num = num or {}  # {tensor: its node's number}, for a caller that links to nodes

    @property
    def html(self) -> str:
        script, style = ((HERE / f).read_text(encoding="utf-8") for f in ("explore.js",
                                                                           "explore.css"))
        blob = json.dumps(self.data, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
        blob = blob.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        sha = lambda s: base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()  # noqa
        csp = (f"default-src 'none'; script-src 'sha256-{sha(script)}'; "
               f"style-src 'sha256-{sha(style)}'; base-uri 'none'; form-action 'none'")
        return (f'<!DOCTYPE html>{MARK}\n<html lang="{html.escape(self.data["lang"])}"><head>'
                f'<meta charset="utf-8">\n'
                f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
                f'<title>minigrad explorer</title><style>{style}</style></head>\n'
                f'<body><script type="application/json" id="data">{blob}</script>\n'
                f'<script>{script}</script></body></html>\n')

    def save(self, path) -> str:
        """Write the page (atomically); a file there that is not such a page is refused."""
        if os.path.exists(path) and not (os.path.isfile(path) and _ours(path)):
            raise FileExistsError(f"explore: {path} exists and is not an explorer page; "
                                  f"it is not replaced: choose another path")
        return write_text_atomic(path, self.html)

    def _repr_html_(self) -> str:  # sandboxed: the page's script runs in its own frame
        return (f'<iframe sandbox="allow-scripts" style="width:100%;height:640px;border:0" '
                f'srcdoc="{html.escape(self.html, quote=True)}"></iframe>')


def _ours(path) -> bool:
    with open(path, "rb") as f:  # a page save() wrote starts with MARK
        return MARK.encode() in f.read(99)


def explore(root, trace=None, names=None, title: str | None = None) -> Explorer:
    """The explorer page of the graph that made ``root`` (a Tensor whose graph is alive).
    ``trace``: a ``minigrad.viz.trace`` recorded around the forward (scopes, parameter names);
    ``names``: {name: tensor}, as for ``draw_graph``."""
    return Explorer(*_data(root, trace, names, title))
