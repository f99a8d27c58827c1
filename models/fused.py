"""A GRU step as one graph node, with its backward written out by hand.

Shape letters: B batch, H hidden size. ``gi = W_ih x + b_ih (B, 3H)``, ``h (B, H)``,
``W_hh (3H, H)``, ``b_hh (3H,)``, gate blocks stacked r | z | n (``models.recurrent``).

Why. ``GRUCell`` composed from primitives (``models.recurrent``) is the readable reference: 15
graph nodes per step, each with its Python overhead, its temporaries and, for the slices, a
zero-filled gradient of the full width. This op does the same arithmetic in one node and one
backward, and the tests hold it to the composed cell (equal forward and gradients to ~1e-12 in
float64), to finite differences and to ``tests/models/reference_gru.py``, the same backward in
plain NumPy without the in-place tricks. ``models.kernels.FusedGRUCell`` uses it (what it buys:
``benchmarks/README.md``). First order only: under ``create_graph=True`` it raises.

The two forms differ only in where the reset gate r acts on the candidate's pre-activation a_n:

    reset after  (PyTorch):  a_n = gi_n + r ⊙ (W_hn h + b_hn)
    reset before (Cho 2014): a_n = gi_n + W_hn (r ⊙ h) + b_hn

and in both  r = σ(a_r), z = σ(a_z), n = tanh(a_n), h' = n + z ⊙ (h − n)  with
a_r = gi_r + W_hr h + b_hr, a_z = gi_z + W_hz h + b_hz. The backward, with g = ∂L/∂h':

    ∂L/∂n = g ⊙ (1 − z)              ∂L/∂z = g ⊙ (h − n)           ∂L/∂h ∋ g ⊙ z
    ∂L/∂a_n = ∂L/∂n ⊙ (1 − n²)       ∂L/∂a_z = ∂L/∂z ⊙ z(1 − z)    ∂L/∂a_r = ∂L/∂r ⊙ r(1 − r)

reset after, with gh = W_hh h + b_hh (B, 3H):

    ∂L/∂r = ∂L/∂a_n ⊙ gh_n,   ∂L/∂gh = [∂L/∂a_r, ∂L/∂a_z, r ⊙ ∂L/∂a_n]
    ∂L/∂h ∋ ∂L/∂gh W_hh,      ∂L/∂W_hh = ∂L/∂ghᵀ h,    ∂L/∂b_hh = Σ_b ∂L/∂gh

reset before, with u = ∂L/∂(r ⊙ h) = ∂L/∂a_n W_hn (B, H):

    ∂L/∂r = u ⊙ h,   ∂L/∂h ∋ u ⊙ r + [∂L/∂a_r, ∂L/∂a_z] W_h,rz
    ∂L/∂W_hh = [[∂L/∂a_r, ∂L/∂a_z]ᵀ h ; ∂L/∂a_nᵀ (r ⊙ h)],   ∂L/∂b_hh = Σ_b ∂L/∂gi

In both forms ∂L/∂gi = [∂L/∂a_r, ∂L/∂a_z, ∂L/∂a_n]. In the code a leading ``d_`` means ∂L/∂:
``d_a`` (B, 3H) = ∂L/∂[a_r, a_z, a_n] = ∂L/∂gi, ``d_an`` its n block, ``d_gh`` = ∂L/∂gh.
"""
from __future__ import annotations

import numpy as np

from minigrad.coerce import as_tensor
from minigrad.kernels import sigmoid_, tanh_
from minigrad.tensor import Tensor
from minigrad.xp import once_differentiable


def gru_step(gi, h, weight_hh, bias_hh, reset_after: bool = True) -> Tensor:
    """h' of ``GRUCell.step`` (either form) as one op; see the module docstring for the VJP.

    Kept for backward: h (the input's own array, no copy), r | z and n in both forms, plus
    gh_n when resetting after or r ⊙ h when resetting before: (B, 4H) of new arrays either way.
    h' is computed with four arrays where the composed cell makes about fifteen.
    """
    h = as_tensor(h)
    gi, weight_hh, bias_hh = as_tensor(gi, h), as_tensor(weight_hh, h), as_tensor(bias_hh, h)
    _check(gi, h, weight_hh, bias_hh)
    forward, backward = ((reset_after_forward, reset_after_backward) if reset_after
                         else (reset_before_forward, reset_before_backward))
    h_new, saved = forward(gi.data, h.data, weight_hh.data, bias_hh.data)   # (B, H)
    vjp = once_differentiable(lambda g: backward(g, *saved), "gru_step",
                              "the core GRUCell, composed (models.kernels.use_core)")
    return Tensor._from_op(h_new, (gi, h, weight_hh, bias_hh), vjp, "gru_step")


def _check(gi: Tensor, h: Tensor, weight_hh: Tensor, bias_hh: Tensor) -> None:
    """Raise unless gi (B, 3H), h (B, H), weight_hh (3H, H) and bias_hh (3H,) fit."""
    H = h.shape[-1]
    if h.ndim != 2 or weight_hh.shape != (3 * H, H) or bias_hh.shape != (3 * H,):
        raise ValueError(f"gru_step: hidden state {h.shape} vs weight_hh {weight_hh.shape} and "
                         f"bias_hh {bias_hh.shape}: expected h (B, H), weight_hh (3H, H), bias_hh (3H,)")
    if gi.shape != (h.shape[0], 3 * H):
        raise ValueError(f"gru_step: projected input gi {gi.shape} vs hidden state {h.shape}: "
                         f"expected gi (B, 3H) = {(h.shape[0], 3 * H)}")


