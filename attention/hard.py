"""Hard attention: read the one best-scoring position instead of the weighted average.

Shape letters as in ``attention/read.py``: B batch, T queries, S source positions, D width.

Soft attention (source 004 §4) reads c = Σ_j α_j h_j with α = softmax(e). The hard read picks

    j* = argmax_j e_j,        c = h_{j*}

(000 §7, question 1: closer to human selective focus, but not differentiable). As a function
of the scores, c is piecewise constant: away from ties a small change of e does not change
j*, so ∂c/∂e_j = 0 almost everywhere, and at a tie c jumps, so there is no derivative at
all. Backpropagation therefore gives the scorer nothing to learn from; hard attention has to
be trained otherwise: source 004 §4 names reinforcement learning in visual attention, citing
Mnih, Heess, Graves and Kavukcuoglu 2014, Recurrent Models of Visual Attention (its note 6).
The read is still linear in the values: ∂c/∂h_{j*} = I, ∂c/∂h_j = 0 for j ≠ j*.
"""
from __future__ import annotations

import numpy as np

from attention.masking import as_mask
from attention.checks import check_masked_values, check_read
from attention.read import weighted_sum
from minigrad.coerce import pair
from minigrad.tensor import Tensor


def hard_read(scores, values, mask=None) -> tuple:
    """``(context, weights)`` with one-hot weights at argmax_j e_j (masked positions never win).

    The weights are a constant array, not a function of the scores in the graph: the scores
    receive no gradient (their true derivative, 0 almost everywhere); the values receive
    ∂L/∂h_j = [j = j*] g. A query whose every key is masked reads zeros, as in ``read``.
    ``mask``: boolean, True = may be attended, (B, S) or broadcastable to the scores.
    """
    scores, values = pair(scores, values)
    check_read("hard_read", scores, values)
    e = scores.data                                                  # (B, [T,] S)
    if mask is not None:
        mask = as_mask(mask, scores.shape, "hard_read")              # (B, [1|T,] S)
        e = np.where(mask, e, -np.inf)                               # (B, [T,] S)
    best = np.argmax(e, axis=-1)                                     # (B, [T])
    onehot = (np.arange(e.shape[-1]) == best[..., None]).astype(values.dtype)  # (B, [T,] S)
    if mask is not None:
        onehot = onehot * np.any(np.broadcast_to(mask, e.shape), axis=-1, keepdims=True)
    weights = Tensor(onehot)
    context = check_masked_values("hard_read", weighted_sum(weights, values), values, mask)
    return context, weights                                          # (B, [T,] D), (B, [T,] S)
