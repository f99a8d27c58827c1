"""Exercise 2 · tanh · ★

Forward (the checker computes it; you write the backward):

    y = tanh(x)        elementwise

Shapes: x, y and g = dL/dy all have the same shape, e.g. (3, 4).

Return dL/dx (shape of x).

    python -I -m minigrad.exercises check tanh   # from this folder, or add --dir DIR
    python -m minigrad.exercises hint tanh       # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def tanh_vjp(g, x):
    """dL/dx for y = tanh(x), given g = dL/dy."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
