"""Exercise 21 · why the scores are divided by √d · ★

Source 000 §2.3 and §7 Q2 (in translation): "computing the dot product's variance from the
assumption that Q and K have independent, identically distributed components, show why the
scaling is needed". Show it by measuring. Each row n of q and k is one pair of vectors whose d
components are independent N(0, 1) draws; the pair's score is q_n·k_n.

Shapes: q (N, d), k (N, d). Return two numbers (var_raw, var_scaled): the variance
(np.var) of the N scores q_n·k_n, and of the N scaled scores q_n·k_n / √d. When your
function passes, the checker prints what the numbers show for d = 4, 64 and 256.

    python -I -m minigrad.exercises check sqrt_d_scaling   # from this folder, or add --dir DIR
    python -m minigrad.exercises hint sqrt_d_scaling   # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def sqrt_d_scaling(q, k):
    """(var(q·k), var(q·k/√d)) over the N rows, in plain NumPy."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
