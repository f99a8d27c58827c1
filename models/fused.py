"""A GRU step as one graph node, with its backward written out by hand.

Shape letters: B batch, H hidden size. ``gi = W_ih x + b_ih (B, 3H)``, ``h (B, H)``,
``weight_hh (3H, H)``, ``bias_hh (3H,)``, gate blocks stacked r | z | n (``models.recurrent``).

Why. ``GRUCell`` composed from primitives (``models.recurrent``) is the readable reference: 15
graph nodes per step, each with its Python overhead, its temporaries and, for the slices, a
zero-filled gradient of the full width. This op does the same arithmetic in one node and one
backward, and the tests hold it to the composed cell (equal forward and gradients to ~1e-12 in
float64) and to finite differences. ``GRUCell(fused=True)``, the default, uses it.

The backward, with g = ∂L/∂h' and a_r, a_z, a_n the gates' pre-activations
(r = σ(a_r), z = σ(a_z), n = tanh(a_n)); from h' = n + z ⊙ (h − n):

    ∂L/∂n = g ⊙ (1 − z)              ∂L/∂z = g ⊙ (h − n)           ∂L/∂h ∋ g ⊙ z
    ∂L/∂a_n = ∂L/∂n ⊙ (1 − n²)       ∂L/∂a_z = ∂L/∂z ⊙ z(1 − z)    ∂L/∂a_r = ∂L/∂r ⊙ r(1 − r)

reset_after (torch's form), a_n = gi_n + r ⊙ gh_n with gh = W_hh h + b_hh:

    ∂L/∂r = ∂L/∂a_n ⊙ gh_n,   ∂L/∂gh = [∂L/∂a_r, ∂L/∂a_z, r ⊙ ∂L/∂a_n]   (B, 3H)
    ∂L/∂h ∋ ∂L/∂gh W_hh,      ∂L/∂W_hh = ∂L/∂ghᵀ h,    ∂L/∂b_hh = Σ_b ∂L/∂gh

Cho et al.'s form, a_n = gi_n + W_hn (r ⊙ h) + b_hn: with u = ∂L/∂a_n W_hn (B, H),

    ∂L/∂r = u ⊙ h,   ∂L/∂h ∋ u ⊙ r + [∂L/∂a_r, ∂L/∂a_z] W_h,rz
    ∂L/∂W_hh = [[∂L/∂a_r, ∂L/∂a_z]ᵀ h ; ∂L/∂a_nᵀ (r ⊙ h)],   ∂L/∂b_hh = Σ_b ∂L/∂gi

In both forms ∂L/∂gi = [∂L/∂a_r, ∂L/∂a_z, ∂L/∂a_n]. In the code a leading ``d`` means ∂L/∂:
``d_an`` = ∂L/∂a_n, ``d_gh`` = ∂L/∂gh, ``dh`` = ∂L/∂h, ``dW`` = ∂L/∂W_hh, ``db`` = ∂L/∂b_hh, and
``d`` (B, 3H) = ∂L/∂gi; ``gh`` without a ``d`` is the forward's W_hh h + b_hh, and ``x`` is
h's array (not the cell's input).
"""
from __future__ import annotations

import numpy as np

from minigrad.coerce import as_tensor
from minigrad.tensor import Tensor


def _check(gi: Tensor, h: Tensor, weight_hh: Tensor, bias_hh: Tensor) -> int:
    """H, after checking the four shapes against one another."""
    H = h.shape[-1]
    if h.ndim != 2 or weight_hh.shape != (3 * H, H) or bias_hh.shape != (3 * H,):
        raise ValueError(f"gru_step: hidden state {h.shape} vs weight_hh {weight_hh.shape} and "
                         f"bias_hh {bias_hh.shape}: expected h (B, H), weight_hh (3H, H), bias_hh (3H,)")
    if gi.shape != (h.shape[0], 3 * H):
        raise ValueError(f"gru_step: projected input gi {gi.shape} vs hidden state {h.shape}: "
                         f"expected gi (B, 3H) = {(h.shape[0], 3 * H)}")
    return H


def _sigmoid_(a: np.ndarray) -> np.ndarray:
    """σ(a) = (1 + tanh(a/2)) / 2, in place: never overflows, and 2x faster than
    ``minigrad.ops.sigmoid_array`` here (it makes no temporaries)."""
    a *= 0.5
    np.tanh(a, out=a)
    a *= 0.5
    a += 0.5
    return a


