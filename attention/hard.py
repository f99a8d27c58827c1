"""Hard attention: read the one best-scoring position instead of the weighted average
(000 §7, question 1). Shape letters as in ``attention/read.py``.

    j* = argmax_j e_j,        c = h_{j*}        (soft: c = Σ_j α_j h_j, source 004 §4)

c is piecewise constant in the scores: ∂c/∂e_j = 0 almost everywhere, so backpropagation gives
the scorer nothing (004 §4 trains it by reinforcement learning, Mnih et al. 2014). The read is
linear in the values: ∂c/∂h_{j*} = I, ∂c/∂h_j = 0 for j ≠ j*.
"""
from __future__ import annotations

import numpy as np

from attention.checks import read_inputs
from attention.read import weighted_sum
from minigrad.tensor import Tensor


def hard_read(scores, values, mask=None) -> tuple:
    """``(context, weights)``, one-hot weights at argmax_j e_j (masked positions never win), a
    constant in the graph; a query whose every key is masked reads zeros, as in ``read``."""
    scores, values, mask = read_inputs("hard_read", scores, values, mask)
    e = scores.data if mask is None else np.where(mask, scores.data, -np.inf)  # (B, [T,] S)
    best = np.argmax(e, axis=-1)                                     # (B, [T])
    onehot = (np.arange(e.shape[-1]) == best[..., None]).astype(values.dtype)  # (B, [T,] S)
    if mask is not None:                                             # a query that reads nothing
        onehot = onehot * np.any(np.broadcast_to(mask, e.shape), axis=-1, keepdims=True)
    weights = Tensor(onehot)
    return weighted_sum(weights, values), weights                    # (B, [T,] D), (B, [T,] S)
