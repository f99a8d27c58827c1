"""Toy translation tasks for the seq2seq models: copy, reverse, sort and date normalisation.

Everything is generated in code from an ``np.random.Generator`` that the caller passes in:
nothing is downloaded and no global generator is seeded. Shape letters: B batch, S source
length, T target length (both counting the final EOS).

Token ids: PAD=0, BOS=1, EOS=2, UNK=3, then one id per alphabet character, in order.
A source is encoded as ``x_1 .. x_{S-1}, EOS`` and a target as ``y_1 .. y_{T-1}, EOS``.
The decoder input ``BOS, y_1 .. y_{T-1}`` is built by the model, which prepends BOS itself.
"""
from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Callable, Iterator, NamedTuple, Sequence

import numpy as np

from minigrad.i18n import translator

from models.app import dates
from models.app.dates import date_pairs
from models.vocab import Vocab, pad_batch

_ = translator("models")
Pairs = list[tuple[str, str]]


# ---------------------------------------------------------------- string tasks

SYMBOLS = string.digits + "abcdefghij"  # 20 symbols: with the 4 specials, a vocab of 24


def _random_strings(rng: np.random.Generator, n: int, min_len: int, max_len: int,
                    alphabet: str) -> list[str]:
    """n strings, lengths uniform in [min_len, max_len], characters uniform over alphabet."""
    if not 1 <= min_len <= max_len:
        raise ValueError(_("need 1 <= min_len <= max_len, got min_len={min_len}, "
                           "max_len={max_len}").format(min_len=min_len, max_len=max_len))
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
# The dates task has its own module (models/app/dates.py): its forms, year range, pivot and
# ambiguity convention are documented there.


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
    Task("dates", date_pairs, dates.SRC_ALPHABET, dates.TGT_ALPHABET),
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
        raise ValueError(_("make_task: unknown task {name!r}; choose from {tasks}").format(
            name=name, tasks=sorted(TASKS)))
    if n_train < 0 or n_val < 0:
        raise ValueError(_("make_task: negative size n_train={n_train}, n_val={n_val}").format(
            n_train=n_train, n_val=n_val))
    task, need = TASKS[name], n_train + n_val
    pairs: dict[str, str] = {}  # source -> target, in order of first draw
    for _round in range(max_rounds):
        if len(pairs) >= need:
            break
        for src, tgt in task.generate(rng, need - len(pairs), min_len, max_len):
            pairs.setdefault(src, tgt)
    if len(pairs) < need:
        raise ValueError(_("make_task({name!r}): only {found} distinct sources after {rounds} "
                           "rounds, need {need}; widen min_len..max_len").format(
                               name=name, found=len(pairs), rounds=max_rounds, need=need))
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
        raise ValueError(_("batches: batch_size must be >= 1, got {batch_size}").format(
            batch_size=batch_size))
    if shuffle and rng is None:
        raise ValueError(_("batches: shuffle=True needs rng=np.random.default_rng(seed)"))
    order = rng.permutation(len(pairs)) if shuffle else np.arange(len(pairs))  # (len(pairs),)
    for start in range(0, len(pairs), batch_size):
        chunk = [pairs[i] for i in order[start: start + batch_size]]
        src, src_mask = pad_batch([src_vocab.encode(s) for s, _ in chunk])  # (B, S) each
        tgt, tgt_mask = pad_batch([tgt_vocab.encode(t) for _, t in chunk])  # (B, T) each
        yield Batch(src, src_mask, tgt, tgt_mask)
