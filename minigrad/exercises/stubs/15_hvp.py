"""Exercise 15 · a Hessian-vector product (logistic loss) · ★★★★★

A second derivative. The forward (the checker computes it) is itself a gradient: the gradient
of the mean logistic loss of a linear classifier,

    z = X w                                    the scores, one per example
    f(w) = (1/N) Σ_i [ log(1 + e^(z_i)) − y_i z_i ]
    p = ∇f(w) = Xᵀ (σ(z) − y) / N              the forward, σ(z) = 1 / (1 + e^−z)

Shapes: weights w (D,); examples X (N, D); labels y (N,), each 0.0 or 1.0; N = len(y).
p and g = dL/dp are (D,).

Return dL/dw (D,): the VJP of a gradient is the Hessian H = ∂²f/∂w² applied to g (H is
symmetric), the Hessian-vector product H g. Newton's method and many second-order tricks run
on exactly this product, and never build the D × D matrix: neither should you.
X and y get no gradient.

    python -I -m minigrad.exercises check hvp   # from this folder, or add --dir DIR
    python -m minigrad.exercises hint hvp    # --level 2 for the formula
    (-I: Python imports nothing from the current folder, which could fake the verdict)
"""
import numpy as np


def hvp_vjp(g, w, X, y):
    """dL/dw = H g for p = ∇f(w) = Xᵀ(σ(X w) − y)/N, given g = dL/dp."""
    # Your code here, in plain NumPy.
    return None  # not implemented yet
