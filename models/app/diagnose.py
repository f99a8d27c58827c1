"""``python -m models inspect RUN``: source 003 §6's debugging checks on a saved run.

Source 003 §6 (experience four) calls heatmaps a debugging tool and lists what to look for:
a clear diagonal where the word order is similar, and no "lazy attention" that parks all
its weight on one meaningless token such as <eos> -- a sign that "the decoder does not
benefit from the attention", so "check that the gradient flows back through the attention".
Each becomes a number with a verdict, measured on held-out pairs with teacher forcing:

* diagonality: the share of rows t whose largest weight is on the diagonal (copy) or the
  anti-diagonal (reverse), and monotonicity, the share of steps whose argmax moves forward
  (backward for reverse): a row that stays put fails. Other tasks reorder (dates, sort):
  reported, not judged.
* lazy attention: the mean weight on the source's <eos> in the rows before the last; and the
  weight on padding (exactly 0 when the mask works).
* entropy per step: H_t = −Σ_j α_tj log α_tj, divided by log S_b (1 = uniform over the S_b
  real positions). A mean above 0.9 means the model does not focus: untrained or broken.
* gradient paths: the annotation h_j reaches the loss L (the example's summed cross-entropy)
  through every attention read (as a key and a value) and through the decoder's recurrent
  state (s_0 = tanh(W_init · mean_j h_j + b_init), carried by the recurrence). Two copies of
  the annotations, one for each path, split ∂L/∂h_j = ∂L/∂h_j|attention + ∂L/∂h_j|recurrent.

Shape letters: B examples, S source length, T target length.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

import minigrad as mg
from minigrad.draw import line_plot_svg, line_plot_text
from minigrad.draw.common import pad
from minigrad.i18n import translator
from models.app.checkpoint import CheckpointError, load_checkpoint
from models.app.data import make_task
from models.app.pictures import diagonality
from models.app.runs import free_name
from models.app.train_config import TrainConfig, seeds
from models.seq2seq import decoder_inputs, masked_cross_entropy
from models.vocab import pad_batch

_ = translator("models")

EXPECTED = {"copy": "diagonal", "reverse": "anti-diagonal"}
SHAPE, UNIFORM, LAZY, GRAD_SHARE = 0.8, 0.9, 0.5, 0.1   # the thresholds of the verdicts


@dataclass
class Check:
    name: str      # one of NAMES, in English (the report shows it translated)
    value: str
    verdict: str   # "pass", "FLAG" or "info" (the report shows it translated)
    words: str     # in the language of the messages


NAMES = ("diagonality", "monotonicity", "lazy attention", "padding", "entropy",
         "gradient through attention")
VERDICTS = ("pass", "FLAG", "info")


def split_gradients(model, src, src_mask, tgt, tgt_mask) -> tuple:
    """(α (B, T, S), ‖∂L/∂h_j‖ through attention (B, S), through the recurrent state (B, S))."""
    dec = model.decoder
    with mg.no_grad():
        encoded = model.encoder(src, src_mask)
    h_att, h_rec = (mg.Tensor(encoded.annotations.data.copy(), requires_grad=True)
                    for _ in range(2))                                   # (B, S, K) each
    state, _ = dec.start(encoded._replace(annotations=h_rec))            # s_0 from h_rec
    _, ctx = dec.start(encoded._replace(annotations=h_att))              # reads from h_att
    tgt_in = decoder_inputs(tgt)                                         # (B, T)
    steps, weights = [], []
    for t in range(tgt.shape[1]):
        state, features, alpha = dec.step(tgt_in[:, t], state, ctx, t)
        steps.append(features)
        weights.append(alpha.data)                                       # (B, S)
    logits = dec.logits([mg.stack(list(p), axis=1) for p in zip(*steps)])  # (B, T, V)
    n_tokens = int(tgt_mask.sum())
    (masked_cross_entropy(logits, tgt, tgt_mask) * n_tokens).backward()  # Σ_b L_b
    norm = lambda h: (np.zeros(h.shape[:2]) if h.grad is None             # no path: 0
                      else np.sqrt(np.sum(h.grad ** 2, axis=-1)))           # (B, S)
    return np.stack(weights, axis=1), norm(h_att), norm(h_rec)  # a Transformer: no recurrent state


def measure(model, src_vocab, tgt_vocab, pairs) -> dict:
    """The numbers behind the checks, over ``pairs`` [(source text, target text)]."""
    src, src_mask = pad_batch([src_vocab.encode(s) for s, _ in pairs])  # (B, S) each
    tgt, tgt_mask = pad_batch([tgt_vocab.encode(t) for _, t in pairs])  # (B, T) each
    alpha, g_att, g_rec = split_gradients(model, src, src_mask, tgt, tgt_mask)
    S_b, T_b = src_mask.sum(1), tgt_mask.sum(1)                          # (B,) each
    rows = tgt_mask[:, :, None]                                          # (B, T, 1)
    plogp = np.where(alpha > 0, alpha * np.log(np.where(alpha > 0, alpha, 1.0)), 0.0)
    ent = -plogp.sum(-1) / np.log(np.maximum(S_b, 2))[:, None]          # (B, T) normalised
    count = tgt_mask.sum(0)                                              # (T,)
    eos = alpha[np.arange(len(S_b)), :, S_b - 1]                         # (B, T): α on <eos>
    before_last = tgt_mask & (np.arange(tgt.shape[1]) < (T_b - 1)[:, None])  # (B, T)
    return {"alpha": alpha, "S": S_b, "T": T_b,
            "entropy": ent[tgt_mask].mean(),
            "entropy_per_step": np.where(count > 0,
                                         (ent * tgt_mask).sum(0) / np.maximum(count, 1), np.nan),
            "eos_mass": eos[before_last].mean() if before_last.any() else 0.0,
            "pad_mass": float((alpha * (rows & ~src_mask[:, None, :])).sum(-1).max()),
            "grad_att": _per_position(g_att, src_mask), "grad_rec": _per_position(g_rec, src_mask),
            "att_share": g_att[src_mask].sum() / max((g_att + g_rec)[src_mask].sum(), 1e-300)}


def _per_position(norms: np.ndarray, src_mask: np.ndarray) -> np.ndarray:
    """Mean over examples of a per-position norm (B, S) -> (S,), over real positions only."""
    return (norms * src_mask).sum(0) / np.maximum(src_mask.sum(0), 1)


def _shape_checks(task: str, m: dict) -> list:
    """Diagonality and monotonicity, judged where the task expects them."""
    expect = EXPECTED.get(task)
    anti = expect == "anti-diagonal"
    diag, moves = [], []
    for a, S, T in zip(m["alpha"], m["S"], m["T"]):
        n = S - 1 if anti else min(S, T)  # reverse: the rows before <eos>, in x's columns
        if n > 0:
            diag.append(diagonality(a[:n, :n], anti=anti))
        best = a[:n, :S].argmax(-1)                                       # (n,)
        moves += list(np.diff(best) < 0 if anti else np.diff(best) > 0)
    d, mono = float(np.mean(diag)), float(np.mean(moves)) if moves else 1.0
    if expect is None:
        reorders = _("not expected for {task} (the output reorders the source)").format(task=task)
        return [Check("diagonality", f"{d:.1%}", "info", reorders),
                Check("monotonicity", f"{mono:.1%}", "info",
                      _("steps whose argmax moves forward; not expected"))]
    where = (_("rows whose largest weight is on the anti-diagonal") if anti else
             _("rows whose largest weight is on the diagonal"))
    unlearned = _("{where}: expected for {task}, so the alignment has not been learned").format(
        where=where, task=task)
    steps = (_("steps whose argmax moves backward") if anti else
             _("steps whose argmax moves forward"))
    return [Check("diagonality", f"{d:.1%}", "pass" if d >= SHAPE else "FLAG",
                  where if d >= SHAPE else unlearned),
            Check("monotonicity", f"{mono:.1%}", "pass" if mono >= SHAPE else "FLAG", steps)]


def checks(task: str, m: dict) -> list:
    """One ``Check`` per question of source 003 §6."""
    out = _shape_checks(task, m)
    lazy = m["eos_mass"] > LAZY
    out.append(Check("lazy attention", _("{share:.1%} on <eos>").format(share=m["eos_mass"]),
                     "FLAG" if lazy else "pass",
                     _("LAZY: the weight sits on <eos>, not on the words being translated")
                     if lazy else _("mean weight on the source's <eos> before the last step")))
    pad_ok = m["pad_mass"] <= 1e-12
    out.append(Check("padding", _("max {mass:.1e}").format(mass=m["pad_mass"]),
                     "pass" if pad_ok else "FLAG", _("no weight on padding") if pad_ok else
                     _("weight on padding: the mask is not applied")))
    e = m["entropy"]
    verdict = "FLAG" if e > UNIFORM else ("info" if e > 0.5 else "pass")
    out.append(Check("entropy", _("{e:.2f} of uniform").format(e=e), verdict,
                     _("UNIFORM: the weights are spread evenly; the model is untrained or does "
                       "not use its attention") if e > UNIFORM else
                     (_("diffuse: many rows spread their weight") if e > 0.5 else _("focused"))))
    share = m["att_share"]
    words = (_("of ‖∂L/∂h_j‖ comes through the attention reads -- almost none: the decoder "
               "does not use the attention") if share < GRAD_SHARE else
             _("of ‖∂L/∂h_j‖ comes through the attention reads, the rest through the recurrent "
               "state") if m["grad_rec"].any() else
             _("of ‖∂L/∂h_j‖ comes through the attention reads; this decoder has no recurrent "
               "state"))
    out.append(Check("gradient through attention", f"{share:.1%}",
                     "FLAG" if share < GRAD_SHARE else "pass", words))
    return out


def inspect_run(run: str, n: int = 200, svg: bool = True) -> tuple:
    """Load the run saved in ``run``, measure its first ``n`` held-out pairs (regenerated from
    the run's task and seed), and ``report``; SVGs go to new files in the run's folder."""
    model, src_vocab, tgt_vocab, index = load_checkpoint(run)
    model.eval()  # α as the model reads at evaluation: no attention dropout (which needs an rng)
    if "train" not in index:
        raise CheckpointError(_("inspect: {run} was not saved by training: its task and "
                                "held-out pairs are unknown").format(run=run))
    if model.config.decoder == "plain":
        raise ValueError(_("inspect: {run} has no attention (decoder 'plain'): nothing to "
                           "inspect").format(run=run))
    if n < 1:
        raise ValueError(_("inspect: --n must be at least 1, got {n}").format(n=n))
    c = TrainConfig.from_dict(index["train"])
    data = make_task(c.task, seeds(c.seed)[0], c.n_train, c.n_val, c.min_len, c.max_len)
    m = measure(model, src_vocab, tgt_vocab, data.val[:n])
    folder = run if os.path.isdir(run) else os.path.dirname(run)
    return report(run, c.task, m, folder if svg else None)


def report(run: str, task: str, m: dict, svg_dir: str | None = None) -> tuple:
    """The printed report (checks, overall verdict, curves) and the SVG files written."""
    cs = checks(task, m)
    lines = [_("{run}: {task}, {n} held-out pairs, teacher forcing").format(
        run=run, task=task, n=len(m["S"])), ""]
    lines += [f"  {pad(_(c.name), 27)} {pad(c.value, 16, right=True)}  {pad(_(c.verdict), 4)}"
              f"  {c.words}" for c in cs]  # padded to terminal columns: any language aligns
    flagged = [_(c.name) for c in cs if c.verdict == "FLAG"]
    lines += ["", _("verdict: healthy: every check passes") if not flagged else
              _("verdict: FLAGGED ({checks})").format(checks=", ".join(flagged))]
    steps = np.arange(1, len(m["entropy_per_step"]) + 1)
    pos = np.arange(1, len(m["grad_att"]) + 1)
    plots = {"entropy": ({"H_t / log S_b": (steps, m["entropy_per_step"])},
                         _("entropy of α_t per decoder step (1 = uniform)"), _("decoder step t"),
                         _("normalised entropy"), (0.0, 1.05)),
             "gradient": ({_("through attention"): (pos, m["grad_att"]),
                           _("through the recurrent state"): (pos, m["grad_rec"])},
                          _("‖∂L/∂h_j‖ per encoder position j"), _("source position j"),
                          _("mean gradient norm"), None)}
    files = []
    for name, (series, title, xl, yl, ylim) in plots.items():
        lines += ["", line_plot_text(series, width=76, height=14, title=title, xlabel=xl,
                                     ylabel=yl, ylim=ylim)]
        if svg_dir is not None:
            path = free_name(svg_dir, f"inspect-{name}", "svg")
            line_plot_svg(series, path=path, title=title, xlabel=xl, ylabel=yl, ylim=ylim,
                          markers=True)
            files.append(path)
            lines.append(_("wrote {path}").format(path=path))
    return "\n".join(lines), cs, files
