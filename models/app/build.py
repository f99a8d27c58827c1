"""The one place where the application builds a model: the core ``Seq2Seq`` switched to its
kernels by the one switch, ``models.kernels.use_kernels`` (minigrad's, attention's and the models'
tables; the same parameters, names and numbers; faster steps). Every command that trains, loads
or compares a model builds it here; ``python -m models graph`` draws the core model instead, so
that every op of the equations is a box.
"""
from __future__ import annotations

import numpy as np

from models.kernels import use_kernels
from models.seq2seq import ModelConfig, Seq2Seq


def build_model(config: ModelConfig, rng: np.random.Generator | None = None) -> Seq2Seq:
    """``Seq2Seq(config, rng)`` with its kernels switched on."""
    return use_kernels(Seq2Seq(config, rng))
