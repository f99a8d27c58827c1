"""Source 004's worked example (§6) and its gradient (§7), computed by this package.

Three source vectors h_j (B = 1, S = 3, D = 2) and a scalar decoder state s are scored by an
``AdditiveScore`` whose parameters are set by hand to the article's:

    e_j(s) = vᵀ tanh(W_s s + W_h h_j + b),   W_s = [1, 1]ᵀ, W_h = I, v = [1, −1], b = 0
           = tanh(s + h_j1) − tanh(s + h_j2)

(the article's W_s, W_h are this package's W_q, W_k). Each demo returns a ``DemoResult``:
the text it prints, the numbers it printed, and the files it wrote.
"""
from __future__ import annotations

import numpy as np

from attention.demos.common import DemoResult, svg_path
from minigrad.draw import line_plot_svg, line_plot_text
from attention.read import attend, read, score_grad
from attention.scores import AdditiveScore
from minigrad.draw.common import pad
from minigrad.gradcheck import numerical_grad
from minigrad.i18n import translator
from minigrad.tensor import Tensor

_ = translator("attention")

TOKENS = ("I", "like", "cats")
SOURCES = np.array([[2.0, 0.0], [1.0, -1.0], [0.0, -2.0]])   # (S, D): h_1, h_2, h_3
STATES = {"A": -1.0, "B": 1.0}


def article_scorer(activation: str | None = "tanh") -> AdditiveScore:
    """The §6 scorer: query_dim 1 (the scalar s), key_dim 2, attn_dim 2, parameters set by hand."""
    score = AdditiveScore(query_dim=1, key_dim=2, attn_dim=2, activation=activation,
                          rng=np.random.default_rng(0))
    score.W_q.data[...] = [[1.0], [1.0]]      # W_s = [1, 1]ᵀ, a 2 × 1 column
    score.W_k.data[...] = np.eye(2)           # W_h = I
    score.b.data[...] = 0.0                   # b = 0
    score.v.data[...] = [1.0, -1.0]           # v = [1, −1]
    return score


def read_at(states, activation: str | None = "tanh"):
    """Scores, weights and contexts for a batch of states s: (N, S), (N, S), (N, D)."""
    s = np.asarray(states, dtype=float).reshape(-1, 1)                 # (N, 1): query
    h = np.broadcast_to(SOURCES, (len(s), 3, 2))                      # (N, S, D): keys = values
    scores = article_scorer(activation)(s, h)                         # (N, S)
    context, weights = read(scores, h)                                # (N, D), (N, S)
    return scores.data, weights.data, context.data


def _vec(x, digits: int = 6) -> str:
    return "(" + ", ".join(f"{v:.{digits}f}" for v in x) + ")"


def example(out_dir=None) -> DemoResult:
    """§6: same sources, different state → different read; the no-tanh ablation; the curves."""
    scores, weights, contexts = read_at(list(STATES.values()))        # rows: A, B
    lines = [_("Source 004 §6: same sources, different decoder state -> a different read"),
             "  e_j(s) = vᵀ tanh(W_s s + W_h h_j + b),  W_s = [1, 1]ᵀ, W_h = I, v = [1, -1], "
             "b = 0",
             "         = tanh(s + h_j1) - tanh(s + h_j2)", "",
             pad(_("source"), 8) + "h_j        A (s = -1)         B (s = 1)",
             " " * 19 + pad(_("score"), 8) + pad(_("weight"), 11) + pad(_("score"), 8)
             + _("weight")]
    for j, tok in enumerate(TOKENS):
        h = f"({SOURCES[j, 0]:g}, {SOURCES[j, 1]:g})"
        lines.append(f"{tok:<7} {h:<10} {scores[0, j]:.4f}  {weights[0, j]:.4f}     "
                     f"{scores[1, j]:.4f}  {weights[1, j]:.4f}")
    lines += [""] + [_("context c_{state} = Σ_j α_j h_j = {c}").format(state=name, c=_vec(c))
                     for name, c in zip(STATES, contexts)] + [""]

    flat_states = np.array([-3.0, -1.0, 0.0, 1.0, 3.0])             # from the swept range
    f_scores, f_weights, f_contexts = read_at(flat_states, activation=None)
    lines += [_("Without tanh (activation=None): e_j = vᵀW_s s + vᵀb + vᵀW_h h_j"),
              _("  = 0·s + 0 + (h_j1 - h_j2) = 2 for every j, so the state has no say in the "
                "weights:")]
    for s, e, w, c in zip(flat_states, f_scores, f_weights, f_contexts):
        lines.append(_("  s = {s:4g}: scores {scores}   weights {weights}   c = {c}").format(
            s=s, scores=" ".join(f"{v:.4f}" for v in e), weights=" ".join(f"{v:.4f}" for v in w),
            c=_vec(c, 4)))

    grid = np.linspace(-3.0, 3.0, 61)                                 # the swept state s
    curve = read_at(grid)[1]                                          # (61, S)
    flat = read_at(grid, activation=None)[1]                          # (61, S)
    series = {f"α({tok})": (grid, curve[:, j]) for j, tok in enumerate(TOKENS)}
    series[_("no tanh: α(I) = α(like) = α(cats)")] = (grid, flat[:, 0])
    title = _("Source 004 §6: attention weights as the decoder state s varies")
    xlabel, ylabel = _("decoder state s"), _("weight α_j")
    lines += ["", line_plot_text(series, width=76, height=22, title=title,
                                 xlabel=xlabel, ylabel=ylabel, ylim=(0.0, 0.6))]
    files = []
    path = svg_path(out_dir, "004_weights_vs_state.svg")
    if path is not None:
        line_plot_svg(series, path=path, title=title, xlabel=xlabel, ylabel=ylabel,
                      ylim=(0.0, 0.6))
        files.append(path)
        lines.append(_("wrote {path}").format(path=path))
    values = {"scores": scores, "weights": weights, "contexts": contexts,
              "ablation_weights": f_weights, "curve_states": grid, "curve_weights": curve}
    return DemoResult("\n".join(lines), values, files)


