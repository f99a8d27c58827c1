"""Exercise 22 · two correlated keys · ★★

Source 000 §7 Q2 asks whether the analysis holds when Q and K are strongly correlated. Here
the two keys a query chooses between are correlated: measure what attention does with them.
Per row n, with q, k, z independent N(0, 1) components:

    k'  = ρ k + √(1 − ρ²) z                  again N(0, 1) per component, correlation ρ with k
    α   = softmax([q·k, q·k'] / √d)          the weights on the two keys
    gap = mean over the rows of |α_1 − α_2|

Shapes: q, k, z (N, d); rho a number. Return (α, gap): α (N, 2) and gap, one number. When
your function passes, the checker prints the gap for ρ = 0, 0.9 and 0.99.

    python -I -m minigrad.exercises check correlated_keys   # from this folder, or add --dir DIR
    python -m minigrad.exercises hint correlated_keys   # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def correlated_keys(q, k, z, rho):
    """(α (N, 2), mean |α_1 − α_2|) for keys k and ρ k + √(1 − ρ²) z, in plain NumPy."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
