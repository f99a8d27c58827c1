"""Checks on values that may come from a command line or from a checkpoint anyone wrote.

``need`` raises one ``ValueError`` line; ``is_int``/``is_real`` refuse bools, strings and lists
(``True`` is an int to Python, never a size here). ``check_data_size`` sizes a task's data
before it is generated; ``check_model_size`` caps a ``ModelConfig``'s sizes and its estimated
parameter count before a model is built (a tampered ``"hidden": 200000`` in a checkpoint is
refused, not allocated); ``check_state`` vets a saved ``TrainState`` before training resumes
from it (a tampered batch or epoch count would fail minutes later otherwise).
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.i18n import translator

_ = translator("models")

MAX_LEN = 1000                   # copy/reverse/sort source lengths
BYTES_PER_EXAMPLE = (400, 24)    # ≈ bytes per pair: fixed + per character (measured, rounded up)
SUMS = ("loss", "tokens", "correct", "exact", "examples")
MAX_VOCAB = 10_000  # ids: a character vocabulary is far smaller
MAX_WIDTH = 1024    # embed, hidden, dec_hidden, attn, local_window: at 1024 a model is ~40 M
                    # parameters
MAX_LAYERS = 48     # transformer layers
MAX_POSITIONS = 100_000
MAX_PARAMETERS = 50_000_000  # ~0.4 GB of float64 weights, ~2 GB with gradients and Adam's moments
CAPS = (("src_vocab", MAX_VOCAB), ("tgt_vocab", MAX_VOCAB), ("embed", MAX_WIDTH),
        ("hidden", MAX_WIDTH), ("dec_hidden", MAX_WIDTH), ("attn", MAX_WIDTH),
        ("local_window", MAX_WIDTH), ("layers", MAX_LAYERS), ("heads", MAX_WIDTH),
        ("d_model", MAX_WIDTH), ("ff", 4 * MAX_WIDTH), ("max_positions", MAX_POSITIONS))


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


def estimated_parameters(config) -> int:
    """An upper bound on the number of weights of a ``ModelConfig``'s model (at most twice the
    real count), computed before anything is allocated."""
    if config.decoder == "transformer":
        d, f = config.d_model, config.ff  # a layer: encoder 4d² + 2df, decoder 8d² + 2df, biases
        tables = (config.src_vocab + 2 * config.tgt_vocab + config.max_positions) * d
        return config.layers * (12 * d * d + 4 * d * f + 16 * d + 2 * f) + tables
    e, h, s, a = config.embed, config.hidden, config.dec_hidden, config.attn
    encoder = 2 * 4 * (e + h + 2) * h  # two directions, at most four gates (LSTM)
    decoder = 4 * (e + 2 * h + 2 * s + 2) * s + (2 * h + s + 1) * (a + 2 * s + 1)
    embeddings, out = (config.src_vocab + config.tgt_vocab) * e, (s + 1) * config.tgt_vocab
    return embeddings + encoder + decoder + out


def check_model_size(config) -> None:
    """Refuse a ``ModelConfig`` (already checked for types and names) whose sizes are above
    ``CAPS`` or whose model would have more than ``MAX_PARAMETERS`` weights."""
    for name, cap in CAPS:
        if getattr(config, name) > cap:
            raise ValueError(f"ModelConfig: {name} must be a positive int (at most {cap}), "
                             f"got {getattr(config, name)!r}")
    n = estimated_parameters(config)
    if n > MAX_PARAMETERS:
        fields = ("layers, d_model, ff, src_vocab, tgt_vocab, max_positions"
                  if config.decoder == "transformer" else
                  "embed, hidden, dec_hidden, attn, vocabularies")
        raise ValueError(f"ModelConfig: about {n:,} parameters, more than the {MAX_PARAMETERS:,} "
                         f"this program trains; make {fields} smaller")


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
    need(all(isinstance(c, list) and len(c) == 2 and all(map(is_real, c))
             for c in d.get("curve", [])),
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
