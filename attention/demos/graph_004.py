"""Source 004's additive attention example (§6) as a computation graph, with the gradients of
§7 on its nodes (``python -m attention 004-graph``).

State A (s = −1), the article's hand-set scorer, L = g·c with g = (1, 0.5) as in the
``004-gradient`` demo. The scorer is the composed core (linear, add, tanh, the product with
v; no kernels) and the read composed too (``attend``: softmax, then the weighted sum), so each
formula of the article is one box:

    e_j = vᵀ tanh(W_s s + W_h h_j + b),   α = softmax(e),   c = Σ_j α_j h_j,   L = g·c

``trace`` keeps ∂L/∂node for every node, so the scores' box shows ∂L/∂e_j = α_j g·(h_j − c),
the numbers the ``004-gradient`` demo prints beside its formula.
"""
from __future__ import annotations

import numpy as np

from attention.demos.common import DemoResult, svg_path
from attention.demos.source_004 import SOURCES, STATES, TOKENS, article_scorer
from attention.read import attend, score_grad
from minigrad.i18n import translator
from minigrad.tensor import Tensor
from minigrad.viz import draw_graph, trace

_ = translator("attention")


def traced(g=(1.0, 0.5)):
    """(L, trace, names) for state A: every node's value and ∂L/∂node recorded."""
    scorer = article_scorer()  # the core score: one box per term of the formula
    s = Tensor([[STATES["A"]]], requires_grad=True)                 # (B=1, 1): the state s
    h = Tensor(SOURCES[None], requires_grad=True)                   # (1, S, D): h_1 .. h_3
    with trace(scorer) as tr:
        e = scorer(s, h)                                            # (1, S)
        c, alpha = attend(e, h)                                     # (1, D), (1, S)
        L = (c * np.asarray(g)).sum()                               # ()
        L.backward()
    names = {"s": s, "h": h, _("e (scores)"): e, _("α (weights)"): alpha, _("c (context)"): c,
             "L": L}
    return L, tr, names, {"e": e, "alpha": alpha, "c": c, "h": h}


def graph(out_dir=None, g=(1.0, 0.5)) -> DemoResult:
    """Draw the graph; check its ∂L/∂e against source 004's formula."""
    L, tr, names, t = traced(g)
    alpha, h, c = t["alpha"].data, t["h"].data, t["c"].data          # (1, S), (1, S, D), (1, D)
    formula = score_grad(alpha, h, c, np.asarray(g)[None])[0]        # (S,)
    on_node = tr.grads[t["e"]][0]                                   # (S,)
    title = _("Source 004 §6-§7: e_j = vᵀtanh(W_q s + W_k h_j + b) (the source's W_s, W_h), "
              "α = softmax(e), c = Σ α_j h_j, L = g·c")
    lines = [draw_graph(L, "text", trace=tr, names=names, title=title),
             _("∂L/∂e_j on the scores' box (from backward) and source 004 §7's "
               "α_j g·(h_j - c):")]
    lines += [f"  {tok:<5} {a:.9f}   {b:.9f}" for tok, a, b in zip(TOKENS, on_node, formula)]
    files = []
    path = svg_path(out_dir, "004_graph.svg")
    if path is not None:
        draw_graph(L, "svg", path, trace=tr, names=names, title=title)
        files.append(path)
        lines.append(_("wrote {path}").format(path=path))
    return DemoResult("\n".join(lines), {"on_node": on_node, "formula": formula}, files)
