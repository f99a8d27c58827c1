"""Source 000 §4.3: the alignment matrix of an untrained model next to a trained one.

Source 000 §4.3 prints the 6 × 6 alignment matrix (rows: decoder steps, columns: source
positions) of an encoder–decoder with Bahdanau attention on a toy identity task, and notes
that "if trained enough, this matrix approaches a diagonal". Untrained, the additive scores
e_tj = vᵀ tanh(W s_t + U h_j) are small (the weights start near 0), so every row is close to
uniform, α_tj ≈ 1/6. Here the same task is trained (``attention/demos/toy.py``) and both
matrices are printed and drawn.

Shape letters: T decoder steps, S source positions (T = S = 6).
"""
from __future__ import annotations

import numpy as np

from attention.demos.common import DemoResult, svg_path
from attention.demos.toy import TOKENS, train_toy, weights_of
from minigrad.draw import heatmap_svg, heatmap_text
from minigrad.i18n import translator

_ = translator("attention")


def row_stats(weights: np.ndarray) -> dict:
    """Mean largest weight, mean entropy −Σ α log α (nats) and mean weight on the diagonal."""
    a = np.clip(weights, 1e-300, 1.0)                                    # (T, S)
    return {"max": float(weights.max(-1).mean()),
            "entropy": float(-(weights * np.log(a)).sum(-1).mean()),
            "diagonal": float(np.mean(np.diag(weights)))}


def alignment(out_dir=None, seed: int = 0, kernels: bool = False) -> DemoResult:
    """§4.3: the 6 × 6 alignment of the toy identity task before and after training."""
    toy = train_toy(seed, kernels=kernels)
    before, after = toy.untrained, weights_of(toy.model, toy.example)   # (T, S) each
    words = [TOKENS[i] for i in toy.example]
    lines = [_("Source 000 §4.3: alignment matrix (rows = decoder steps, columns = source "
               "positions),\n  identity task, source {source!r}; trained {steps} Adam steps, "
               "held-out token accuracy {accuracy:.1%}").format(
                 source=" ".join(words), steps=toy.steps, accuracy=toy.accuracy), ""]
    stats = {}
    labels = {"untrained": _("untrained"), "trained": _("trained")}
    for name, w in (("untrained", before), ("trained", after)):
        stats[name] = row_stats(w)
        st = stats[name]
        lines += [_("{model}: mean max α {max:.3f}, mean entropy {entropy:.3f} (uniform: "
                    "log 6 = {log6:.3f}), mean α on the diagonal {diagonal:.3f}").format(
                      model=labels[name], max=st["max"], entropy=st["entropy"], log6=np.log(6),
                      diagonal=st["diagonal"])]
        lines += ["  " + " ".join(f"{v:5.2f}" for v in row) for row in w]
        lines += [heatmap_text(w, [f"y{t + 1}={words[t]}" for t in range(6)], words), ""]
    lines.append(_("Untrained, every row is near uniform (α ≈ 1/6 = 0.17): the scores are small, "
                   "so softmax\nspreads the weight. Trained, each step reads the source word it "
                   "copies: the diagonal."))
    files = []
    for name, w in (("untrained", before), ("trained", after)):
        path = svg_path(out_dir, f"000_alignment_{name}.svg")
        if path is not None:
            heatmap_svg(w, [f"y{t + 1}" for t in range(6)], words, path=path,
                        title=_("Source 000 §4.3: {model} alignment").format(model=labels[name]),
                        row_title=_("decoder step"), col_title=_("source word"))
            files.append(path)
            lines.append(_("wrote {path}").format(path=path))
    return DemoResult("\n".join(lines), {"untrained": before, "trained": after, "stats": stats,
                                         "accuracy": toy.accuracy}, files)
