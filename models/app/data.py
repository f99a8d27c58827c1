"""Toy translation tasks for the seq2seq models: copy, reverse, sort and date normalisation.

Everything is generated in code from an ``np.random.Generator`` that the caller passes in:
nothing is downloaded and no global generator is seeded. Shape letters: B batch, S source
length, T target length (both counting the final EOS).

Token ids: PAD=0, BOS=1, EOS=2, UNK=3, then one id per alphabet character, in order.
A source is encoded as ``x_1 .. x_{S-1}, EOS`` and a target as ``y_1 .. y_{T-1}, EOS``.
The decoder input ``BOS, y_1 .. y_{T-1}`` is built by the model, which prepends BOS itself.
"""
from __future__ import annotations

import datetime as dt
import string
from dataclasses import dataclass
from typing import Callable, Iterator, NamedTuple, Sequence

import numpy as np

from models.vocab import Vocab, pad_batch

Pairs = list[tuple[str, str]]


# ---------------------------------------------------------------- string tasks

SYMBOLS = string.digits + "abcdefghij"  # 20 symbols: with the 4 specials, a vocab of 24


def _random_strings(rng: np.random.Generator, n: int, min_len: int, max_len: int,
                    alphabet: str) -> list[str]:
    """n strings, lengths uniform in [min_len, max_len], characters uniform over alphabet."""
    if not 1 <= min_len <= max_len:
        raise ValueError(f"need 1 <= min_len <= max_len, got min_len={min_len}, max_len={max_len}")
    lengths = rng.integers(min_len, max_len + 1, size=n)
    return ["".join(alphabet[i] for i in rng.integers(0, len(alphabet), size=k)) for k in lengths]


def copy_pairs(rng: np.random.Generator, n: int, min_len: int = 3, max_len: int = 10) -> Pairs:
    """Target = source."""
    return [(s, s) for s in _random_strings(rng, n, min_len, max_len, SYMBOLS)]


def reverse_pairs(rng: np.random.Generator, n: int, min_len: int = 3, max_len: int = 10) -> Pairs:
    """Target = source reversed: the alignment is the anti-diagonal."""
    return [(s, s[::-1]) for s in _random_strings(rng, n, min_len, max_len, SYMBOLS)]


def sort_pairs(rng: np.random.Generator, n: int, min_len: int = 3, max_len: int = 10) -> Pairs:
    """Target = the source's characters sorted by code point (digits before letters)."""
    return [(s, "".join(sorted(s))) for s in _random_strings(rng, n, min_len, max_len, SYMBOLS)]


# ---------------------------------------------------------------- dates

DATE_MIN, DATE_MAX = dt.date(1950, 1, 1), dt.date(2049, 12, 31)  # both included
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
CASES = ("title", "lower", "upper")  # applied to the whole string; digits are unaffected


def _ordinal(day: int) -> str:
    """1 -> "1st", 2 -> "2nd", 11 -> "11th", 23 -> "23rd"."""
    suffix = "th" if 11 <= day <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


# Numeric formats are all DAY-FIRST: if "4/3/26" could also mean April 3rd the task would be
# unlearnable, so month-first numeric forms ("11/29/2026") are deliberately absent. Names are
# written in English directly (not strftime's %B, which follows the locale).
def _month(d: dt.date) -> str:
    return MONTHS[d.month - 1]


def _wday(d: dt.date) -> str:
    return WEEKDAYS[d.weekday()]


_DATE_FORMATS: dict[str, Callable[[dt.date], str]] = {
    "d_month_yyyy": lambda d: f"{d.day} {_month(d)} {d.year}",
    "d_mon_yyyy": lambda d: f"{d.day} {_month(d)[:3]} {d.year}",
    "month_d_yyyy": lambda d: f"{_month(d)} {d.day}, {d.year}",
    "mon_d_yyyy": lambda d: f"{_month(d)[:3]} {d.day}, {d.year}",
    "weekday_month_d_yyyy": lambda d: f"{_wday(d)}, {_month(d)} {d.day}, {d.year}",
    "wkd_d_mon_yyyy": lambda d: f"{_wday(d)[:3]}, {d.day} {_month(d)[:3]} {d.year}",
    "dth_of_month_yyyy": lambda d: f"{_ordinal(d.day)} of {_month(d)} {d.year}",
    # "yy" reads 50-99 as 19yy, 00-49 as 20yy: that covers DATE_MIN..DATE_MAX exactly, so a
    # two-digit year never names two dates of the task.
    "d/m/yy": lambda d: f"{d.day}/{d.month}/{d.year % 100:02d}",
    "dd/mm/yyyy": lambda d: f"{d.day:02d}/{d.month:02d}/{d.year}",
    "dd.mm.yyyy": lambda d: f"{d.day:02d}.{d.month:02d}.{d.year}",
}
DATE_FORMATS: tuple[str, ...] = tuple(_DATE_FORMATS)


def format_date(date: dt.date, fmt: str, case: str = "title") -> str:
    """Write ``date`` in format ``fmt`` (one of DATE_FORMATS) and letter ``case`` (one of CASES)."""
    if fmt not in _DATE_FORMATS:
        raise ValueError(f"format_date: unknown format {fmt!r}; choose from {DATE_FORMATS}")
    if case not in CASES:
        raise ValueError(f"format_date: unknown case {case!r}; choose from {CASES}")
    text = _DATE_FORMATS[fmt](date)  # written in title case
    return text.lower() if case == "lower" else text.upper() if case == "upper" else text