# ---- the two forms: forward (h', what backward keeps) and backward (∂L/∂ gi, h, W_hh, b_hh) ----

def reset_after_forward(gi, h, W_hh, b_hh) -> tuple:
    """PyTorch's form: a_n = gi_n + r ⊙ gh_n with gh = W_hh h + b_hh."""
    H = h.shape[1]
    gh = h @ W_hh.T                                             # (B, 3H)
    gh += b_hh
    rz, gh_n = gh[:, :2 * H], gh[:, 2 * H:]                    # (B, 2H), (B, H)
    rz += gi[:, :2 * H]                                         # a_r | a_z
    sigmoid_(rz)                                                # r | z (B, 2H), over gh's block
    a_n = rz[:, :H] * gh_n                                      # (B, H): r ⊙ gh_n
    n, h_new = _candidate_and_blend(a_n, gi, h, rz[:, H:])      # (B, H) each
    return h_new, (h, W_hh, rz, gh_n, n)


def reset_after_backward(g, h, W_hh, rz, gh_n, n) -> tuple:
    H = h.shape[1]
    r, z = rz[:, :H], rz[:, H:]                                 # (B, H) each
    d_a = _gate_grads(g, h, z, n)                               # (B, 3H), r block still empty
    np.multiply(d_a[:, 2 * H:], gh_n, out=d_a[:, :H])           # ∂L/∂r = ∂L/∂a_n ⊙ gh_n
    d_a[:, :2 * H] *= rz * (1 - rz)                             # ∂L/∂a_r, ∂L/∂a_z
    d_gh = d_a.copy()                                           # (B, 3H)
    d_gh[:, 2 * H:] *= r                                        # ∂L/∂gh_n = r ⊙ ∂L/∂a_n
    d_h = d_gh @ W_hh                                           # (B, H)
    d_h += g * z
    return d_a, d_h, d_gh.T @ h, d_gh.sum(axis=0)               # gi, h, W_hh (3H, H), b_hh (3H,)


def reset_before_forward(gi, h, W_hh, b_hh) -> tuple:
    """Cho et al.'s form: a_n = gi_n + W_hn (r ⊙ h) + b_hn."""
    H = h.shape[1]
    W_rz, W_n = W_hh[:2 * H], W_hh[2 * H:]                      # W_h,rz (2H, H), W_hn (H, H)
    rz = h @ W_rz.T                                             # (B, 2H)
    rz += b_hh[:2 * H]
    rz += gi[:, :2 * H]                                         # a_r | a_z
    sigmoid_(rz)                                                # r | z (B, 2H)
    rh = rz[:, :H] * h                                          # (B, H): r ⊙ h
    a_n = rh @ W_n.T                                            # (B, H)
    a_n += b_hh[2 * H:]
    n, h_new = _candidate_and_blend(a_n, gi, h, rz[:, H:])      # (B, H) each
    return h_new, (h, W_hh, rz, rh, n)


def reset_before_backward(g, h, W_hh, rz, rh, n) -> tuple:
    H = h.shape[1]
    r, z = rz[:, :H], rz[:, H:]                                 # (B, H) each
    d_a = _gate_grads(g, h, z, n)                               # (B, 3H), r block still empty
    u = d_a[:, 2 * H:] @ W_hh[2 * H:]                           # (B, H): ∂L/∂(r ⊙ h)
    np.multiply(u, h, out=d_a[:, :H])                           # ∂L/∂r = u ⊙ h
    d_a[:, :2 * H] *= rz * (1 - rz)                             # ∂L/∂a_r, ∂L/∂a_z
    d_rz = d_a[:, :2 * H]                                       # (B, 2H)
    d_h = d_rz @ W_hh[:2 * H]                                   # (B, H)
    d_h += g * z
    d_h += u * r
    d_W = np.concatenate([d_rz.T @ h, d_a[:, 2 * H:].T @ rh])   # (3H, H)
    return d_a, d_h, d_W, d_a.sum(axis=0)                       # gi, h, W_hh, b_hh (3H,)


def _candidate_and_blend(a_n, gi, h, z) -> tuple:
    """n = tanh(a_n + gi_n) in place in ``a_n``, and h' = n + z ⊙ (h − n)."""
    H = h.shape[1]
    a_n += gi[:, 2 * H:]                                        # a_n (B, H)
    n = tanh_(a_n)                                              # n (B, H)
    h_new = h - n                                               # (B, H)
    h_new *= z
    h_new += n                                                  # h' (B, H)
    return n, h_new


def _gate_grads(g, h, z, n) -> np.ndarray:
    """d_a (B, 3H) with its z block ∂L/∂z = g ⊙ (h − n) (still before σ') and its n block
    ∂L/∂a_n = g ⊙ (1 − z) ⊙ (1 − n²); the r block is left for the form to fill."""
    H = h.shape[1]
    d_a = np.empty((h.shape[0], 3 * H), dtype=np.result_type(g, h))  # (B, 3H)
    d_an = d_a[:, 2 * H:]
    np.subtract(1, z, out=d_an)
    d_an *= g                                                   # ∂L/∂n = g ⊙ (1 − z)
    d_an *= 1 - n * n                                           # ∂L/∂a_n
    d_z = d_a[:, H:2 * H]
    np.subtract(h, n, out=d_z)
    d_z *= g                                                    # ∂L/∂z = g ⊙ (h − n)
    return d_a
