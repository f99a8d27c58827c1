"""``draw_graph``: the graph that made a tensor, as SVG, Graphviz dot, Mermaid or text."""
from __future__ import annotations

from minigrad.engine import FREED
from minigrad.draw.common import Drawing
from minigrad.files import write_text_atomic
from minigrad.viz.graph import KEEP_NODES, KEEP_NUMBERS, KEPT, Graph, build
from minigrad.viz.graph import collapse as collapse_graph
from minigrad.viz.render import to_dot, to_mermaid, to_svg, to_text
from minigrad.viz.trace import Trace

FORMATS = {"svg": to_svg, "dot": to_dot, "mermaid": to_mermaid, "text": to_text}


def graph_of(root, trace: Trace | None = None, names=None, module=None, collapse=None,
             expand=(), highlight=(), grads: bool = True) -> Graph:
    """The ``Graph`` that ``draw_graph`` draws (its arguments are described there)."""
    names = dict(names or {})
    if module is not None:
        names.update(module.named_parameters())
    graph = build(root, trace, names, highlight, grads)
    if collapse is not None or expand:
        graph = collapse_graph(graph, 1 if collapse is None else collapse, expand)
    return graph


def draw_graph(root, fmt: str = "svg", path=None, *, trace: Trace | None = None, names=None,
               module=None, collapse: int | None = None, expand=(), highlight=(),
               grads: bool = True, title: str | None = None) -> str:
    """Draw the graph that made ``root`` (a Tensor); returns the text, and writes it to
    ``path`` (atomically) when given.

    ``fmt``: "svg", "dot" (Graphviz), "mermaid" or "text". ``trace``: a ``Trace`` recorded
    around the forward (and backward): gradients of every node, scopes, parameter names, and
    a graph that survives ``backward()``. Without it the graph is read from the tensors: before
    ``backward()``, or after it (a small graph's shape and every node's gradient are kept by
    ``backward()``; a larger one needs ``retain_graph=True`` or a trace); leaves show ``.grad``.
    ``names``: {name: tensor}; ``module``: names its parameters by attribute path.
    ``collapse``: scope depth to collapse at (1: one box per outermost Module call);
    ``expand``: groups to open ("decoder", "decoder/step 3"). ``highlight``: tensors to mark.
    """
    if fmt not in FORMATS:
        raise ValueError(f"draw_graph: fmt must be one of {sorted(FORMATS)}, got {fmt!r}")
    if not hasattr(root, "_parents"):
        raise TypeError(f"draw_graph: root must be a minigrad Tensor, got {type(root).__name__}")
    if trace is None and root._vjp is FREED and id(root) not in KEPT:
        raise RuntimeError(  # backward() released a large graph: one box would mislead
            f"draw_graph: the graph that made this tensor (op '{root._op}') was freed by "
            f"backward() (graphs of at most {KEEP_NODES} nodes and {KEEP_NUMBERS:,} numbers are "
            f"kept for drawing once minigrad.viz is imported); draw it before backward(), import "
            f"minigrad.viz before it, call backward(retain_graph=True), or record it with `with "
            f"minigrad.viz.trace() as tr:` around the forward and backward and draw_graph(root, "
            f"trace=tr) (that also shows every node's gradient)")
    graph = graph_of(root, trace, names, module, collapse, expand, highlight, grads)
    text = Drawing(FORMATS[fmt](graph, title))
    if path is not None:
        write_text_atomic(path, text)
    return text
