"""The dates task: dates as people type them -> ISO 8601 "YYYY-MM-DD".

Every source is built from parts drawn at random, so the forms combine freely:

- year first, numeric: ``2020-03-04``, ``2020/3/4``, ``2020.03.04``, ``20200304``;
- day first, numeric: ``4/3/2020``, ``04.03.2020``, ``4-3-20``;
- month first, numeric (US): ``12/25/2020``, ``3-31-99``, only when the day is above 12
  (see AMBIGUITY);
- a month name, day before it: ``3 May 2020``, ``3rd May, 2020``, ``the 3rd of May 2020``,
  ``03-Mar-2020``, ``3 May '20``;
- a month name, day after it: ``May 3, 2020``, ``May 3rd 2020``, ``May the 3rd, '20``;
- month names full (``September``), abbreviated (``Sep``, ``Sept``), dotted (``Sep.``) or
  misspelled as people do (``Febuary``, ``Agust``, ``Septmber`` ...);
- optionally a weekday first, full or abbreviated (``Tue``, ``Tues.``), with or without a
  comma; a quarter of them name the wrong day: the date wins;
- the whole string as written, in lower case or in upper case.

Conventions (also in the README and ``translate --help``):

- YEARS: a four-digit year 1000-9999 is copied through. Most training dates lie in
  1950-2049 (DATE_MIN..DATE_MAX), the rest anywhere in 1000-9999.
- PIVOT: a two-digit year ``yy`` (``20``, ``'20``) means 19yy for 50-99 and 20yy for 00-49,
  so two-digit years name exactly the days of 1950-2049.
- AMBIGUITY: a numeric date whose first two numbers are both 12 or less (``03/04/2020``) is
  read DAY FIRST (3 April 2020). Month-first numeric dates are trained only where the day is
  above 12, so the data never contradicts this. ``models.app.datetext`` detects such input and
  can rewrite it for the other convention.
"""
from __future__ import annotations

import datetime as dt
import string

import numpy as np

from minigrad.i18n import translator

_ = translator("models")  # the refusals only: the dates, month names and forms are data

DATE_MIN, DATE_MAX = dt.date(1950, 1, 1), dt.date(2049, 12, 31)  # two-digit years; both included
WIDE_MIN, WIDE_MAX = dt.date(1000, 1, 1), dt.date(9999, 12, 31)  # four-digit years
PIVOT = 50  # yy >= PIVOT -> 19yy, else 20yy
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
# Abbreviations besides the first three letters.
MONTH_ABBREVS = {9: ("Sept",)}
WEEKDAY_ABBREVS = {1: ("Tues",), 2: ("Weds",), 3: ("Thur", "Thurs")}
# Misspellings people type (transposed, dropped or doubled letters).
MISSPELLINGS = {
    1: ("Janurary", "Januray", "Janaury", "Jaunary"),
    2: ("Febuary", "Feburary", "Febraury", "Februray", "Febrary"),
    3: ("Mrach", "Marhc"), 4: ("Apirl", "Arpil", "Aprli"), 5: (), 6: ("Juen", "Jnue"),
    7: ("Jully", "Juyl"), 8: ("Agust", "Augest", "Auguest", "Augst"),
    9: ("Septmber", "Setpember", "Sepember", "Septemeber"),
    10: ("Ocotber", "Octber", "Octobor"), 11: ("Novmber", "Novemeber", "Noveber"),
    12: ("Decmber", "Decemeber", "Desember"),
}
CASES = ("as written", "lower", "upper")
FORMS = ("year-first", "day-first", "month-first", "day month", "month day", "d-mon-y")

SRC_ALPHABET = "".join(sorted(string.digits + string.ascii_letters + " ,./-'"))
TGT_ALPHABET = string.digits + "-"


def ordinal(day: int) -> str:
    """1 -> "1st", 2 -> "2nd", 11 -> "11th", 23 -> "23rd"."""
    suffix = "th" if 11 <= day <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def two_digit_year(yy: int) -> int:
    """The PIVOT: 50-99 -> 1950-1999, 00-49 -> 2000-2049."""
    return 1900 + yy if yy >= PIVOT else 2000 + yy


