"""``python -m models translate``: decode texts with a saved model and show each translation
with its alignment (a terminal heatmap, optionally SVG files).

``translate_texts`` decodes any task's texts (greedy or beam); a dates checkpoint goes through
``datetext.read_dates`` instead, which normalises the text, reports ambiguous dates, cuts a
time off and refuses a date with its year, month or day missing (the model would invent it).
``show`` prints the results (the main demo uses it too).
"""
from __future__ import annotations

import math
import os
import sys
import warnings

from attention import Attention
from attention.masking import check_temperature
from minigrad.i18n import translator
from models.app.checkpoint import load_checkpoint
from models.app.datetext import read_dates
from models.app.options import check_translate_options
from models.app.pictures import alignment_svg, alignment_text
from models.app.runs import writable_folder
from models.vocab import pad_batch

_ = translator("models")

MIN_TEMPERATURE = 1e-3  # α = softmax(e / T): below it (above 1 / it) e / T nears overflow


def translate_texts(model, src_vocab, tgt_vocab, texts, beam=0, length_penalty=0.6,
                    max_len=64) -> list:
    """[(text, Translation)] for each text (unknown characters → <unk>, with a warning)."""
    for t in texts:
        if not t.strip():
            raise ValueError(_("translate: empty text; give at least one character to "
                               "translate"))
    src, mask = pad_batch([src_vocab.encode(t) for t in texts])  # (B, S) each
    outs = (model.beam(src, beam, length_penalty, max_len, mask) if beam
            else model.greedy(src, max_len, mask))
    return list(zip(texts, outs))


def set_temperature(model, temperature: float) -> None:
    """Decode ``model`` with α = softmax(e / T) (source 003 §6): its attention's T becomes
    ``temperature``. Only the global attention of the bahdanau and luong decoders has one."""
    attention = getattr(model.decoder, "attention", None)
    if not isinstance(attention, Attention):
        raise ValueError(_("translate: --temperature needs global attention; this model has "
                           "the {decoder!r} decoder with the {score!r} score").format(
            decoder=model.config.decoder, score=model.config.score))
    T = check_temperature("translate: --temperature", temperature)
    if not MIN_TEMPERATURE <= T <= 1 / MIN_TEMPERATURE:  # e / T would overflow to inf: log p NaN
        raise ValueError(_("translate: --temperature must be {lo:g}..{hi:g}, got "
                           "{temperature!r}").format(lo=MIN_TEMPERATURE, hi=1 / MIN_TEMPERATURE,
                                                     temperature=temperature))
    attention.temperature = T


def show(results, src_vocab, tgt_vocab, heatmaps=True, svg_dir=None) -> None:
    """Print each translation (and its heatmap); SVG heatmaps go to new files in ``svg_dir``.
    ``results``: (text, Translation) pairs, or ``datetext.Reading``s (with their notes).
    A non-finite log p (the probabilities under- or overflowed) is an error, never a result."""
    for item in results:
        text, out = (item.text, item.translation) if hasattr(item, "notes") else item
        if out is not None and not math.isfinite(out.score):
            raise ValueError(_("translate: decoding {text!r} gave log p = {score} (the "
                               "probabilities under- or overflowed), so it has no translation; "
                               "with --temperature, try one nearer 1").format(text=text,
                                                                              score=out.score))
    k = 1
    for item in results:
        if getattr(item, "refused", None):  # a date with a part missing: nothing was read
            print(_("{text!r} -> refused: {reason}").format(text=item.text,
                                                            reason=item.refused) + "\n")
            continue
        typed, text, out, notes = ((item.text, item.model_input, item.translation, item.notes)
                                   if hasattr(item, "notes") else (item[0], *item, []))
        print(f"{typed!r} -> {tgt_vocab.decode(out.tokens)!r}   (log p = {out.score:.3f})")
        unknown = "".join(sorted(set(text) - set(src_vocab.alphabet)))
        if unknown:  # beside its text, not in a list of warnings before all of them
            notes = [_("warning: unknown character(s) {chars!r} read as <unk>").format(
                chars=unknown)] + notes
        for note in notes:
            print(f"  {note}")
        if heatmaps:
            print(alignment_text(out, text, src_vocab, tgt_vocab))
        if svg_dir and out.weights is not None:
            os.makedirs(svg_dir, exist_ok=True)
            while os.path.exists(os.path.join(svg_dir, f"alignment-{k}.svg")):
                k += 1  # never overwrite an earlier picture: continue the numbering
            path = os.path.join(svg_dir, f"alignment-{k}.svg")
            alignment_svg(out, text, src_vocab, tgt_vocab, path)
            print(_("heatmap written to {path}").format(path=path))
        print()


def cmd_translate(a) -> None:
    check_translate_options(a)
    if a.svg:
        writable_folder(a.svg)  # a file, or a folder that cannot be written: before decoding
    model, src_vocab, tgt_vocab, index = load_checkpoint(a.checkpoint)
    is_dates = index.get("task") == "dates"
    if a.month_first and not is_dates:
        raise ValueError(_("translate: --month-first is for a dates checkpoint; {checkpoint} "
                           "was trained on {task!r}").format(checkpoint=a.checkpoint,
                                                             task=index.get("task")))
    if a.temperature is not None:
        set_temperature(model, a.temperature)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if is_dates:  # normalised, ambiguity reported, output checked as a calendar date
            results = read_dates(model, src_vocab, tgt_vocab, a.text, a.beam, a.length_penalty,
                                 a.max_len, "month-first" if a.month_first else "day-first")
        else:
            results = translate_texts(model, src_vocab, tgt_vocab, a.text, a.beam,
                                      a.length_penalty, a.max_len)
    for w in caught:  # the unknown characters are shown beside their text (show)
        if not str(w.message).startswith("Vocab.encode: unknown"):
            print(_("warning: {message}").format(message=w.message), file=sys.stderr)
    show(results, src_vocab, tgt_vocab, not a.no_heatmap, a.svg)
