"""Shared helpers for the models tests (imported by the test files, which pytest runs with
this folder on sys.path: tests/ has no __init__.py)."""
from __future__ import annotations

import numpy as np

from minigrad.gradcheck import gradcheck_module
from models.vocab import EOS, PAD
from models.seq2seq import ModelConfig, Seq2Seq


def gradcheck_params(module, fn, **kwargs) -> bool:
    """gradcheck of the scalar ``fn()`` with respect to every parameter of ``module``."""
    return gradcheck_module(module, fn, (), **kwargs)


def random_batch(rng: np.random.Generator, lengths, vocab: int) -> tuple:
    """Right-padded ids (B, max(lengths)) ending in EOS, and their mask."""
    B, L = len(lengths), max(lengths)
    ids = np.full((B, L), PAD, dtype=np.int64)
    for b, n in enumerate(lengths):
        ids[b, :n - 1] = rng.integers(4, vocab, size=n - 1)
        ids[b, n - 1] = EOS
    return ids, ids != PAD


def tiny_model(seed: int = 0, **overrides) -> Seq2Seq:
    """A float64 model small enough to gradcheck in about a second."""
    config = dict(src_vocab=9, tgt_vocab=8, embed=3, hidden=2, dec_hidden=3, attn=3,
                  dtype="float64")
    config.update(overrides)
    return Seq2Seq(ModelConfig(**config), np.random.default_rng(seed))


def batch(seed=0, src_lengths=(4, 2), tgt_lengths=(3, 2)):
    """A tiny padded batch: src (2, 4) over 9 ids and tgt (2, 3) over 8 ids, with their masks."""
    rng = np.random.default_rng(seed)
    src, src_mask = random_batch(rng, src_lengths, 9)
    tgt, tgt_mask = random_batch(rng, tgt_lengths, 8)
    return src, src_mask, tgt, tgt_mask
