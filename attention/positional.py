"""Positional encodings (Vaswani et al. 2017, §3.5): attention alone is permutation-equivariant,
so a Transformer adds where a token is to what it is. Shape letters: L positions, D model width.

    PE(pos, 2i)   = sin(pos / 10000^(2i / D))
    PE(pos, 2i+1) = cos(pos / 10000^(2i / D))

Each pair of columns rotates at its own frequency, so PE(pos + k) is linear in PE(pos); defined
for every position. ``LearnedPositions`` trains one vector per position up to ``max_len``.
"""
from __future__ import annotations

import numpy as np

from minigrad import functional as F, init
from minigrad.nn import Module, Parameter, check_sizes


def sinusoidal_encoding(length: int, dim: int, start: int = 0, dtype=np.float64) -> np.ndarray:
    """PE (L, D) of positions ``start .. start + length − 1`` (odd D drops the last cosine)."""
    if dim < 1 or length < 0 or start < 0:
        raise ValueError(f"sinusoidal_encoding: need dim >= 1, length >= 0 and start >= 0, "
                         f"got dim={dim}, length={length}, start={start}")
    pos = np.arange(start, start + length, dtype=np.float64)[:, None]   # (L, 1)
    i2 = np.arange(0, dim, 2, dtype=np.float64)[None, :]                # (1, ⌈D/2⌉): 2i
    angle = pos / 10000.0 ** (i2 / dim)                                  # (L, ⌈D/2⌉)
    pe = np.empty((length, dim))                                         # (L, D)
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, :dim // 2])
    return pe.astype(dtype)


class SinusoidalPositions(Module):
    """``forward(length, start=0) -> (L, D)`` fixed sinusoids (no parameters)."""

    def __init__(self, dim: int, dtype=np.float64):
        check_sizes("SinusoidalPositions", dim=dim)
        self.dim, self.dtype = dim, dtype

    def forward(self, length: int, start: int = 0):
        return sinusoidal_encoding(length, self.dim, start, self.dtype)  # (L, D)


class LearnedPositions(Module):
    """``forward(length, start=0) -> (L, D)``: rows of a trained table ``weight (max_len, D)``,
    initialised N(0, 0.02²) (GPT-2)."""

    def __init__(self, max_len: int, dim: int, rng: np.random.Generator, dtype=np.float64):
        check_sizes("LearnedPositions", max_len=max_len, dim=dim)
        rng = init.generator("LearnedPositions", rng)
        self.max_len = max_len
        self.weight = Parameter(0.02 * init.normal(rng, (max_len, dim), dtype))

    def forward(self, length: int, start: int = 0):
        if start + length > self.max_len:
            raise ValueError(f"LearnedPositions: positions {start}..{start + length - 1} go past "
                             f"the {self.max_len} learned ones (max_len); use sinusoids or more")
        return F.embedding(np.arange(start, start + length), self.weight)  # (L, D)
