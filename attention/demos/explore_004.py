"""Source 004 §6's worked example as one explorer page (``python -m attention 004-explore``):
both states (s = −1 and s = 1) in one batch through the article's scorer, the composed read
and L = Σ_b g·c_b with g = (1, 0.5), as ``004-gradient``:

    e_bj = vᵀ tanh(W_s s_b + W_h h_j + b),   α_b = softmax(e_b),   c_b = Σ_j α_bj h_j

The graph panel steps its backward pass; the attention panel shows α per state and, for a
weight, ∂L/∂e_bj = α_bj g·(h_j − c_b) (source 004 §7) beside the engine's number. Its
formula playgrounds (``playgrounds``) recompute three formulas in the page as a slider moves.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from attention.demos.common import DemoResult, svg_path
from attention.demos.source_000 import scaling
from attention.demos.source_004 import SOURCES, STATES, TOKENS, article_scorer, read_at
from attention.read import attend
from attention.scores import DotScore
from minigrad.i18n import translator
from minigrad.tensor import Tensor
from minigrad.viz import trace
from minigrad.viz.explore import explore
from minigrad.viz.graph import build

_ = translator("attention")
r6 = lambda a: [float(f"{x:.6g}") for x in np.ravel(a)]  # noqa: E731  (6 digits, as the page)


_std = lru_cache(1)(lambda: scaling().values["std"])  # noqa: E731  {d: std(q·k), of q·k/√d}


def playgrounds(g=(1.0, 0.5), seed: int = 0) -> dict:
    """What the page's playgrounds (explore.js) recompute as their slider moves, exact floats:
    004 §6: the article's scorer (W_s, W_h, b, v), h_j and g, for e(s), α, c, ∂L/∂e at any s;
    003 §6: 004's scores at s = −1 (as ``003-temperature``), for α = softmax(e / T) and H(α);
    000 §2.3: q·k_j of one seeded query and 8 keys, q, k ~ N(0, I_d), at each d of
    ``000-scaling`` with its std(q·k) and std(q·k/√d), for softmax(q·k) against q·k/√d."""
    sc, rng = article_scorer(), np.random.default_rng(seed)
    q, k = rng.standard_normal((1, 256)), rng.standard_normal((1, 8, 256))  # (1, d), (1, S, d)
    return {"scorer": {"W_s": sc.W_q.data.tolist(), "W_h": sc.W_k.data.tolist(),
                       "b": sc.b.data.tolist(), "v": sc.v.data.tolist(), "h": SOURCES.tolist(),
                       "g": [float(x) for x in g], "tokens": list(TOKENS)},
            "temperature": {"e": read_at([STATES["A"]])[0][0].tolist(), "tokens": list(TOKENS)},
            "scaling": {"seed": seed, "rows": [
                {"d": d, "e": DotScore()(q[:, :d], k[..., :d]).data[0].tolist(),   # (S,)
                 "std": [float(x) for x in sd]} for d, sd in _std().items()]}}


def page(g=(1.0, 0.5)):
    """The explorer page (``minigrad.viz.explore``) with its attention panel filled in."""
    g = np.asarray(g)                                                   # (D,) = ∂L/∂c_b
    s = Tensor([[STATES["A"]], [STATES["B"]]], requires_grad=True)      # (B=2, 1)
    h = Tensor(np.stack([SOURCES] * 2), requires_grad=True)             # (2, S, D)
    scorer = article_scorer()
    with trace(scorer) as tr:
        e = scorer(s, h)                                                # (2, S)
        c, alpha = attend(e, h)                                         # (2, D), (2, S)
        L = (c * g).sum()                                               # ()
    names = {"s": s, "h": h, "e": e, "α": alpha, "c": c, "L": L}
    title = _("Source 004 §6-§7: e_j = vᵀtanh(W_s s + W_h h_j + b), α = softmax(e), "
              "c = Σ α_j h_j, L = g·c for s = -1 and s = 1")
    out = explore(L, tr, names, title)
    node = next(i for i, t in enumerate(build(L, tr, names).tensors) if t is alpha)  # softmax
    L.backward()
    out.data["attention"] = {
        "src": list(TOKENS), "tgt": [f"s = {s:g}" for s in STATES.values()],
        "alpha": [r6(row) for row in alpha.data],                       # (2, S)
        "steps": [{"node": node, "gh": r6(SOURCES @ g), "gc": r6(g @ c.data[b]),
                   "de": r6(tr.grads[e][b])} for b in range(2)]}      # (S,), (1,), (S,)
    out.data["playgrounds"] = playgrounds(g)
    return out


def explore_004(out_dir=None) -> DemoResult:
    """Write the page; print α and ∂L/∂e per state, as the page shows them."""
    p = page()
    a = p.data["attention"]
    lines = [_("Source 004 §6 as an explorer page: α and ∂L/∂e_j = α_j g·(h_j - c) per state")]
    lines += [f"  {tgt:<7} α = {alpha}   ∂L/∂e = {st['de']}"
              for tgt, alpha, st in zip(a["tgt"], a["alpha"], a["steps"])]
    path = svg_path(out_dir, "004_explore.html")
    try:
        files = [] if path is None else [p.save(path)]
    except FileExistsError as e:  # a file of the user's: kept, and said so
        files, lines = [], lines + [str(e)]
    lines.append(_("Formula playgrounds on the page: s in 004 §6, T in 003 §6, d in 000 §2.3"))
    lines += [_("wrote {path}").format(path=f) for f in files]
    return DemoResult("\n".join(lines), {"page": p}, files)