def gru_step(gi, h, weight_hh, bias_hh, reset_after: bool = True) -> Tensor:
    """h' of ``GRUCell.step`` (either form) as one op; see the module docstring for the VJP.

    Kept for backward: h (the input's own array, no copy), r | z and n in both forms, plus
    gh_n with reset_after or r ⊙ h in Cho et al.'s form: (B, 4H) of new arrays either way.
    h' is computed with four arrays where the composed cell makes about fifteen.
    """
    h = as_tensor(h)
    gi, weight_hh, bias_hh = as_tensor(gi, h), as_tensor(weight_hh, h), as_tensor(bias_hh, h)
    H = _check(gi, h, weight_hh, bias_hh)
    x, W, b = h.data, weight_hh.data, bias_hh.data              # h (B, H), W_hh (3H, H), b_hh (3H,)
    if reset_after:
        gh = x @ W.T                                            # (B, 3H)
        gh += b
        rz, gh_n = gh[:, :2 * H], gh[:, 2 * H:]                # (B, 2H), (B, H): gh_n = W_hn h + b_hn
        rz += gi.data[:, :2 * H]
        _sigmoid_(rz)                                           # (B, 2H): r | z, over gh_rz
        n = rz[:, :H] * gh_n                                    # (B, H): r ⊙ gh_n
    else:
        W_rz, W_n = W[:2 * H], W[2 * H:]                        # W_h,rz (2H, H), W_hn (H, H)
        rz = x @ W_rz.T                                         # (B, 2H)
        rz += b[:2 * H]
        rz += gi.data[:, :2 * H]
        _sigmoid_(rz)                                           # (B, 2H): r | z
        rh = rz[:, :H] * x                                      # (B, H): r ⊙ h
        n = rh @ W_n.T                                          # (B, H)
        n += b[2 * H:]
    n += gi.data[:, 2 * H:]                                     # a_n (B, H)
    np.tanh(n, out=n)                                           # n (B, H)
    out = x - n                                                 # (B, H); h' = n + z ⊙ (h − n)
    out *= rz[:, H:]
    out += n                                                    # h' (B, H)

    def vjp(g):                                                 # g = ∂L/∂h' (B, H)
        r, z = rz[:, :H], rz[:, H:]                             # (B, H) each
        d = np.empty_like(gi.data)                              # (B, 3H): ∂L/∂[a_r, a_z, a_n]
        d_an = d[:, 2 * H:]                                     # (B, H)
        np.subtract(1, z, out=d_an)
        d_an *= g                                               # ∂L/∂n = g ⊙ (1 − z)
        d_an *= 1 - n * n                                       # ∂L/∂a_n
        d_z = d[:, H:2 * H]                                     # (B, H)
        np.subtract(x, n, out=d_z)
        d_z *= g                                                # ∂L/∂z = g ⊙ (h − n)
        if reset_after:
            np.multiply(d_an, gh_n, out=d[:, :H])               # ∂L/∂r (B, H)
        else:
            u = d_an @ W_n                                      # (B, H): ∂L/∂(r ⊙ h)
            np.multiply(u, x, out=d[:, :H])                     # ∂L/∂r (B, H)
        d[:, :2 * H] *= rz * (1 - rz)                           # through σ: ∂L/∂a_r, ∂L/∂a_z
        dh = dW = db = None                                     # ∂L/∂h, ∂L/∂W_hh, ∂L/∂b_hh
        if reset_after:
            d_gh = d.copy()                                     # (B, 3H)
            d_gh[:, 2 * H:] *= r                                # ∂L/∂gh (B, 3H)
            if h.requires_grad:
                dh = d_gh @ W                                   # (B, H)
                dh += g * z
            if weight_hh.requires_grad:
                dW = d_gh.T @ x                                 # (3H, H)
            if bias_hh.requires_grad:
                db = d_gh.sum(axis=0)                           # (3H,)
            return d, dh, dW, db
        d_rz = d[:, :2 * H]                                     # (B, 2H): ∂L/∂[a_r, a_z]
        if h.requires_grad:
            dh = d_rz @ W_rz                                    # (B, H)
            dh += g * z
            dh += u * r
        if weight_hh.requires_grad:
            dW = np.concatenate([d_rz.T @ x, d_an.T @ rh])      # (3H, H)
        if bias_hh.requires_grad:
            db = d.sum(axis=0)                                  # (3H,)
        return d, dh, dW, db
    return Tensor._from_op(out, (gi, h, weight_hh, bias_hh), vjp, "gru_step")
