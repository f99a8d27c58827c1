"""The checks at the models' entry points: token ids and masks, with errors that name the role.

The entry points -- ``Seq2Seq.forward`` and ``loss``, ``greedy`` and ``beam_search`` -- check
what the user hands in, once; the encoders and decoders they call take it as checked.

Shape letters: B batch, S source length, T target length, L either.
"""
from __future__ import annotations

import numpy as np

from models.vocab import PAD


def check_ids(ids, vocab: int, role: str) -> np.ndarray:
    """``ids`` as an array, or a ValueError naming ``role`` ("source", "targets") and the first
    id outside 0 .. vocab − 1."""
    ids = np.asarray(ids)
    if ids.size and (ids.min() < 0 or ids.max() >= vocab):
        bad = ids[(ids < 0) | (ids >= vocab)][0]
        raise ValueError(f"{role}: token id {bad} is out of range for a vocabulary of {vocab}")
    return ids


def check_mask(ids: np.ndarray, mask, role: str) -> np.ndarray:
    """``mask`` as booleans of the shape of ``ids`` (derived as ids != PAD when None), or a
    ValueError naming ``role`` and both shapes."""
    mask = ids != PAD if mask is None else np.asarray(mask, dtype=bool)  # (B, L)
    if mask.shape != ids.shape:
        raise ValueError(f"{role}: mask of shape {mask.shape} vs ids of shape {ids.shape}")
    return mask


def check_source(src, mask=None, vocab: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Validate ``src (B, S)`` integer ids (in range when ``vocab`` is given) and ``mask``
    (derived as src != PAD when None): right-padded, at least one real token per row."""
    src = np.asarray(src)                                         # (B, S)
    if src.ndim != 2 or src.dtype.kind not in "iu":
        raise ValueError(f"source: expected integer ids of shape (B, S), got {src.dtype} {src.shape}")
    if src.shape[1] == 0 or src.shape[0] == 0:
        raise ValueError(f"source: empty batch of shape {src.shape}")
    if vocab is not None:
        check_ids(src, vocab, "source")
    mask = check_mask(src, mask, "source")                        # (B, S)
    if not mask[:, 0].all():
        raise ValueError("source: every sequence needs at least one real token "
                         "(mask[:, 0] must be True; sources are right-padded)")
    if (mask[:, 1:] & ~mask[:, :-1]).any():
        raise ValueError("source: padding must come after the real tokens (right-padding); "
                         "the mask has a real token after a padded one")
    return src, mask


def check_targets(tgt, src: np.ndarray, vocab: int, teacher_forcing: float) -> np.ndarray:
    """Validate ``tgt (B, T)`` integer ids in range for sources ``src (B, S)``, and the
    teacher-forcing probability."""
    tgt = np.asarray(tgt)                                         # (B, T)
    if tgt.ndim != 2 or tgt.dtype.kind not in "iu":
        raise ValueError(f"targets: expected integer ids of shape (B, T), got {tgt.dtype} {tgt.shape}")
    if tgt.shape[0] != src.shape[0] or tgt.shape[1] == 0:
        raise ValueError(f"Seq2Seq: targets of shape {tgt.shape} do not fit sources {src.shape}")
    if not 0 <= teacher_forcing <= 1:  # written so that NaN fails too
        raise ValueError(f"Seq2Seq: teacher_forcing must be in [0, 1], got {teacher_forcing}")
    return check_ids(tgt, vocab, "targets")
