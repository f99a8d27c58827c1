"""Exercise 17 · the attention read, forward · ★

Source 003 §5: write the forward pass by hand. Here you write the forward itself; the checker
compares your output with the library's (``attention.read``), element by element.

    α = softmax(e)            over the source positions j (axis -1)
    c = Σ_j α_j h_j           the context: a convex combination of the values

Shapes: scores e (B, S), values h (B, S, D); return the context c (B, D).
Exercise 9 is the backward of this same read.

    python -I -m minigrad.exercises check forward_read   # from this folder, or add --dir DIR
    python -m minigrad.exercises hint forward_read   # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def forward_read(e, h):
    """c = Σ_j softmax(e)_j h_j, the attention read, in plain NumPy."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
