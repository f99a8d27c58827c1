"""Around the dates model: what ``translate`` does to a date before and after the model.

- ``normalise``: what carries no meaning goes before the model sees the text. Leading,
  trailing and repeated whitespace (spaces, tabs, newlines) become nothing or one space; a
  space before a comma goes ("May 3 , 2020"); typographic apostrophes and dashes (’ ‘ – —)
  become ' and -.
- ``ambiguity``: a numeric date whose first two numbers are both 12 or less and differ
  (``03/04/2020``) can be read two ways. The model reads it day first (the convention the
  training data follows, see ``models.app.dates``); ``month_first`` swaps the two numbers, so
  the same model reads such input month first.
- ``calendar_error``: the decoded text must be a real calendar date, ``YYYY-MM-DD``.
- ``read_dates``: all of it, with greedy or beam decoding (beam: the best hypothesis that is a
  real date wins); each ``Reading`` carries the notes ``translate`` prints.
- ``wild_dates``: the hand-written test set shipped with the package (``wild_dates.tsv``).
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from importlib import resources

from models.app.dates import two_digit_year
from models.vocab import pad_batch

CONVENTIONS = ("day-first", "month-first")
_TYPOGRAPHIC = str.maketrans({"\u2018": "'", "\u2019": "'", "\u2010": "-", "\u2011": "-",
                              "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-"})
# An optional weekday, then n/n/year with one separator used twice.
_NUMERIC = re.compile(r"(?P<pre>(?:[A-Za-z]+\.?,? )?)(?P<a>\d{1,2})(?P<sep>[-/.])(?P<b>\d{1,2})"
                      r"(?P=sep)(?P<year>\d{2}|\d{4})")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")


def normalise(text: str) -> str:
    """Typographic quotes/dashes to ASCII, whitespace trimmed and collapsed, no space before ','."""
    return " ".join(text.translate(_TYPOGRAPHIC).split()).replace(" ,", ",")


@dataclass(frozen=True)
class Ambiguity:
    """The two readings of an ambiguous numeric date, as ISO dates."""
    day_first: str
    month_first: str


def ambiguity(text: str) -> Ambiguity | None:
    """The two readings when ``text`` (normalised) is an ambiguous numeric date, else None."""
    m = _NUMERIC.fullmatch(text)
    if not m:
        return None
    a, b, y = int(m["a"]), int(m["b"]), m["year"]
    if not (1 <= a <= 12 and 1 <= b <= 12) or a == b:
        return None  # a number above 12 fixes the order; equal numbers read the same
    year = two_digit_year(int(y)) if len(y) == 2 else int(y)
    if year < 1:
        return None
    return Ambiguity(dt.date(year, b, a).isoformat(), dt.date(year, a, b).isoformat())


def month_first(text: str) -> str:
    """``text`` with the first two numbers swapped when it is ambiguous: the day-first model
    then reads it month first. Other text is returned unchanged."""
    if ambiguity(text) is None:
        return text
    m = _NUMERIC.fullmatch(text)
    return f"{m['pre']}{m['b']}{m['sep']}{m['a']}{m['sep']}{m['year']}"


def calendar_error(iso: str) -> str | None:
    """None when ``iso`` is a real calendar date written YYYY-MM-DD, else what is wrong."""
    if not _ISO.fullmatch(iso):
        return "not of the form YYYY-MM-DD"
    try:
        dt.date.fromisoformat(iso)
    except ValueError as e:
        return f"not a calendar date ({e})"
    return None


@dataclass
class Reading:
    """One date read by the model: the text as given, what the model saw, its output."""
    text: str
    model_input: str
    output: str
    translation: object  # models.decoding.Translation (tokens, weights, score)
    notes: list = field(default_factory=list)  # what translate says besides the output
    valid: bool = True


def _notes(text: str, seen: str, convention: str) -> list:
    """What to tell the user about normalisation and ambiguity."""
    notes, clean = [], normalise(text)
    if clean != text:
        notes.append(f"normalised to {clean!r} (spaces, quotes and dashes)")
    amb = ambiguity(clean)
    if amb is not None:
        if convention == "day-first":
            notes.append(f"ambiguous: read day first as {amb.day_first} (the default); "
                         f"--month-first reads it as {amb.month_first}")
        else:
            notes.append(f"ambiguous: read month first as {amb.month_first} (--month-first; "
                         f"rewritten as {seen!r}); day first it would be {amb.day_first}")
    return notes


def read_dates(model, src_vocab, tgt_vocab, texts, beam: int = 0, length_penalty: float = 0.6,
               max_len: int = 64, convention: str = "day-first") -> list:
    """A ``Reading`` per text: normalised, rewritten for ``convention``, decoded, checked."""
    if convention not in CONVENTIONS:
        raise ValueError(f"read_dates: convention must be one of {CONVENTIONS}, got {convention!r}")
    seen = [normalise(t) for t in texts]
    if convention == "month-first":
        seen = [month_first(s) for s in seen]
    for t, s in zip(texts, seen):
        if not s:
            raise ValueError(f"translate: {t!r} holds no text once spaces are removed")
    src, mask = pad_batch([src_vocab.encode(s) for s in seen])  # (B, S) each
    outs = (model.beam(src, beam, length_penalty, max_len, mask) if beam
            else model.greedy(src, max_len, mask))
    readings = [Reading(t, s, tgt_vocab.decode(o.tokens), o, _notes(t, s, convention))
                for t, s, o in zip(texts, seen, outs)]
    for b, r in enumerate(readings):
        error = calendar_error(r.output)
        if error is not None and beam:  # the best hypothesis that is a real date, if any
            is_date = lambda ids: calendar_error(tgt_vocab.decode(ids)) is None
            out = model.beam(src[b:b + 1], beam, length_penalty, max_len, mask[b:b + 1],
                             accept=is_date)[0]
            if is_date(out.tokens):
                r.notes.append(f"the most likely output {r.output!r} is {error}; shown: the best "
                               f"of the {beam} beam hypotheses that is a real date")
                r.output, r.translation, error = tgt_vocab.decode(out.tokens), out, None
        amb = ambiguity(normalise(r.text))
        want = amb and (amb.day_first if convention == "day-first" else amb.month_first)
        if error is None and want and r.output != want:
            r.notes.append(f"WARNING: the model wrote {r.output!r}, not this reading: do not trust it")
        if error is not None:
            r.valid = False
            which = f"none of the {beam} beam hypotheses is a real date; the best " if beam else ""
            r.notes.append(f"WARNING: {which}{r.output!r} is {error}: do not trust it")
    return readings


def wild_dates() -> list:
    """The hand-written "wild" set: [(text as typed, ISO answer)], from ``wild_dates.tsv``."""
    raw = resources.files("models.app").joinpath("wild_dates.tsv").read_text(encoding="utf-8")
    pairs = []
    for n, line in enumerate(raw.splitlines(), 1):
        if line.strip() and not line.startswith("#"):
            text, sep, answer = line.partition("\t")
            if not sep or calendar_error(answer) is not None:
                raise ValueError(f"wild_dates.tsv line {n}: want 'text<TAB>YYYY-MM-DD', got {line!r}")
            pairs.append((text, answer))
    return pairs


def wild_accuracy(model, src_vocab, tgt_vocab, pairs=None) -> tuple:
    """(exact-match rate, [(text, want, got) wrong]) of greedy reading on the wild set."""
    pairs = wild_dates() if pairs is None else pairs
    readings = read_dates(model, src_vocab, tgt_vocab, [t for t, _ in pairs])
    wrong = [(t, want, r.output) for (t, want), r in zip(pairs, readings) if r.output != want]
    return 1 - len(wrong) / len(pairs), wrong
