"""Point at the problem: draw the graph with the op that went wrong highlighted.

* ``draw_anomaly(error)``: ``detect_anomaly()`` raises an ``AnomalyError`` that holds the
  tensor of the op whose forward (or VJP) produced NaN/inf and that op's inputs; the drawing
  is the graph that led to it, that op in red.
* ``find_bad_op(fn, inputs)`` / ``draw_gradcheck(fn, inputs)``: when ``gradcheck`` fails, which
  op's VJP is wrong? Each op is checked *locally* against finite differences. Run ``fn`` at
  x and at x ± ε·d (d a random direction per checked input) under ``trace``: the k-th op of
  each run is the same op, so ``ṅ = (n(x + εd) − n(x − εd)) / 2ε`` is every node's tangent.
  For a correct VJP, and any u shaped like the node's output n with inputs p_i,

      Σ u ⊙ ṅ  =  Σ_i Σ VJP(u)_i ⊙ ṗ_i        (uᵀ J ṗ, computed both ways)

  The first op (in the order ops ran) for which the two sides differ is the culprit: the
  check of an op does not depend on whether the ops before it have right VJPs.
"""
from __future__ import annotations

import numpy as np

from minigrad import engine
from minigrad.tensor import ARRAYS
from minigrad.tensor import Tensor
from minigrad.viz.draw import draw_graph
from minigrad.viz.trace import Trace, trace


def draw_anomaly(error, fmt: str = "svg", path=None, **kwargs) -> str:
    """Draw the graph of a ``detect_anomaly()`` error with the op that made NaN/inf
    highlighted; ``kwargs`` go to ``draw_graph`` (e.g. ``names=``, ``trace=``)."""
    node = getattr(error, "node", None)
    if node is None:
        raise ValueError(f"draw_anomaly: {type(error).__name__} carries no graph; pass the "
                         f"error that detect_anomaly() raised")
    tr = kwargs.pop("trace", None) or Trace()
    if not tr.parents.get(node):  # a forward under no_grad, or a node the trace missed
        tr.parents[node] = tuple(error.inputs)
    title = kwargs.pop("title", f"{error} (highlighted)")
    return draw_graph(node, fmt, path, trace=tr, highlight=[node], title=title, **kwargs)


def _leaves(inputs):
    """The inputs as fn will get them, with the indices of those checked (float64 arrays and
    Tensors that require grad) made into fresh leaves."""
    args, checked = [], []
    for i, x in enumerate(inputs):
        if isinstance(x, np.ndarray) and x.dtype == np.float64:
            x = Tensor(x, requires_grad=True)
        if isinstance(x, Tensor) and x.requires_grad:
            checked.append(i)
        args.append(x)
    return args, checked


def _run(fn, args):
    with trace(grads=False) as tr:
        out = fn(*args)
    return out, tr


def find_bad_op(fn, inputs, eps: float = 1e-6, rtol: float = 1e-5, rng=None):
    """``(out, trace, node)``: ``fn(*inputs)``, its trace, and the first op whose VJP
    disagrees with finite differences (None if every op agrees or the runs differ)."""
    rng = np.random.default_rng(0) if rng is None else rng
    args, checked = _leaves(list(inputs) if isinstance(inputs, (list, tuple)) else [inputs])
    out, tr = _run(fn, args)
    tr.names.update((args[i], f"input {i}") for i in checked)
    direction = {args[i]: rng.standard_normal(args[i].shape) for i in checked}
    runs = []
    for sign in (1.0, -1.0):
        moved = list(args)
        for i in checked:
            moved[i] = Tensor(args[i].data + sign * eps * direction[args[i]], requires_grad=True)
        runs.append(_run(fn, moved)[1].nodes)
    if not all(len(r) == len(tr.nodes) for r in runs):
        return out, tr, None  # fn did not run the same ops: no node-by-node comparison
    tangent = dict(direction)
    for node, plus, minus in zip(tr.nodes, *runs):
        tangent[node] = (plus.data.astype(np.float64) - minus.data) / (2 * eps)
    for node in tr.nodes:
        if not _agrees(node, tr.parents[node], tangent, rng, rtol):
            return out, tr, node
    return out, tr, None


def _agrees(node, parents, tangent, rng, rtol) -> bool:
    u = rng.standard_normal(node.shape)
    lhs = float(np.sum(u * tangent[node]))
    terms = [abs(lhs)]
    rhs = 0.0
    for p, g in zip(parents, node._vjp(ARRAYS, u, node.data, *[q.data for q in parents])):
        if g is None or p not in tangent:
            continue
        g = engine.unbroadcast(np.asarray(g, dtype=np.float64), p.shape, np.float64, node._op)
        term = float(np.sum(g * tangent[p]))
        rhs += term
        terms.append(abs(term))
    return abs(lhs - rhs) <= rtol * (1.0 + max(terms))


def draw_gradcheck(fn, inputs, fmt: str = "svg", path=None, **kwargs) -> str:
    """Draw ``fn(*inputs)`` with the op whose VJP is wrong highlighted (see ``find_bad_op``);
    the title says which op, or that none could be singled out."""
    out, tr, bad = find_bad_op(fn, inputs)
    title = kwargs.pop("title", None) or (
        f"gradcheck: the VJP of op '{bad._op}' disagrees with finite differences (highlighted)"
        if bad is not None else "gradcheck: no single op's VJP disagrees with finite differences")
    return draw_graph(out, fmt, path, trace=tr, highlight=[bad] if bad is not None else [],
                      title=title, **kwargs)