def _pick(rng: np.random.Generator, options):
    return options[int(rng.integers(len(options)))]


def _chance(rng: np.random.Generator, p: float) -> bool:
    return bool(rng.random() < p)


def random_date(rng: np.random.Generator, lo: dt.date = DATE_MIN,
                hi: dt.date = DATE_MAX) -> dt.date:
    """A day drawn uniformly from lo..hi (both included)."""
    return dt.date.fromordinal(lo.toordinal() +
                               int(rng.integers(0, hi.toordinal() - lo.toordinal() + 1)))


def _year(rng: np.random.Generator, d: dt.date, named: bool) -> str:
    """Four digits, or (for 1950-2049) two digits, after names often with an apostrophe."""
    if DATE_MIN <= d <= DATE_MAX and _chance(rng, 0.3):
        yy = f"{d.year % 100:02d}"
        return "'" + yy if named and _chance(rng, 0.6) else yy
    return str(d.year)


def _month_name(rng: np.random.Generator, month: int) -> str:
    """Full, abbreviated, dotted or misspelled."""
    full = MONTHS[month - 1]
    u = rng.random()
    if u < 0.45:
        return full
    if u < 0.85:
        abbrev = _pick(rng, (full[:3],) + MONTH_ABBREVS.get(month, ()))
        return abbrev + "." if abbrev != full and _chance(rng, 0.3) else abbrev
    return _pick(rng, MISSPELLINGS[month]) if MISSPELLINGS[month] else full


def _weekday(rng: np.random.Generator, d: dt.date) -> str:
    """A weekday prefix (a quarter of them wrong), full or abbreviated, maybe with a comma."""
    wd = d.weekday() if _chance(rng, 0.75) else int(rng.integers(7))
    full = WEEKDAYS[wd]
    u = rng.random()
    name = full if u < 0.5 else _pick(rng, (full[:3],) + WEEKDAY_ABBREVS.get(wd, ()))
    if name != full and _chance(rng, 0.2):
        name += "."
    return name + (", " if _chance(rng, 0.6) else " ")


def _numeric(rng: np.random.Generator, d: dt.date, form: str) -> str:
    """year-first, day-first or month-first numbers (month-first needs d.day > 12)."""
    pad = _chance(rng, 0.5)
    day, month = (f"{d.day:02d}", f"{d.month:02d}") if pad else (str(d.day), str(d.month))
    if form == "year-first":
        sep = _pick(rng, ("-", "-", "/", ".", ""))
        if sep == "" or _chance(rng, 0.6):  # yyyymmdd is always padded; ISO mostly
            day, month = f"{d.day:02d}", f"{d.month:02d}"
        return f"{d.year}{sep}{month}{sep}{day}"
    sep = _pick(rng, ("/", "/", ".", "-"))
    first, second = (day, month) if form == "day-first" else (month, day)
    return f"{first}{sep}{second}{sep}{_year(rng, d, named=False)}"


def _named(rng: np.random.Generator, d: dt.date, form: str) -> str:
    """A month name with the day before it, after it, or d-Mon-y."""
    month = _month_name(rng, d.month)
    if form == "d-mon-y":
        day = f"{d.day:02d}" if _chance(rng, 0.5) else str(d.day)
        return f"{day}-{month.rstrip('.')}-{_year(rng, d, named=False)}"
    day = ordinal(d.day) if _chance(rng, 0.5) else str(d.day)
    the = day[-1].isalpha() and _chance(rng, 0.3)  # "the 3rd of May", "May the 3rd"
    comma = "," if _chance(rng, 0.5) else ""
    year = _year(rng, d, named=True)
    if form == "day month":
        day = (f"the {day} of" if the else
               f"{day} of" if day[-1].isalpha() and _chance(rng, 0.3) else day)
        return f"{day} {month}{comma} {year}"
    return f"{month} {'the ' if the else ''}{day}{comma} {year}"


