"""Fused ops for the Transformer: layer normalisation and GELU, each with a hand-written VJP.

Shape letters: ``...`` any leading axes, D the normalised (last) axis.

* ``layer_norm(x, weight, bias, eps)`` -- one graph node instead of the eight a composition
  of mean, sub, mul, sqrt and div would record; its backward is the closed form below, and
  the tests check it against that composition (``layer_norm_composed``) and by gradcheck.
* ``gelu(x)`` -- the Gaussian error linear unit in its tanh form (Hendrycks & Gimpel 2016),
  the activation of BERT's and GPT-2's feed-forward blocks.

Both compute their first-order gradient with NumPy (``once_differentiable``): under
``create_graph=True`` they raise, naming the composed version to use.
"""
from __future__ import annotations

import numpy as np

from minigrad.coerce import as_tensor
from minigrad.tensor import Tensor
from minigrad.xp import once_differentiable


def _check_layer_norm(x: Tensor, weight, bias, eps: float) -> None:
    if x.ndim < 1 or x.shape[-1] == 0:
        raise ValueError(f"layer_norm: input {x.shape} needs a last axis D of length >= 1")
    for role, p in (("weight", weight), ("bias", bias)):
        if p is not None and p.shape != x.shape[-1:]:
            raise ValueError(f"layer_norm: {role} {p.shape} does not fit input {x.shape}: "
                             f"expected ({x.shape[-1]},)")
    if not eps > 0:  # written so that NaN fails too
        raise ValueError(f"layer_norm: eps must be > 0, got {eps}")


def layer_norm(x, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    """y = γ ⊙ x̂ + β over the last axis (Ba, Kiros & Hinton 2016), one fused op.

        μ = (1/D) Σ_i x_i,   σ² = (1/D) Σ_i (x_i − μ)²,   r = 1 / √(σ² + ε),   x̂ = (x − μ) r

    Backward, with ĝ = γ ⊙ g (the gradient reaching x̂) and means over the last axis:

        ∂L/∂x = r (ĝ − mean(ĝ) − x̂ mean(ĝ ⊙ x̂)),   ∂L/∂γ = Σ g ⊙ x̂,   ∂L/∂β = Σ g

    (x̂ has mean 0 and mean square ≈ 1, so the two subtractions remove exactly the parts of ĝ
    that moving μ and σ would undo). x (..., D); weight γ and bias β (D,) or None.
    """
    x = as_tensor(x)
    weight = None if weight is None else as_tensor(weight, x)
    bias = None if bias is None else as_tensor(bias, x)
    _check_layer_norm(x, weight, bias, eps)
    inv_d = 1.0 / x.shape[-1]  # sums times 1/D: ndarray.mean's own overhead is measurable here
    xc = x.data - np.add.reduce(x.data, axis=-1, keepdims=True) * inv_d      # (..., D): x − μ
    r = 1.0 / np.sqrt(np.add.reduce(xc * xc, axis=-1, keepdims=True) * inv_d + eps)  # (..., 1)
    xhat = xc * r                                                    # (..., D)
    out = xhat if weight is None else xhat * weight.data             # (..., D)
    if bias is not None:
        out = out + bias.data if weight is None else np.add(out, bias.data, out=out)
    parents = tuple(p for p in (x, weight, bias) if p is not None)

    def vjp(g):
        gh = g if weight is None else g * weight.data                # (..., D): ∂L/∂x̂
        m1 = np.add.reduce(gh, axis=-1, keepdims=True) * inv_d          # (..., 1): mean(ĝ)
        m2 = np.add.reduce(gh * xhat, axis=-1, keepdims=True) * inv_d   # (..., 1): mean(ĝ ⊙ x̂)
        gx = gh - m1                                                 # (..., D)
        gx -= xhat * m2
        gx *= r
        lead = tuple(range(g.ndim - 1))
        grads = [gx]
        if weight is not None:
            grads.append((g * xhat).sum(axis=lead))                  # (D,)
        if bias is not None:
            grads.append(g.sum(axis=lead))                           # (D,)
        return tuple(grads)
    return Tensor._from_op(out, parents, once_differentiable(
        vjp, "layer_norm", "minigrad.nn_ops.layer_norm_composed"), "layer_norm")


def layer_norm_composed(x, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    """The same map built from primitive ops (the reference the fused op is tested against)."""
    x = as_tensor(x)
    xc = x - x.mean(axis=-1, keepdims=True)                          # (..., D)
    xhat = xc / ((xc * xc).mean(axis=-1, keepdims=True) + eps).sqrt()  # (..., D)
    out = xhat if weight is None else xhat * weight
    return out if bias is None else out + bias


GELU_C = float(np.sqrt(2.0 / np.pi))  # Python floats: float32 stays float32
GELU_A = 0.044715


def gelu(x) -> Tensor:
    """GELU(x) = x Φ(x) ≈ ½ x (1 + tanh u),  u = √(2/π) (x + 0.044715 x³)  (tanh form).

    d/dx = ½ (1 + tanh u) + ½ x (1 − tanh² u) · √(2/π) (1 + 3 · 0.044715 x²).
    """
    x = as_tensor(x)
    xd = x.data
    t = np.tanh(GELU_C * (xd + GELU_A * xd ** 3))
    out = 0.5 * xd * (1 + t)

    def vjp(g):
        du = GELU_C * (1 + 3 * GELU_A * xd * xd)
        return (g * (0.5 * (1 + t) + 0.5 * xd * (1 - t * t) * du),)
    return Tensor._from_op(out, (x,), once_differentiable(
        vjp, "gelu", "the formula composed from ops: 0.5 * x * (1 + mg.tanh(GELU_C * (x + "
        "GELU_A * x ** 3)))"), "gelu")
