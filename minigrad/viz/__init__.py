"""See the graph: a computation-graph viewer with values and gradients, NumPy only.

    from minigrad.viz import draw_graph, trace
    draw_graph(y, fmt="svg", path="y.svg")   # or "dot", "mermaid", "text"; returns the text

Each node shows its op (or a leaf's name), shape and dtype, its values (at most four, else
min / mean / max) and, after a backward, its gradient. Leaves, parameters, constants, ops and
the root are drawn differently; arrows point the way data flows.

* **Gradients on every node**: ``backward()`` keeps gradients on leaves only. Build and
  backward the graph inside ``with trace() as tr:`` and pass ``trace=tr``: every node then
  shows ``dL/d node`` (see ``minigrad/viz/trace.py``).
* **Big graphs**: inside ``trace(model)`` each Module call opens a named scope (and the
  decoders one per time step); ``collapse=1`` draws one box per outermost scope with its node
  count, inputs and outputs, and ``expand=["decoder"]`` opens a group.
* **Problems**: ``draw_anomaly(error)`` draws the graph of a ``detect_anomaly()`` error with
  the op that made NaN/inf highlighted; ``draw_gradcheck(fn, inputs)`` the graph of ``fn``
  with the op whose VJP disagrees with finite differences highlighted.

* **One page**: ``explore(root, trace=tr).save("graph.html")`` (or shown in Jupyter): the
  graph, values and gradients on hover, groups that open on a click, and a backward stepper
  (``minigrad/viz/explore.py``).

``python -m minigrad.viz`` draws micrograd's single neuron (``explore``: as a page).
"""
from __future__ import annotations

from minigrad.viz.draw import FORMATS, draw_graph, graph_of  # noqa: F401
from minigrad.viz.trace import Trace, scope, trace  # noqa: F401
from minigrad.viz.problems import draw_anomaly, draw_gradcheck, find_bad_op  # noqa: F401
from minigrad.viz.explore import explore  # noqa: F401  (the function, over the module's name)

__all__ = ["draw_graph", "graph_of", "trace", "scope", "Trace", "FORMATS", "draw_anomaly",
           "draw_gradcheck", "find_bad_op", "explore"]
