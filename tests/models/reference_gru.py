"""The GRU step's backward in plain NumPy, straight from the formulas of ``models/fused.py``'s
docstring, one a line: the reference the tests hold ``gru_step``'s in-place backward to
(``tests/models/test_model_kernels.py``). Test-only code, so it lives here, not in ``models``."""
import numpy as np


def sigmoid(a):
    return 1 / (1 + np.exp(-a))                                 # the inputs here are moderate


def reference_backward(g, gi, h, W_hh, b_hh, reset_after: bool = True) -> tuple:
    """(∂L/∂gi, ∂L/∂h, ∂L/∂W_hh, ∂L/∂b_hh) for g = ∂L/∂h', recomputing the forward; arrays in,
    arrays out. What the fused backward computes, one formula of models/fused.py's docstring a line."""
    W_hr, W_hz, W_hn = np.split(W_hh, 3)                        # (H, H) each
    b_hr, b_hz, b_hn = np.split(b_hh, 3)                        # (H,) each
    gi_r, gi_z, gi_n = np.split(gi, 3, axis=1)                  # (B, H) each
    r = sigmoid(gi_r + h @ W_hr.T + b_hr)                       # (B, H)
    z = sigmoid(gi_z + h @ W_hz.T + b_hz)                       # (B, H)
    gh_n = h @ W_hn.T + b_hn                                    # (B, H)
    n = np.tanh(gi_n + (r * gh_n if reset_after else (r * h) @ W_hn.T + b_hn))  # (B, H)
    d_z = g * (h - n)                                           # (B, H)
    d_an = g * (1 - z) * (1 - n ** 2)                           # (B, H)
    if reset_after:
        d_r = d_an * gh_n                                       # (B, H)
        d_gh_n = r * d_an                                       # ∂L/∂gh_n (B, H)
        d_h_via_n = d_gh_n @ W_hn                               # (B, H)
        d_W_hn, d_b_hn = d_gh_n.T @ h, d_gh_n.sum(axis=0)       # (H, H), (H,)
    else:
        u = d_an @ W_hn                                         # ∂L/∂(r ⊙ h) (B, H)
        d_r = u * h                                             # (B, H)
        d_h_via_n = u * r                                       # (B, H)
        d_W_hn, d_b_hn = d_an.T @ (r * h), d_an.sum(axis=0)     # (H, H), (H,)
    d_ar, d_az = d_r * r * (1 - r), d_z * z * (1 - z)           # (B, H) each
    d_h = g * z + d_ar @ W_hr + d_az @ W_hz + d_h_via_n         # (B, H)
    d_gi = np.concatenate([d_ar, d_az, d_an], axis=1)           # (B, 3H)
    d_W_hh = np.concatenate([d_ar.T @ h, d_az.T @ h, d_W_hn])   # (3H, H)
    d_b_hh = np.concatenate([d_ar.sum(axis=0), d_az.sum(axis=0), d_b_hn])  # (3H,)
    return d_gi, d_h, d_W_hh, d_b_hh