def date_text(rng: np.random.Generator, d: dt.date, form: str, case: str = "as written") -> str:
    """``d`` written in ``form`` (one of FORMS), parts drawn from ``rng``, in letter ``case``."""
    if form not in FORMS:
        raise ValueError(_("date_text: unknown form {form!r}; choose from {forms}").format(
            form=form, forms=FORMS))
    if case not in CASES:
        raise ValueError(_("date_text: unknown case {case!r}; choose from {cases}").format(
            case=case, cases=CASES))
    if form == "month-first" and d.day <= 12:
        raise ValueError(_("date_text: month-first needs a day above 12 (else it reads day "
                           "first), got {date}").format(date=d.isoformat()))
    named = form in ("day month", "month day", "d-mon-y")
    text = _named(rng, d, form) if named else _numeric(rng, d, form)
    if _chance(rng, 0.4 if named else 0.1):
        text = _weekday(rng, d) + text
    elif text.startswith("the ") and _chance(rng, 0.5):
        text = "The" + text[3:]  # a sentence's first word
    return text.lower() if case == "lower" else text.upper() if case == "upper" else text


# How often each form is drawn: names are more varied, so they get more of the data.
FORM_WEIGHTS = np.array([0.14, 0.12, 0.10, 0.27, 0.27, 0.10])


def date_pair(rng: np.random.Generator) -> tuple[str, str]:
    """One (human date, ISO date) pair: form, date, parts and case drawn from ``rng``."""
    form = FORMS[int(rng.choice(len(FORMS), p=FORM_WEIGHTS))]
    wide = _chance(rng, 0.25)
    lo, hi = (WIDE_MIN, WIDE_MAX) if wide and _chance(rng, 0.5) else (
        (WIDE_MIN, dt.date(2999, 12, 31)) if wide else (DATE_MIN, DATE_MAX))
    d = random_date(rng, lo, hi)
    while form == "month-first" and d.day <= 12:
        d = random_date(rng, lo, hi)
    case = CASES[int(rng.choice(3, p=[0.6, 0.2, 0.2]))]
    return date_text(rng, d, form, case), d.isoformat()


def date_pairs(rng: np.random.Generator, n: int, min_len: int = 3, max_len: int = 10) -> list:
    """n (human date, ISO "YYYY-MM-DD") pairs. ``min_len``/``max_len`` are accepted for a
    uniform task signature and ignored: a date string has its own length."""
    return [date_pair(rng) for _ in range(n)]


HELP = """dates (the demo's task; --task dates) as the model is trained to read them:
  year first   2020-03-04  2020/3/4  2020.03.04  20200304
  day first    4/3/2020  04.03.2020  4-3-20
  month first  12/25/2020  3-31-99   (US order; trained only where the day is above 12)
  month names  3 May 2020 · 3rd May, 2020 · the 3rd of May 2020 · 03-Mar-2020 · 3 May '20
               May 3, 2020 · May 3rd 2020 · May the 3rd, '20
               full (September), abbreviated (Sep, Sept), dotted (Sep.), misspelled (Febuary)
  weekday      optional, first: Tue, Tues., Tuesday, with or without a comma; a wrong
               weekday is ignored (the date wins)
  letter case  any: as written, lower or UPPER
years: four digits (1000-9999) are copied; two digits pivot at 50: 50-99 -> 19yy,
  00-49 -> 20yy (training dates lie mostly in 1950-2049)
ambiguous numeric dates (both numbers 12 or less, e.g. 03/04/2020) are read DAY FIRST
  (3 April 2020) and translate says so; --month-first reads them month first (March 4)
before the model reads a text: leading, trailing and repeated spaces (tabs, newlines) are
  removed, a space before a comma too, and typographic quotes and dashes become ' and -
the output is checked as a real calendar date: a warning when it is not; with --beam K the
  best of the K hypotheses that is a real date is shown
nothing is made up: a text without a year, a month or a day (May 3rd, Aug 2018, 5/3) or with
  a year outside 1000-9999 (May 3 999) is refused with the reason; a time after the date
  (2018-08-29T12:00:00, May 3, 2020 14:30) is cut off, and translate says so
"""
