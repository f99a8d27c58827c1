"""Shared helpers for the attention tests: Hypothesis strategies (finite floats, a read's inputs)
and `expand_mask`. (Imported by the test files, which pytest runs with this folder on
sys.path: tests/ has no __init__.py.)"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


def finite(lo: float, hi: float):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False, allow_subnormal=False)


@st.composite
def read_inputs(draw, max_b: int = 3, max_t: int = 3, max_s: int = 6, max_d: int = 4,
                score_range: float = 5.0, with_t: bool | None = None):
    """(scores (B, [T,] S), values (B, S, D), mask (B, S)): a read's inputs, float64."""
    B = draw(st.integers(1, max_b))
    S = draw(st.integers(1, max_s))
    D = draw(st.integers(1, max_d))
    has_t = draw(st.booleans()) if with_t is None else with_t
    lead = (B, draw(st.integers(1, max_t))) if has_t else (B,)
    scores = draw(hnp.arrays(np.float64, lead + (S,), elements=finite(-score_range, score_range)))
    values = draw(hnp.arrays(np.float64, (B, S, D), elements=finite(-3, 3)))
    mask = draw(hnp.arrays(np.bool_, (B, S)))
    return scores, values, mask


def expand_mask(mask: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """A (B, S) mask broadcast to the scores' shape (B, [T,] S)."""
    return np.broadcast_to(mask.reshape(mask.shape[:1] + (1,) * (scores.ndim - 2) + mask.shape[1:]),
                           scores.shape)
