"""Exercise 4 · sum over an axis · ★★

Forward (the checker computes it; you write the backward):

    y = x.sum(axis=axis)        the summed axis disappears (no keepdims)

Shapes: x (2, 3, 4) with axis=1 gives y (2, 4); g = dL/dy has y's shape. `axis` is an int,
possibly negative.

Return dL/dx (shape of x).

    python -I -m minigrad.exercises check sum_axis   # from this folder, or add --dir DIR
    python -m minigrad.exercises hint sum_axis   # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def sum_axis_vjp(g, x, axis):
    """dL/dx for y = x.sum(axis=axis), given g = dL/dy."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
