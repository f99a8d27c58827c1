"""Attention's kernels (the contract: minigrad/kernels.py): ``FusedAdditiveScore`` (for
``AdditiveScore`` with tanh) and ``FusedConcatScore`` compute their energy e_j = vᵀ tanh(q + k_j)
as one op, ``additive_tanh``, with a hand-written backward. First order only.

Shape letters: B batch, T queries, S keys (source positions), A attention width. The attention
demos, which may not import ``models``, apply this table alone::

    att = swap(Attention(AdditiveScore(64, 128, 64)), KERNELS)   # minigrad.kernels.swap
"""
from __future__ import annotations

import numpy as np

from attention.scores import AdditiveScore, ConcatScore
from attention.checks import shape_str
from minigrad.ops import as_tensor
from minigrad.kernels import once_differentiable, tanh_
from minigrad.tensor import Tensor


def additive_tanh(q, k, v) -> Tensor:
    """``attention.scores.additive(q, k, v, "tanh")`` as one op, with its backward written out.

    Forward  u_j = tanh(q + k_j),  e_j = vᵀ u_j.  Backward, with δ_j = g_j v ⊙ (1 − u_j²):

        ∂L/∂q = Σ_j δ_j,    ∂L/∂k_j = δ_j  (summed over T),    ∂L/∂v = Σ_j g_j u_j
    """
    q, k, v = as_tensor(q), as_tensor(k), as_tensor(v)
    if not (q.ndim in (2, 3) and k.ndim == 3 and v.ndim == 1 and q.shape[0] == k.shape[0]
            and q.shape[-1] == k.shape[-1] == v.shape[0]):
        raise ValueError(f"additive_tanh: q {shape_str(q.shape, 'BT'[:q.ndim - 1])}, k "
                         f"{shape_str(k.shape, 'BS')} and v {v.shape} do not fit: expected "
                         f"q (B, A) or (B, T, A), k (B, S, A) and v (A,), one B and one A")
    three = q.ndim == 3
    u = (q.data[:, :, None, :] + k.data[:, None]) if three else (q.data[:, None, :] + k.data)
    tanh_(u)                                                  # (B, [T,] S, A)
    A = u.shape[-1]
    e = u @ v.data                                            # (B, [T,] S)

    def vjp(g):
        d = u * u                                             # δ = g v ⊙ (1 − u²), in place
        np.subtract(1, d, out=d)
        d *= g[..., None]
        d *= v.data                                           # (B, [T,] S, A)
        gv = g.reshape(-1) @ u.reshape(-1, A) if v.requires_grad else None  # (A,)
        return d.sum(axis=-2), (d.sum(axis=1) if three else d), gv
    return Tensor._from_op(e, (q, k, v), once_differentiable(
        vjp, "additive_tanh", "the core AdditiveScore / ConcatScore (models.kernels.use_core)"),
        "additive_tanh")


class FusedAdditiveScore(AdditiveScore):
    """``AdditiveScore`` whose tanh energy is ``additive_tanh`` (the linear ablation stays)."""

    def energy(self, q, k) -> Tensor:
        if self.activation != "tanh":
            return super().energy(q, k)                       # vᵀ(q + k_j): nothing to fuse
        return additive_tanh(q, k, self.v)                    # (B, [T,] S)


class FusedConcatScore(ConcatScore, FusedAdditiveScore):
    """``ConcatScore`` (an ``AdditiveScore``) whose energy vᵀ tanh(q + k_j) is ``additive_tanh``."""


KERNELS = {AdditiveScore: FusedAdditiveScore, ConcatScore: FusedConcatScore}  # core -> kernel
