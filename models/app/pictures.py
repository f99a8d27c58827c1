"""Pictures of what a model learned, drawn by ``minigrad.draw`` (no matplotlib).

* ``alignment_text`` / ``alignment_svg``: the alignment matrix α (T_out, S) of one translation,
  output tokens down the side, source characters along the top -- row t shows where the
  decoder looked while it wrote token t.
* ``curves_svg``: training loss (left axis) and held-out exact match (right axis)
  against the step.
* ``by_length_text`` / ``by_length_svg``: exact match against source length, one line per model.
* ``heads_text`` / ``heads_svg``: a Transformer's attention per head, next to Bahdanau's.
"""
from __future__ import annotations

import numpy as np

from minigrad.draw import (grid_svg, heatmap_svg, heatmap_text, line_plot_svg, line_plot_text,
                           side_by_side)
from minigrad.draw.common import pad
from minigrad.i18n import translator

from models.vocab import Vocab
from models.decoding import Translation

_ = translator("models")


# The label of the end-of-sequence token, on both axes, in the terminal and in SVG: the
# vocabulary's own name for it. (A one-character mark such as "␄", U+2404, has no glyph in
# DejaVu and most other fonts, so it showed as a box; the plots write long column labels
# downwards in the terminal and turned to read upwards in SVG.)
EOS_MARK = "<eos>"


def _labels(translation: Translation, text: str, src_vocab: Vocab, tgt_vocab: Vocab) -> tuple:
    rows = [EOS_MARK if t == "<eos>" else t for t in tgt_vocab.tokens(translation.tokens)]
    cols = [c if c in src_vocab.alphabet else "?" for c in text] + [EOS_MARK]  # ? = <unk>
    return rows, cols


def alignment_text(translation: Translation, text: str, src_vocab: Vocab, tgt_vocab: Vocab,
                   max_width: int = 100, title: str | None = None) -> str:
    """Terminal heatmap of one translation's alignment (rows: output, columns: source);
    the end-of-sequence token is labelled <eos>, an unknown character ?."""
    if translation.weights is None:
        return _("(this model has no attention: there is no alignment to draw)")
    rows, cols = _labels(translation, text, src_vocab, tgt_vocab)
    return heatmap_text(translation.weights, rows, cols, title=title, max_width=max_width)


def alignment_svg(translation: Translation, text: str, src_vocab: Vocab, tgt_vocab: Vocab,
                  path) -> str | None:
    """The same heatmap as a standalone SVG file at ``path`` (nothing without attention)."""
    if translation.weights is None:
        return None
    rows, cols = _labels(translation, text, src_vocab, tgt_vocab)
    title = f"{text} → {tgt_vocab.decode(translation.tokens)}"
    return heatmap_svg(translation.weights, rows, cols, path=path, title=title,
                       row_title=_("output"), col_title=_("input"),
                       scale_label=_("attention weight"))


def curves_svg(state, path) -> str:
    """Training loss (per token, every few steps; left axis) and held-out exact match (a
    fraction, per epoch; right axis, 0..1.05) against the optimizer step, from a ``TrainState``.
    Each has its own axis, so an accuracy near 1 is not squashed under a loss of 3."""
    losses = [c[1] for c in state.curve]
    loss = {_("train loss (per token)"): ([c[0] for c in state.curve], losses)}
    exact = {_("held-out exact match (per epoch)"): ([h["step"] for h in state.history],
                                                     [h["val_exact"] for h in state.history])}
    if not state.curve:  # shorter than one point of the loss curve: exact match alone
        return line_plot_svg(exact, path=path, title=_("training: held-out exact match"),
                             xlabel=_("step"), ylabel=_("exact match (fraction)"),
                             ylim=(0.0, 1.05), markers=True)
    ys = np.asarray(losses, dtype=float)
    top = max([0.0] + list(ys[np.isfinite(ys)]))
    return line_plot_svg(loss, path=path, title=_("training: loss and held-out exact match"),
                         xlabel=_("step"), ylabel=_("loss per token"),
                         ylim=(0.0, 1.05 * top or 1.0), right=exact if state.history else None,
                         right_label=_("held-out exact match (fraction)"),
                         right_lim=(0.0, 1.05),  # 1.0 shows clear of the frame
                         markers=False)


