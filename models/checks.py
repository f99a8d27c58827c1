"""The checks at the models' entry points -- ``Seq2Seq.forward`` and ``loss``, ``greedy`` and
``beam_search`` -- once, with errors that name the role; what they call takes the input as
checked. Shape letters: B batch, S source length, T target length, L either.
"""
from __future__ import annotations

import numpy as np

from models.vocab import PAD


def check_ids(ids, vocab: int, role: str) -> np.ndarray:
    """``ids`` as an array, every id in 0 .. vocab − 1."""
    ids = np.asarray(ids)
    if ids.size and (ids.min() < 0 or ids.max() >= vocab):
        bad = ids[(ids < 0) | (ids >= vocab)][0]
        raise ValueError(f"{role}: token id {bad} is out of range for a vocabulary of {vocab}")
    return ids


def check_mask(ids: np.ndarray, mask, role: str) -> np.ndarray:
    """``mask`` as booleans (B, L) of the shape of ``ids``; None: ids != PAD."""
    mask = ids != PAD if mask is None else np.asarray(mask, dtype=bool)  # (B, L)
    if mask.shape != ids.shape:
        raise ValueError(f"{role}: mask of shape {mask.shape} vs ids of shape {ids.shape}")
    return mask


def check_batch(ids, vocab: int | None, role: str, letter: str) -> np.ndarray:
    """A non-empty batch of integer ids (B, L), in range when ``vocab`` is given."""
    ids = np.asarray(ids)                                         # (B, L)
    if ids.ndim != 2 or ids.dtype.kind not in "iu" or 0 in ids.shape:
        raise ValueError(f"{role}: expected integer ids of shape (B, {letter}), non-empty, "
                         f"got {ids.dtype} {ids.shape}")
    return ids if vocab is None else check_ids(ids, vocab, role)


def check_source(src, mask=None, vocab: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Ids (B, S) and their mask: right-padded, a real token first in every row."""
    src = check_batch(src, vocab, "source", "S")                  # (B, S)
    mask = check_mask(src, mask, "source")                        # (B, S)
    if not mask[:, 0].all():
        raise ValueError("source: every sequence needs at least one real token (mask[:, 0])")
    if (mask[:, 1:] & ~mask[:, :-1]).any():
        raise ValueError("source: padding must come after the real tokens (right-padding)")
    return src, mask


def check_targets(tgt, src: np.ndarray, vocab: int, teacher_forcing: float,
                  rng) -> np.ndarray:
    """Ids (B, T) for the sources (B, S), and teacher forcing in [0, 1] (below 1 with ``rng``)."""
    tgt = check_batch(tgt, vocab, "targets", "T")                 # (B, T)
    if tgt.shape[0] != src.shape[0]:
        raise ValueError(f"targets: shape {tgt.shape} does not fit sources of shape {src.shape}")
    if not 0 <= teacher_forcing <= 1:  # written so that NaN fails too
        raise ValueError(f"Seq2Seq: teacher_forcing must be in [0, 1], got {teacher_forcing}")
    if teacher_forcing < 1 and rng is None:
        raise ValueError("Seq2Seq: teacher_forcing < 1 draws which inputs to replace: pass rng")
    return tgt


def check_choice(who: str, name: str, value, choices) -> None:
    """A setting chosen by name: ``value`` one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{who}: {name} must be one of {choices}, got {value!r}")
