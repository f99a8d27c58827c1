"""Parameter initialisation, and the one check of the ``rng`` argument.

Randomness is always passed in as an ``np.random.Generator``; every layer that draws its
parameters takes ``rng=None`` (a fresh unseeded Generator) or a Generator, and refuses anything
else -- a seed, a ``RandomState`` -- with the same one-line error, naming the layer.

PyTorch initialises a weight that multiplies an input of width ``fan_in`` (``Linear``, the
recurrent cells, the attention scores) uniformly:

    w ~ U(−1/√fan_in, 1/√fan_in)

and an embedding table with N(0, 1).
"""
from __future__ import annotations

import numpy as np


def check_rng(who: str, rng) -> None:
    """Raise ``TypeError`` naming ``who`` unless ``rng`` is an ``np.random.Generator``."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"{who}: rng must be an np.random.Generator (e.g. "
                        f"np.random.default_rng(0)), got {rng!r}")


def generator(who: str, rng) -> np.random.Generator:
    """``rng`` checked by ``check_rng``; a fresh unseeded Generator when it is None."""
    if rng is None:
        return np.random.default_rng()
    check_rng(who, rng)
    return rng


def uniform(rng: np.random.Generator, fan_in: int, shape: tuple, dtype=np.float64) -> np.ndarray:
    """An array of ``shape`` drawn from U(−1/√fan_in, 1/√fan_in), as ``dtype``."""
    bound = 1.0 / np.sqrt(fan_in)
    return rng.uniform(-bound, bound, size=shape).astype(dtype)


def normal(rng: np.random.Generator, shape: tuple, dtype=np.float64) -> np.ndarray:
    """An array of ``shape`` drawn from N(0, 1), as ``dtype`` (PyTorch's ``Embedding``)."""
    return rng.standard_normal(shape).astype(dtype)