def by_length_series(results: dict) -> dict:
    """{name: {length: exact}} -> {name: (lengths, exact)} for the line plots (each name
    translated: ``compare_length``'s "attention" and "no attention")."""
    return {_(name): (sorted(r), [r[k] for k in sorted(r)]) for name, r in results.items()}


def by_length_text(results: dict, width: int = 80, height: int = 18) -> str:
    return line_plot_text(by_length_series(results), width=width, height=height,
                          title=_("exact match vs source length"),
                          xlabel=_("source length (characters)"), ylim=(0.0, 1.0))


def by_length_svg(results: dict, path) -> str:
    return line_plot_svg(by_length_series(results), path=path,
                         title=_("Exact match vs source length (cf. Bahdanau et al. 2015, "
                                 "Fig. 2)"),
                         xlabel=_("source length (characters)"), ylabel=_("exact match"),
                         ylim=(0.0, 1.05), markers=True)  # 1.0 shows clear of the frame


def by_length_table(results: dict) -> str:
    """One row per source length, one column per model (names translated, padded to the
    terminal columns they take)."""
    names = list(results)
    lengths = sorted({k for r in results.values() for k in r})
    lines = [pad(_("length"), 6) + " " + "".join(pad(_(n), 12, right=True) for n in names)]
    for k in lengths:
        cells = "".join(f"{100 * results[n][k]:11.1f}%" if k in results[n] else f"{'-':>12}"
                        for n in names)
        lines.append(f"{k:>6} " + cells)
    return "\n".join(lines)


def diagonality(weights: np.ndarray, anti: bool = False) -> float:
    """Share of rows whose largest weight is on the (anti-)diagonal: argmax_j α_tj = t
    (or S − 1 − t), over rows t < min(T, S)."""
    T, S = weights.shape
    n = min(T, S)
    want = np.arange(n) if not anti else S - 1 - np.arange(n)  # (n,) the diagonal's columns
    return float(np.mean(weights[:n].argmax(axis=1) == want))


def _panels(maps: dict, src_vocab: Vocab, tgt_vocab: Vocab) -> tuple:
    """(cross panels, self panels): (title, weights, row labels, column labels) each, from
    ``compare_models.attention_maps``: the Bahdanau alignment first, then one per head."""
    text = maps["text"]
    out = Translation(maps["transformer_out"], None, 0.0)
    rows, cols = _labels(out, text, src_vocab, tgt_vocab)
    b_rows = _labels(maps["bahdanau"], text, src_vocab, tgt_vocab)[0]
    cross = [(_("Bahdanau (additive)"), maps["bahdanau"].weights, b_rows, cols)]
    cross += [(_("Transformer head {i}").format(i=i + 1), w, rows, cols)
              for i, w in enumerate(maps["cross"])]
    selfs = [(_("encoder head {i}").format(i=i + 1), w, cols, cols)
             for i, w in enumerate(maps["self"])]
    return cross, selfs


def heads_text(maps: dict, src_vocab: Vocab, tgt_vocab: Vocab, per_row: int = 3) -> str:
    """Terminal grids: the Bahdanau alignment next to the Transformer's cross-attention per
    head (last layer), then its encoder self-attention per head (last layer)."""
    out = []
    for what, panels in zip((_("cross-attention (rows: output, columns: source):"),
                             _("encoder self-attention (rows: queries, columns: keys):")),
                            _panels(maps, src_vocab, tgt_vocab)):
        blocks = [heatmap_text(w, r, c, title=t, max_width=40) for t, w, r, c in panels]
        out.append(what + "\n" + "\n\n".join(side_by_side(blocks[i:i + per_row])
                                             for i in range(0, len(blocks), per_row)))
    return "\n\n".join(out)


def heads_svg(maps: dict, src_vocab: Vocab, tgt_vocab: Vocab, cross_path, self_path) -> tuple:
    """The same two grids as SVG files; returns their paths."""
    cross, selfs = _panels(maps, src_vocab, tgt_vocab)
    for panels, path, title in (
            (cross, cross_path, _("{text}: cross-attention, per head (last layer)")),
            (selfs, self_path, _("{text}: encoder self-attention, per head (last layer)"))):
        docs = [heatmap_svg(w, r, c, title=t,
                            row_title=_("query") if panels is selfs else _("output"),
                            col_title=_("key") if panels is selfs else _("input"))
                for t, w, r, c in panels]
        grid_svg(docs, columns=3 if panels is cross else len(docs), path=path,
                 title=title.format(text=maps["text"]))
    return cross_path, self_path
