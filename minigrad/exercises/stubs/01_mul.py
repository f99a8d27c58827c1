"""Exercise 1 · mul with broadcasting · ★

Forward (the checker computes it; you write the backward):

    out = a ⊙ b        elementwise, with NumPy broadcasting

Shapes: a and b broadcast together to out's shape -- e.g. a (2, 3, 4) and b (4,) give
out (2, 3, 4); a (3, 1) and b (1, 4) give out (3, 4). g = dL/d out has out's shape.

Return (dL/da, dL/db), each with the shape of its own input.

    python -I -m minigrad.exercises check mul    # from this folder, or add --dir DIR
    python -m minigrad.exercises hint mul        # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def mul_vjp(g, a, b):
    """(dL/da, dL/db) for out = a * b, given g = dL/d out."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
