"""Source 003 §6 (experience two): a temperature on the scores before the softmax.

    α_j = exp(e_j / T) / Σ_k exp(e_k / T)

T < 1 makes the weights sharper (towards the argmax), T > 1 flatter (towards uniform); T = 1
is the plain softmax. The source's sentence "lowering the temperature (the denominator gets
larger) sharpens the weights" has its bracket backwards: the divisor T gets *smaller*, which
makes the scores e_j / T larger and further apart. Scaled dot-product attention's 1/√d_k is
a temperature of √d_k (> 1): it flattens raw dot products, which is why it is used.

The demo prints max α and the entropy −Σ α log α for T from 0.25 to 4 on source 004 §6's
example (state A) and on the trained toy model's alignments (``attention/demos/toy.py``), and
draws the weights for each T (terminal and SVG).

Shape letters: N rows of scores, S source positions.
"""
from __future__ import annotations

import numpy as np

from attention.demos.common import DemoResult, svg_path
from attention.demos.source_004 import STATES, TOKENS, read_at
from attention.demos.toy import TOKENS as TOY_TOKENS, train_toy
from attention.masking import masked_softmax
from attention.scores import DotScore, ScaledDotScore
from minigrad import no_grad
from minigrad.draw import heatmap_svg, heatmap_text
from minigrad.draw.common import pad
from minigrad.i18n import translator

_ = translator("attention")

TEMPERATURES = (0.25, 0.5, 1.0, 2.0, 4.0)


def entropy(weights: np.ndarray) -> np.ndarray:
    """−Σ_j α_j log α_j (nats) per row; 0 · log 0 = 0."""
    logs = np.log(np.where(weights > 0, weights, 1.0))
    return -(weights * logs).sum(-1)


def sweep(scores: np.ndarray) -> dict:
    """{T: weights (N, S)} of ``masked_softmax(scores, temperature=T)`` for each T."""
    return {T: masked_softmax(scores, temperature=T).data for T in TEMPERATURES}


def _table(title: str, weights: dict) -> list:
    lines = [title, f"  {'T':>5}  {'max α':>6}  " + pad(_("entropy"), 8, right=True) + "   "
             + _("(means over rows)")]
    for T, w in weights.items():
        lines.append(f"  {T:>5g}  {w.max(-1).mean():>6.3f}  {entropy(w).mean():>8.3f}")
    return lines


def temperature(out_dir=None, seed: int = 0, kernels: bool = False) -> DemoResult:
    """003 §6: max α and entropy against T, on the 004 §6 example and a trained model."""
    scores = read_at([STATES["A"]])[0]                                # (1, S)
    example = sweep(scores)
    toy = train_toy(seed, kernels=kernels)
    with no_grad():
        toy_scores = toy.model.scores(toy.example[None])[0].data[0]   # (T, S) one alignment
    trained = sweep(toy_scores)
    lines = [_("Source 003 §6: temperature, α_j = exp(e_j / T) / Σ_k exp(e_k / T)"), ""]
    lines += _table(_("Source 004 §6, state A (scores {scores}; uniform entropy log 3 = "
                      "{log3:.3f}):").format(scores=", ".join(f"{e:.4f}" for e in scores[0]),
                                             log3=np.log(3)), example)
    lines.append(heatmap_text(np.concatenate(list(example.values())),
                              [f"T={T:g}" for T in TEMPERATURES], list(TOKENS)))
    lines += [""] + _table(_("The trained toy model's 6 × 6 alignment (attention/demos/toy.py; "
                             "uniform entropy log 6 = {log6:.3f}):").format(log6=np.log(6)),
                           trained)
    words = [TOY_TOKENS[i] for i in toy.example]
    for T in (0.25, 4.0):
        lines.append(heatmap_text(trained[T], words, words, title=f"T = {T:g}"))
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2000, 64)), rng.standard_normal((2000, 8, 64))  # (N, d), (N, S, d)
    raw = DotScore()(q, k).data                                       # (N, S)
    as_temperature = masked_softmax(raw, temperature=8.0).data        # T = √64
    scaled = masked_softmax(ScaledDotScore()(q, k)).data              # q·k/√d
    same = float(np.abs(as_temperature - scaled).max())
    lines += ["", _("Lower T sharpens: the divisor gets smaller (source 003's bracket says "
                    "larger)."),
              _("Dividing by √d_k is a temperature of √d_k: at d = 64, softmax(q·k, T = 8) equals "
                "softmax(q·k/√64) to {gap:.1e};\n  mean max α {raw:.3f} at T = 1 -> {scaled:.3f} "
                "at T = 8: √d_k flattens.").format(gap=same,
                                                   raw=masked_softmax(raw).data.max(-1).mean(),
                                                   scaled=scaled.max(-1).mean())]
    files = []
    for name, w, rows, cols in (("example", np.concatenate(list(example.values())),
                                 [f"T = {T:g}" for T in TEMPERATURES], list(TOKENS)),
                                ("toy_T0.25", trained[0.25], words, words),
                                ("toy_T4", trained[4.0], words, words)):
        path = svg_path(out_dir, f"003_temperature_{name}.svg")
        if path is not None:
            heatmap_svg(w, rows, cols, path=path,
                        title=_("Source 003 §6: temperature ({name})").format(name=name),
                        row_title=_("temperature") if name == "example" else _("decoder step"),
                        col_title=_("source"))
            files.append(path)
            lines.append(_("wrote {path}").format(path=path))
    return DemoResult("\n".join(lines), {"example": example, "trained": trained,
                                         "sqrt_d_gap": same}, files)
