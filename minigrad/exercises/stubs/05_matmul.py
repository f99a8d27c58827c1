"""Exercise 5 · matmul · ★★

Forward (the checker computes it; you write the backward):

    C = A @ B        C_ij = Σ_k A_ik B_kj

Shapes: A (n, k) and B (k, m) give C (n, m). Batched too, NumPy's rules: A (b, n, k) and
B (b, k, m) give C (b, n, m), and A (b, n, k) with B (k, m) uses the same B for every batch
element. G = dL/dC has C's shape.

Return (dL/dA, dL/dB), each with the shape of its own input.

    python -I -m minigrad.exercises check matmul   # from this folder, or add --dir DIR
    python -m minigrad.exercises hint matmul     # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def matmul_vjp(g, A, B):
    """(dL/dA, dL/dB) for C = A @ B, given g = dL/dC."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
