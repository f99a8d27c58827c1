"""Checks on values that may come from a command line or from a checkpoint anyone wrote.

``need`` raises one ``ValueError`` line; ``is_int``/``is_real`` refuse bools, strings and lists
(``True`` is an int to Python, never a size here). ``memory_estimate`` sizes a task's data
before it is generated, and ``check_state`` vets a saved ``TrainState`` before training
resumes from it (a tampered batch or epoch count would fail minutes later otherwise).
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.i18n import translator

_ = translator("models")

MAX_LEN = 1000                   # copy/reverse/sort source lengths
BYTES_PER_EXAMPLE = (400, 24)    # ≈ bytes per pair: fixed + per character (measured, rounded up)
SUMS = ("loss", "tokens", "correct", "exact", "examples")


def need(ok: bool, who: str, what: str, value) -> None:
    if not ok:
        shown = repr(value)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise ValueError(_("{who}: {what}, got {value}").format(who=who, what=what, value=shown))


def is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def is_real(v) -> bool:
    return (is_int(v) or isinstance(v, (float, np.floating))) and not math.isnan(v)


def available_memory() -> int | None:
    """Bytes the kernel says are available (Linux), else None."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_data_size(n_examples: int, max_len: int) -> None:
    """Refuse a task whose pairs would not fit in half the available memory (or 8 GB)."""
    fixed, per_char = BYTES_PER_EXAMPLE
    estimate = n_examples * (fixed + per_char * max(max_len, 32))
    free = available_memory()
    limit = free // 2 if free else 8 << 30
    if estimate > limit:
        raise ValueError(_("TrainConfig: {n:,} examples need about {need:,.1f} GiB of memory, "
                           "more than the {limit:.1f} GiB this run may use; use a smaller "
                           "--n-train/--n-val").format(n=n_examples, need=estimate / 2**30,
                                                       limit=limit / 2**30))


def check_state(d, n_batches: int, epochs: int) -> dict:
    """``d`` (a saved ``TrainState`` as a dict) if every field has a type and range that
    training can continue from; ValueError naming the first field that has not."""
    who = _("training state")
    need(isinstance(d, dict), who, _("expected a dict"), type(d).__name__)
    for name, hi in (("epoch", epochs), ("batch", n_batches), ("step", 10 ** 12)):
        need(is_int(d.get(name)) and 0 <= d[name] <= hi, who,
             _("{name} must be an int in 0..{hi}").format(name=name, hi=hi), d.get(name))
    need(is_real(d.get("seconds", 0.0)) and 0 <= d.get("seconds", 0.0) < math.inf, who,
         _("seconds must be a finite number >= 0"), d.get("seconds"))
    need(isinstance(d.get("rng"), dict), who, _("rng must be a generator state (a dict)"),
         d.get("rng"))
    need(d.get("epoch_rng") is None or isinstance(d["epoch_rng"], dict), who,
         _("epoch_rng must be a generator state or null"), d.get("epoch_rng"))
    need(isinstance(d.get("done", False), bool), who, _("done must be true or false"),
         d.get("done"))
    for name in ("history", "curve"):
        need(isinstance(d.get(name, []), list), who, _("{name} must be a list").format(name=name),
             d.get(name))
    need(all(isinstance(c, list) and len(c) == 2 and all(map(is_real, c)) for c in d.get("curve", [])),
         who, _("curve must hold [step, loss] pairs"), d.get("curve"))
    need(all(isinstance(h, dict) and is_real(h.get("step")) and is_real(h.get("val_exact"))
             for h in d.get("history", [])), who,
         _("history must hold dicts with step and val_exact"), d.get("history"))
    sums = d.get("sums", {})
    need(isinstance(sums, dict) and all(is_real(v) and 0 <= v < math.inf for v in sums.values()),
         who, _("sums must map names to finite numbers >= 0"), sums)
    best = d.get("best")
    need(best is None or (isinstance(best, dict) and is_int(best.get("epoch"))
                          and 1 <= best["epoch"] <= d["epoch"] and is_real(best.get("val_exact"))
                          and 0 <= best["val_exact"] <= 1),
         who, _("best must be null or {{epoch: a finished epoch, val_exact: 0..1}}").format(),
         best)
    if d["batch"] > 0:  # inside an epoch: the epoch's running sums and batch order are needed
        need(d.get("epoch_rng") is not None and all(k in sums for k in SUMS) and sums["tokens"] > 0,
             who, _("batch {batch} > 0 needs epoch_rng and sums of {sums}").format(
                 batch=d["batch"], sums=", ".join(SUMS)), sums)
    return d
