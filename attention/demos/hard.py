"""Hard versus soft attention (source 004 §4, source 000 §7 question 1), measured.

* On source 004 §6's example: the soft read c = Σ_j α_j h_j against the hard read c = h_{j*},
  j* = argmax_j e_j, for the two states and across s ∈ [−3, 3] (the hard read jumps).
* Finite differences of L = g·c with respect to the scores: the hard read's are exactly 0
  away from ties (almost everywhere); at a tie they grow like 1/ε (no derivative); the soft
  read's equal α_j g·(h_j − c) (source 004 §7).
* On the trained toy model (``attention/demos/toy.py``): hard reads change little once the
  weights are near one-hot; but backpropagation through hard reads gives the scorer's
  parameters a gradient of exactly 0, so an untrained model could never learn where to look.

Shape letters: N states, S source positions (3), D width (2).
"""
from __future__ import annotations

import numpy as np

from attention.demos.common import DemoResult, svg_path
from attention.demos.source_004 import SOURCES, STATES, TOKENS, read_at
from attention.demos.toy import TOKENS as TOY_TOKENS, ToyCopy, batch, train_toy
from attention.hard import hard_read
from attention.read import read
from minigrad import functional as F
from minigrad.draw import line_plot_svg, line_plot_text
from minigrad.draw.common import pad
from minigrad.gradcheck import numerical_grad
from minigrad.i18n import translator
from minigrad.tensor import Tensor

_ = translator("attention")

G = np.array([1.0, 0.5])  # L = g·c, as in the 004-gradient demo


