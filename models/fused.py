"""A GRU step as one graph node, with its backward written out by hand.

Shape letters: B batch, H hidden size, G = 3H. ``gi = W_ih x + b_ih``, ``h``, ``W_hh (G, H)``,
``b_hh (G,)``, gate blocks stacked r | z | n (``models.recurrent``). The arithmetic runs
*feature-major*, on states hᵀ (H, B): gh = W_hh hᵀ (G, B) and its gate blocks are row blocks,
contiguous arrays (``models/fused_seq.py`` runs whole sequences with the same two functions).
The tests hold it to the composed cell, to finite differences and to
``tests/models/reference_gru.py``. First order only: under ``create_graph=True`` it raises.

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

In both forms ∂L/∂gi = [∂L/∂a_r, ∂L/∂a_z, ∂L/∂a_n]. In the code a leading ``d_`` means ∂L/∂.
"""
from __future__ import annotations

import numpy as np

from minigrad.ops import as_tensor
from minigrad.kernels import once_differentiable, sigmoid_, tanh_
from minigrad.tensor import Tensor


def gru_step(gi, h, weight_hh, bias_hh, reset_after: bool = True) -> Tensor:
    """h' (B, H) of ``GRUCell.step`` (either form) as one op; see the module docstring."""
    h = as_tensor(h)
    gi, weight_hh, bias_hh = as_tensor(gi, h), as_tensor(weight_hh, h), as_tensor(bias_hh, h)
    _check(gi, h, weight_hh, bias_hh)
    (B, H), W = h.shape, weight_hh.data
    dtype = np.result_type(gi.data, h.data, W, bias_hh.data)
    gh, n, out = np.empty((3 * H, B), dtype), np.empty((H, B), dtype), np.empty((H, B), dtype)
    gru_forward(gi.data.T, h.data.T, W, bias_hh.data[:, None], gh, n, out, reset_after)

    def vjp(g):
        d_gi = np.empty_like(gh)                                           # (G, B)
        d_gh = np.empty_like(gh) if reset_after else d_gi                  # (G, B)
        d_h = gru_backward(g.T, h.data.T, gh, n, W, d_gi, d_gh, reset_after)  # (H, B)
        if reset_after:
            d_W = d_gh @ h.data                                            # (G, H)
        else:                                                              # gh_n holds (r ⊙ h)ᵀ
            d_W = np.concatenate([d_gh[:2 * H] @ h.data, d_gh[2 * H:] @ gh[2 * H:].T])
        return d_gi.T, d_h.T, d_W, d_gh.sum(axis=1)
    vjp = once_differentiable(vjp, "gru_step", "the core GRUCell (models.kernels.use_core)")
    return Tensor._from_op(out.T, (gi, h, weight_hh, bias_hh), vjp, "gru_step")   # h' (B, H)


def _check(gi: Tensor, h: Tensor, weight_hh: Tensor, bias_hh: Tensor) -> None:
    """Raise unless gi (B, 3H), h (B, H), weight_hh (3H, H) and bias_hh (3H,) fit."""
    H = h.shape[-1]
    if h.ndim != 2 or weight_hh.shape != (3 * H, H) or bias_hh.shape != (3 * H,):
        raise ValueError(f"gru_step: hidden state {h.shape} vs weight_hh {weight_hh.shape} and "
                         f"bias_hh {bias_hh.shape}: expected h (B, H), weight_hh (3H, H), "
                         f"bias_hh (3H,)")
    if gi.shape != (h.shape[0], 3 * H):
        raise ValueError(f"gru_step: projected input gi {gi.shape} vs hidden state {h.shape}: "
                         f"expected gi (B, 3H) = {(h.shape[0], 3 * H)}")


# ---- feature-major: (G, B) and (H, B), or (2, G, B) and (2, H, B) for two directions at once ----

def gru_forward(gi, h, W_hh, b_col, gh, n, out, reset_after: bool = True) -> None:
    """h' into ``out`` (…, H, B) from gi (…, G, B) and h (…, H, B); keeps r | z | gh_n (reset
    before: r ⊙ h) in ``gh`` (…, G, B) and n in ``n`` (…, H, B) for the backward. b_col is
    b_hh as a column (…, G, 1)."""
    H = h.shape[-2]
    rz = gh[..., :2 * H, :]                                               # a_r | a_z (…, 2H, B)
    if reset_after:
        np.matmul(W_hh, h, out=gh)                                        # (…, G, B)
        gh += b_col
    else:
        np.matmul(W_hh[..., :2 * H, :], h, out=rz)
        rz += b_col[..., :2 * H, :]
    rz += gi[..., :2 * H, :]
    sigmoid_(rz)                                                          # r | z
    if reset_after:
        np.multiply(gh[..., :H, :], gh[..., 2 * H:, :], out=n)            # r ⊙ gh_n
    else:
        rh = np.multiply(gh[..., :H, :], h, out=gh[..., 2 * H:, :])       # r ⊙ h
        np.matmul(W_hh[..., 2 * H:, :], rh, out=n)
        n += b_col[..., 2 * H:, :]
    n += gi[..., 2 * H:, :]
    tanh_(n)                                                              # n (…, H, B)
    np.subtract(h, n, out=out)
    out *= gh[..., H:2 * H, :]
    out += n                                                              # h' = n + z ⊙ (h − n)


def gru_backward(g, h, gh, n, W_hh, d_gi, d_gh, reset_after: bool = True) -> np.ndarray:
    """∂L/∂h (…, H, B) for g = ∂L/∂h'; fills d_gi = ∂L/∂gi and, resetting after, d_gh = ∂L/∂gh
    (…, G, B)."""
    H = h.shape[-2]
    r, z, gh_n = gh[..., :H, :], gh[..., H:2 * H, :], gh[..., 2 * H:, :]
    d_ar, d_az, d_an = d_gi[..., :H, :], d_gi[..., H:2 * H, :], d_gi[..., 2 * H:, :]
    np.subtract(1, z, out=d_an)
    d_an *= g                                                             # ∂L/∂n
    np.subtract(h, n, out=d_az)
    d_az *= d_an
    d_az *= z                                               # ∂L/∂a_z = g ⊙ (h − n) ⊙ (1 − z) z
    np.multiply(n, n, out=d_ar)                                           # d_ar as scratch
    d_an *= np.subtract(1, d_ar, out=d_ar)                                # ∂L/∂a_n
    if reset_after:
        np.multiply(d_an, gh_n, out=d_ar)                                 # ∂L/∂r
    else:
        u = np.swapaxes(W_hh[..., 2 * H:, :], -1, -2) @ d_an              # ∂L/∂(r ⊙ h) (…, H, B)
        np.multiply(u, h, out=d_ar)                                       # ∂L/∂r
    d_ar *= r - r * r                                                     # ∂L/∂a_r
    if reset_after:
        d_gh[..., :2 * H, :] = d_gi[..., :2 * H, :]
        np.multiply(d_an, r, out=d_gh[..., 2 * H:, :])                    # ∂L/∂gh_n = r ⊙ ∂L/∂a_n
        d_h = np.swapaxes(W_hh, -1, -2) @ d_gh                            # (…, H, B)
    else:
        d_h = np.swapaxes(W_hh[..., :2 * H, :], -1, -2) @ d_gi[..., :2 * H, :]
        d_h += u * r
    d_h += g * z
    return d_h
