"""Exercise 3 · sigmoid · ★

Forward (the checker computes it; you write the backward):

    y = σ(x) = 1 / (1 + e^−x)        elementwise

Shapes: x, y and g = dL/dy all have the same shape, e.g. (3, 4).

Return dL/dx (shape of x).

    python -I -m minigrad.exercises check sigmoid   # from this folder, or add --dir DIR
    python -m minigrad.exercises hint sigmoid    # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def sigmoid_vjp(g, x):
    """dL/dx for y = σ(x), given g = dL/dy."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
