"""Around the dates model: what ``translate`` does to a date before and after the model.

- ``normalise``: what carries no meaning goes before the model sees the text. Leading,
  trailing and repeated whitespace (spaces, tabs, newlines) become nothing or one space; a
  space before a comma goes ("May 3 , 2020"); typographic apostrophes and dashes (’ ‘ – —)
  become ' and -.
- ``ambiguity``: a numeric date whose first two numbers are both 12 or less and differ
  (``03/04/2020``) can be read two ways. The model reads it day first (the convention the
  training data follows, see ``models.app.dates``); ``month_first`` swaps the two numbers, so
  the same model reads such input month first.
- ``split_time``: a time after the date (``2018-08-29T12:00:00``, ``May 3 2020 14:30``) is cut
  off, and translate says so: the model reads dates, and a time would change its reading.
- ``missing``: the model always writes a whole date, so a text that lacks a year, a month or
  a day (``May 3rd``, ``Aug 2018``, ``5/3``) or has a year outside 1000-9999 (``May 3 999``)
  would get one made up. Such a text is refused, with a one-line reason, before the model
  reads it.
- ``calendar_error``: the decoded text must be a real calendar date, ``YYYY-MM-DD``.
- ``read_dates``: all of it, with greedy or beam decoding (beam: the best hypothesis that is a
  real date wins); each ``Reading`` carries the notes ``translate`` prints, or why it was
  refused.
- ``wild_dates``: the hand-written test set shipped with the package (``wild_dates.tsv``).
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from importlib import resources

from minigrad.i18n import translator

from models.app.dates import MONTHS, WEEKDAY_ABBREVS, WEEKDAYS, two_digit_year
from models.vocab import pad_batch

_ = translator("models")  # what translate tells the user; the dates it reads are never translated

CONVENTIONS = ("day-first", "month-first")
_TYPOGRAPHIC = str.maketrans({"\u2018": "'", "\u2019": "'", "\u2010": "-", "\u2011": "-",
                              "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-"})
# An optional weekday, then n/n/year with one separator used twice.
_NUMERIC = re.compile(r"(?P<pre>(?:[A-Za-z]+\.?,? )?)(?P<a>\d{1,2})(?P<sep>[-/.])(?P<b>\d{1,2})"
                      r"(?P=sep)(?P<year>\d{1,2}|\d{4})")
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}")
# A time after the date: T or a space (or ", " or " at "), h:mm[:ss[.fff]], am/pm, a zone.
_TIME = re.compile(r"(?:T|,? (?:at )?)\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?: ?[ap]\.?m\.?)?"
                   r"(?: ?(?:Z|UTC|GMT|[+-]\d{2}:?\d{2}))?$", re.IGNORECASE)
# The parts of a date as typed: an ordinal day (3rd), a year after an apostrophe ('95),
# a run of digits, or a word.
_PART = re.compile(r"(?P<ordinal>\d+(?:st|nd|rd|th)\b)|'(?P<yy>\d{2})\b|(?P<number>\d+)"
                   r"|(?P<word>[a-z]+)")
_NOT_MONTHS = ({w.lower() for w in WEEKDAYS} | {w[:3].lower() for w in WEEKDAYS}
               | {a.lower() for abbrevs in WEEKDAY_ABBREVS.values() for a in abbrevs}
               | {"the", "of", "on"})


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
    year = two_digit_year(int(y)) if len(y) <= 2 else int(y)
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


def split_time(text: str) -> tuple:
    """(the date, the time part after it or "") of a normalised text."""
    m = _TIME.search(text)
    return (text, "") if m is None or m.start() == 0 else (text[:m.start()], text[m.start():])


def missing(text: str) -> str | None:
    """Why the model would have to invent part of the date in ``text`` (normalised, its time
    cut off): which of the year, the month and the day it lacks, or a year outside 1000-9999;
    None when the text names all three. Any word that is not a weekday counts as a month name
    (misspelled ones too): the model reads the name, this only counts the parts."""
    words, days, years, small, bad = 0, 0, 0, [], []
    for m in _PART.finditer(text.lower()):
        if m["word"]:
            words += m["word"] not in _NOT_MONTHS
        elif m["ordinal"]:
            days += 1
        elif m["yy"]:
            years += 1
        elif len(m["number"]) <= 2:
            small.append(m["number"])
        elif len(m["number"]) == 4 and int(m["number"]) >= 1000:
            years += 1
        else:
            bad.append(m["number"])
    numbers = days + years + len(small) + len(bad)
    if not words and numbers == 1 and bad and len(bad[0]) == 8:
        return None  # 20230815: year, month and day in one run of digits
    if bad:
        return (_("the year {year} is outside 1000-9999, the years the model reads") if
                len(bad[0]) <= 5 else
                _("{year} is no year, month or day the model reads")).format(year=bad[0])
    if words:  # a month name, so a day and a year besides it; a plain number fills either
        day = days > 0 or len(small) > 0
        year = years > 0 or len(small) >= (1 if days else 2)
        return _absent([p for p, there in (("year", year), ("day", day)) if not there])
    if numbers >= 3:  # numbers only: a day, a month and a year
        return None
    if numbers == 2:  # 5/3, 2018-08
        return _absent(["day"] if years else ["year"])
    return _absent(["month", "day"] if years else ["year", "month"] if numbers else
                   ["year", "month", "day"])


def _absent(parts: list) -> str | None:
    """The refusal for a text without ``parts`` (["year", "day"], say)."""
    if not parts:
        return None
    words = {"year": _("year"), "month": _("month"), "day": _("day")}
    template = [_("it names no {a}, so the model would make it up: write the whole date "
                  "(e.g. 3 May 2024)"),
                _("it names no {a} and no {b}, so the model would make them up: write the "
                  "whole date (e.g. 3 May 2024)"),
                _("it names no {a}, no {b} and no {c}, so the model would make them up: write "
                  "the whole date (e.g. 3 May 2024)")][len(parts) - 1]
    return template.format(**dict(zip("abc", (words[p] for p in parts))))


def century(text: str, output: str) -> str | None:
    """The note for a year of 1 or 2 digits that ``output`` writes out ('95 -> 1995), or None."""
    year = int(output[:4])
    short = [n for n in re.findall(r"\d+", text) if len(n) <= 2 and int(n) == year % 100]
    if re.search(rf"(?<!\d){year}(?!\d)", text) or not short:
        return None
    return _("the year {short} is read as {year} (a year of one or two digits: 00-49 -> "
             "20yy, 50-99 -> 19yy)").format(short=short[-1], year=year)


def calendar_error(iso: str) -> str | None:
    """None when ``iso`` is a real calendar date written YYYY-MM-DD, else what is wrong."""
    if not _ISO.fullmatch(iso):
        return _("not of the form YYYY-MM-DD")
    try:
        dt.date.fromisoformat(iso)
    except ValueError as e:
        return _("not a calendar date ({error})").format(error=e)
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
    refused: str | None = None  # why the model did not read it (then output is "")


def _notes(text: str, seen: str, convention: str) -> list:
    """What to tell the user about normalisation, a time cut off and ambiguity."""
    notes, clean = [], normalise(text)
    clean, time = split_time(clean)
    if clean + time != text:
        notes.append(_("normalised to {text!r} (spaces, quotes and dashes)").format(
            text=clean + time))
    if time:
        notes.append(_("the time {time!r} is not read: only the date {date!r} is").format(
            time=time.strip(), date=clean))
    amb = ambiguity(clean)
    if amb is not None:
        if convention == "day-first":
            notes.append(_("ambiguous: read day first as {day_first} (the default); "
                           "--month-first reads it as {month_first}").format(
                               day_first=amb.day_first, month_first=amb.month_first))
        else:
            notes.append(_("ambiguous: read month first as {month_first} (--month-first; "
                           "rewritten as {seen!r}); day first it would be {day_first}").format(
                               month_first=amb.month_first, seen=seen, day_first=amb.day_first))
    return notes


def read_dates(model, src_vocab, tgt_vocab, texts, beam: int = 0, length_penalty: float = 0.6,
               max_len: int = 64, convention: str = "day-first") -> list:
    """A ``Reading`` per text: normalised, rewritten for ``convention``, decoded, checked."""
    if convention not in CONVENTIONS:
        raise ValueError(_("read_dates: convention must be one of {conventions}, got "
                           "{convention!r}").format(conventions=CONVENTIONS,
                                                    convention=convention))
    seen = [split_time(normalise(t))[0] for t in texts]
    if convention == "month-first":
        seen = [month_first(s) for s in seen]
    for t, s in zip(texts, seen):
        if not s:
            raise ValueError(_("translate: {text!r} holds no text once spaces are removed")
                             .format(text=t))
    refused = [missing(s) for s in seen]
    read = [k for k, why in enumerate(refused) if why is None]  # the texts the model reads
    readings = [Reading(t, s, "", None, [], False, why) for t, s, why in zip(texts, seen, refused)]
    if not read:
        return readings
    src, mask = pad_batch([src_vocab.encode(seen[k]) for k in read])  # (B, S) each
    outs = (model.beam(src, beam, length_penalty, max_len, mask) if beam
            else model.greedy(src, max_len, mask))
    for k, o in zip(read, outs):
        readings[k] = Reading(texts[k], seen[k], tgt_vocab.decode(o.tokens), o,
                              _notes(texts[k], seen[k], convention))
    for b, r in ((b, readings[k]) for b, k in enumerate(read)):
        error = calendar_error(r.output)
        if error is not None and beam:  # the best hypothesis that is a real date, if any
            is_date = lambda ids: calendar_error(tgt_vocab.decode(ids)) is None
            out = model.beam(src[b:b + 1], beam, length_penalty, max_len, mask[b:b + 1],
                             accept=is_date)[0]
            if is_date(out.tokens):
                r.notes.append(_("the most likely output {output!r} is {error}; shown: the best "
                                 "of the {beam} beam hypotheses that is a real date").format(
                                     output=r.output, error=error, beam=beam))
                r.output, r.translation, error = tgt_vocab.decode(out.tokens), out, None
        amb = ambiguity(split_time(normalise(r.text))[0])
        want = amb and (amb.day_first if convention == "day-first" else amb.month_first)
        if error is None and want and r.output != want:
            r.notes.append(_("WARNING: the model wrote {output!r}, not this reading: do not "
                             "trust it").format(output=r.output))
        if error is None and (note := century(r.model_input, r.output)):
            r.notes.append(note)
        if error is not None:
            r.valid = False
            warning = (_("WARNING: none of the {beam} beam hypotheses is a real date; the best "
                         "{output!r} is {error}: do not trust it") if beam else
                       _("WARNING: {output!r} is {error}: do not trust it"))
            r.notes.append(warning.format(beam=beam, output=r.output, error=error))
    return readings


def wild_dates() -> list:
    """The hand-written "wild" set: [(text as typed, ISO answer)], from ``wild_dates.tsv``."""
    raw = resources.files("models.app").joinpath("wild_dates.tsv").read_text(encoding="utf-8")
    pairs = []
    for n, line in enumerate(raw.splitlines(), 1):
        if line.strip() and not line.startswith("#"):
            text, sep, answer = line.partition("\t")
            if not sep or calendar_error(answer) is not None:
                raise ValueError(_("wild_dates.tsv line {n}: want 'text<TAB>YYYY-MM-DD', got "
                                   "{line!r}").format(n=n, line=line))
            pairs.append((text, answer))
    return pairs


def wild_accuracy(model, src_vocab, tgt_vocab, pairs=None) -> tuple:
    """(exact-match rate, [(text, want, got) wrong]) of greedy reading on the wild set."""
    pairs = wild_dates() if pairs is None else pairs
    readings = read_dates(model, src_vocab, tgt_vocab, [t for t, _ in pairs])
    wrong = [(t, want, r.output or _("(refused: {why})").format(why=r.refused)) for (t, want), r
             in zip(pairs, readings) if r.output != want]
    return 1 - len(wrong) / len(pairs), wrong