def fd_hard(scores: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of L = g·c_hard with respect to the scores (N, S) -> (N, S)."""
    h = np.broadcast_to(SOURCES, scores.shape + (2,))                    # (N, S, D)
    return numerical_grad(lambda e: (hard_read(e, h)[0] * G).sum(), [Tensor(scores)], eps=eps)[0]


def _example_lines() -> tuple:
    """Soft and hard reads for states A and B, and their finite-difference gradients."""
    scores, weights, soft = read_at(list(STATES.values()))            # (2, S), (2, S), (2, D)
    h = np.broadcast_to(SOURCES, (2, 3, 2))                           # (2, S, D)
    hard = hard_read(scores, h)[0].data                               # (2, D)
    fd_soft = numerical_grad(lambda e: (read(e, h)[0] * G).sum(), [Tensor(scores)], eps=1e-6)[0]
    fd = fd_hard(scores)
    lines = [_("Source 004 §4: soft read c = Σ_j α_j h_j  vs  hard read c = h_j*, "
               "j* = argmax_j e_j"),
             _("  (the §6 example; L = g·c with g = ({g0:g}, {g1:g}))").format(g0=G[0], g1=G[1]),
             ""]
    for i, (name, s) in enumerate(STATES.items()):
        j = int(np.argmax(scores[i]))
        lines += [_("state {name} (s = {s:g}): argmax is {token!r}").format(name=name, s=s,
                                                                            token=TOKENS[j]),
                  _("  soft c = ({soft0:.6f}, {soft1:.6f})   hard c = ({hard0:g}, {hard1:g})   "
                    "|soft - hard| = {gap:.6f}").format(
                      soft0=soft[i, 0], soft1=soft[i, 1], hard0=hard[i, 0], hard1=hard[i, 1],
                      gap=np.linalg.norm(soft[i] - hard[i])),
                  _("  ∂L/∂e by finite differences (ε = 1e-6):  soft {soft}   hard {hard}").format(
                      soft=" ".join(f"{v:+.6f}" for v in fd_soft[i]),
                      hard=" ".join(f"{v:+.6f}" for v in fd[i]))]
    return lines, {"soft": soft, "hard": hard, "fd_soft": fd_soft, "fd_hard": fd}


def _almost_everywhere(rng: np.random.Generator, n: int = 300) -> tuple:
    """Share of random score vectors where the hard read's gradient is exactly 0, and the
    finite differences at a tie (e = (1, 1, 0)) for shrinking ε."""
    scores = rng.standard_normal((n, 3))                              # (N, S)
    zero = float(np.mean(np.all(fd_hard(scores) == 0, axis=-1)))
    tie = np.array([[1.0, 1.0, 0.0]])                                 # I and like tie
    at_tie = {eps: float(fd_hard(tie, eps)[0, 0]) for eps in (1e-2, 1e-4, 1e-6)}
    lines = ["", _("Over {n} random score vectors e ~ N(0, I): the hard read's finite-difference "
                   "gradient is exactly 0\n  for {share:.1%} of them (a small change of e "
                   "leaves the argmax where it is).").format(n=n, share=zero),
             _("At a tie, e = (1, 1, 0) (I and like), it is (g·(h_I - h_like)/2)/ε: no derivative "
               "exists:")]
    lines += [f"  ε = {eps:g}:  ∂L/∂e_I ≈ {v:.6g}" for eps, v in at_tie.items()]
    return lines, {"zero_share": zero, "at_tie": at_tie}


def _toy_lines(toy) -> tuple:
    """Hard vs soft reads in the trained toy model, and the scorer's gradient under each."""
    test = batch(np.random.default_rng(7), 200)                        # (N, S)
    lines = ["", _("The trained toy model (copy 6 tokens, additive attention; "
                   "attention/demos/toy.py):")]
    values = {}
    for name, label, model in (("trained", _("trained"), toy.model),
                               ("untrained", _("untrained"), ToyCopy(np.random.default_rng(0)))):
        e, h = model.scores(test)                                     # (N, T, S), (N, S, D)
        acc = {}
        grads = {}
        for how, reader in (("soft", read), ("hard", hard_read)):
            model.zero_grad()
            context = reader(e, h)[0]                                 # (N, T, D)
            logits = model.out(context)                               # (N, T, V)
            acc[how] = float(np.mean(logits.data.argmax(-1) == test))
            F.cross_entropy(logits.reshape(-1, len(TOY_TOKENS)), test.reshape(-1)).backward(
                retain_graph=True)
            grads[how] = float(np.sqrt(sum(np.sum(p.grad ** 2) for p in model.score.parameters()
                                           if p.grad is not None)))
        lines.append(_("  {model}  token accuracy: soft {soft:.1%}, hard {hard:.1%};  "
                       "‖∂L/∂(score parameters)‖: soft {grad_soft:.3g}, hard {grad_hard:.3g}"
                       ).format(model=pad(label, 9), soft=acc["soft"], hard=acc["hard"],
                                grad_soft=grads["soft"], grad_hard=grads["hard"]))
        values[name] = {"accuracy": acc, "score_grad": grads}
    lines.append(_("  Through a hard read the scorer gets no gradient at all: soft attention is "
                   "what\n  lets backpropagation learn where to look."))
    return lines, values


def hard(out_dir=None, seed: int = 0, kernels: bool = False) -> DemoResult:
    """Source 004 §4: the hard read's output, its zero gradient, and the soft read beside it."""
    lines, values = _example_lines()
    more, values["random"] = _almost_everywhere(np.random.default_rng(seed))
    lines += more
    grid = np.linspace(-3.0, 3.0, 121)                                # the swept state s
    scores, weights, soft = read_at(grid)                             # (N, S), (N, S), (N, D)
    hard_c = hard_read(scores, np.broadcast_to(SOURCES, (len(grid), 3, 2)))[0].data  # (N, D)
    series = {_("soft read c_1(s)"): (grid, soft[:, 0]),
              _("hard read c_1(s)"): (grid, hard_c[:, 0])}
    title = _("Source 004 §4: first coordinate of the read as the state s varies")
    xlabel = _("decoder state s")
    lines += ["", line_plot_text(series, width=76, height=18, title=title,
                                 xlabel=xlabel, ylabel="c_1")]
    more, values["toy"] = _toy_lines(train_toy(seed, kernels=kernels))
    lines += more
    files = []
    path = svg_path(out_dir, "004_hard_vs_soft.svg")
    if path is not None:
        line_plot_svg(series, path=path, title=title, xlabel=xlabel, ylabel="c_1")
        files.append(path)
        lines.append(_("wrote {path}").format(path=path))
    values["curve"] = {"s": grid, "soft": soft, "hard": hard_c}
    return DemoResult("\n".join(lines), values, files)