def gradient(out_dir=None, g=(1.0, 0.5)) -> DemoResult:
    """§7: ∂L/∂e_j = α_j g·(h_j − c) beside finite differences and autograd, for L = g·c."""
    g = np.asarray(g, dtype=float)
    h = SOURCES[None]                                                 # (1, S, D)
    lines = [_("Source 004 §7: how the loss reaches the scores"),
             _("  ∂c/∂e_j = α_j (h_j - c)   (from ∂α_k/∂e_j = α_k(δ_kj - α_j)),"),
             _("  ∂L/∂e_j = α_j g·(h_j - c)  with g = ∂L/∂c; here L = g·c, g = {g}").format(
                 g=_vec(g, 2)), ""]
    values = {}
    for name, s in STATES.items():
        scores, weights, context = (x[:1] for x in read_at([s]))       # (1, S), (1, S), (1, D)
        formula = score_grad(weights, h, context, g[None])[0]         # (S,)
        numeric = numerical_grad(lambda e: (read(e, h)[0] * g).sum(), [Tensor(scores)],
                                 eps=1e-6)[0][0]                      # (S,)
        e = Tensor(scores, requires_grad=True)
        (attend(e, h)[0] * g).sum().backward()                        # composed graph
        dc_de = weights[0][:, None] * (SOURCES - context[0])          # (S, D): rows ∂c/∂e_j
        lines += [_("state {name} (s = {s:g}):  c = {c}").format(name=name, s=s,
                                                                 c=_vec(context[0])),
                  "  " + pad(_("source"), 8) + "α_j      ∂c/∂e_j = α_j(h_j - c)   "
                  + pad(_("∂L/∂e_j: formula"), 19) + pad(_("finite diff."), 15) + _("autograd")]
        for j, tok in enumerate(TOKENS):
            lines.append(f"  {tok:<7} {weights[0, j]:.4f}   {_vec(dc_de[j]):<24} "
                         f"{formula[j]:>14.9f}  {numeric[j]:>12.9f}  {e.grad[0, j]:>12.9f}")
        lines += [_("  Σ_j ∂L/∂e_j = {total:.1e}   (a common shift of the scores changes "
                    "nothing)").format(total=formula.sum()),
                  _("  max |formula - finite diff.| = {numeric:.1e},  "
                    "max |formula - autograd| = {autograd:.1e}").format(
                      numeric=np.abs(formula - numeric).max(),
                      autograd=np.abs(formula - e.grad[0]).max()), ""]
        values[name] = {"formula": formula, "numeric": numeric, "autograd": e.grad[0].copy(),
                        "dc_de": dc_de}
    lines.append(_("Every h_j - c is parallel to (1, 1) (all h_j1 - h_j2 = 2), so only g's "
                   "component\nalong (1, 1) moves the scores."))
    return DemoResult("\n".join(lines), values)
