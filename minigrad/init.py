"""Parameter initialisation, as PyTorch, and the one check of the ``rng`` argument: a layer
takes ``rng=None`` (a fresh Generator) or an ``np.random.Generator``, never a seed."""
from __future__ import annotations

import numpy as np


def check_rng(who: str, rng) -> None:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"{who}: rng must be an np.random.Generator (np.random.default_rng(0)), "
                        f"got {rng!r}")


def generator(who: str, rng) -> np.random.Generator:
    if rng is None:
        return np.random.default_rng()
    check_rng(who, rng)
    return rng


def uniform(rng: np.random.Generator, fan_in: int, shape: tuple, dtype=np.float64) -> np.ndarray:
    """w ~ U(−1/√fan_in, 1/√fan_in): a weight multiplying an input of width fan_in."""
    bound = 1.0 / np.sqrt(fan_in)
    return rng.uniform(-bound, bound, size=shape).astype(dtype)


def normal(rng: np.random.Generator, shape: tuple, dtype=np.float64) -> np.ndarray:
    """N(0, 1), as PyTorch's ``Embedding``."""
    return rng.standard_normal(shape).astype(dtype)