def random_date(rng: np.random.Generator) -> dt.date:
    """A day drawn uniformly from DATE_MIN..DATE_MAX (both included)."""
    span = DATE_MAX.toordinal() - DATE_MIN.toordinal()
    return dt.date.fromordinal(DATE_MIN.toordinal() + int(rng.integers(0, span + 1)))


def date_pairs(rng: np.random.Generator, n: int, min_len: int = 3, max_len: int = 10) -> Pairs:
    """(human date, ISO "YYYY-MM-DD") pairs; format and case uniform over DATE_FORMATS x CASES.

    ``min_len``/``max_len`` are accepted for a uniform task signature and ignored: a date
    string has its own length (6 to 29 characters).
    """
    pairs = []
    for _ in range(n):
        date = random_date(rng)
        fmt = DATE_FORMATS[int(rng.integers(len(DATE_FORMATS)))]
        case = CASES[int(rng.integers(len(CASES)))]
        pairs.append((format_date(date, fmt, case), date.isoformat()))
    return pairs


_DATE_WORDS = "".join(MONTHS + WEEKDAYS) + "stndrdthof"
DATE_SRC_ALPHABET = "".join(sorted(set(string.digits + " ,./" + _DATE_WORDS.lower()
                                       + _DATE_WORDS.upper())))
DATE_TGT_ALPHABET = string.digits + "-"


# ---------------------------------------------------------------- registry

@dataclass(frozen=True)
class Task:
    """A task: its pair generator ``(rng, n, min_len, max_len) -> pairs`` and its alphabets."""
    name: str
    generate: Callable[[np.random.Generator, int, int, int], Pairs]
    src_alphabet: str
    tgt_alphabet: str


TASKS: dict[str, Task] = {t.name: t for t in (
    Task("copy", copy_pairs, SYMBOLS, SYMBOLS),
    Task("reverse", reverse_pairs, SYMBOLS, SYMBOLS),
    Task("sort", sort_pairs, SYMBOLS, SYMBOLS),
    Task("dates", date_pairs, DATE_SRC_ALPHABET, DATE_TGT_ALPHABET),
)}


@dataclass
class TaskData:
    """A task's vocabularies and its training and held-out validation pairs."""
    name: str
    src_vocab: Vocab
    tgt_vocab: Vocab
    train: Pairs
    val: Pairs


def make_task(name: str, rng: np.random.Generator, n_train: int, n_val: int,
              min_len: int = 3, max_len: int = 10, max_rounds: int = 100) -> TaskData:
    """Draw ``n_train + n_val`` pairs with pairwise distinct sources and split them.

    No source string is in both sets. (For "dates" the same day may still appear in the two
    sets written in different formats: that is the generalisation being measured.) Raises
    ValueError when the lengths allow too few distinct sources.
    """
    if name not in TASKS:
        raise ValueError(f"make_task: unknown task {name!r}; choose from {sorted(TASKS)}")
    if n_train < 0 or n_val < 0:
        raise ValueError(f"make_task: negative size n_train={n_train}, n_val={n_val}")
    task, need = TASKS[name], n_train + n_val
    pairs: dict[str, str] = {}  # source -> target, in order of first draw
    for _ in range(max_rounds):
        if len(pairs) >= need:
            break
        for src, tgt in task.generate(rng, need - len(pairs), min_len, max_len):
            pairs.setdefault(src, tgt)
    if len(pairs) < need:
        raise ValueError(f"make_task({name!r}): only {len(pairs)} distinct sources after "
                         f"{max_rounds} rounds, need {need}; widen min_len..max_len")
    items = list(pairs.items())
    return TaskData(name, Vocab(task.src_alphabet), Vocab(task.tgt_alphabet),
                    items[:n_train], items[n_train:need])


# ---------------------------------------------------------------- batching

class Batch(NamedTuple):
    """One padded batch. Both sides end with EOS; the model prepends BOS for the decoder input."""
    src: np.ndarray  # (B, S) int64: x_1 .. x_{S-1}, EOS, then PAD
    src_mask: np.ndarray  # (B, S) bool, True = real token
    tgt: np.ndarray  # (B, T) int64: y_1 .. y_{T-1}, EOS, then PAD
    tgt_mask: np.ndarray  # (B, T) bool


def batches(pairs: Sequence[tuple[str, str]], src_vocab: Vocab, tgt_vocab: Vocab,
            batch_size: int, rng: np.random.Generator | None = None,
            shuffle: bool = True) -> Iterator[Batch]:
    """One epoch of batches; the last one may be smaller. Shuffling needs ``rng``."""
    if batch_size < 1:
        raise ValueError(f"batches: batch_size must be >= 1, got {batch_size}")
    if shuffle and rng is None:
        raise ValueError("batches: shuffle=True needs rng=np.random.default_rng(seed)")
    order = rng.permutation(len(pairs)) if shuffle else np.arange(len(pairs))  # (len(pairs),)
    for start in range(0, len(pairs), batch_size):
        chunk = [pairs[i] for i in order[start: start + batch_size]]
        src, src_mask = pad_batch([src_vocab.encode(s) for s, _ in chunk])  # (B, S) each
        tgt, tgt_mask = pad_batch([tgt_vocab.encode(t) for _, t in chunk])  # (B, T) each
        yield Batch(src, src_mask, tgt, tgt_mask)
