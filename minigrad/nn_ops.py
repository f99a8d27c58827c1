"""Layer normalisation and GELU, the Transformer's two functions, composed from primitive ops
(autograd derives both backwards). Shape letters: ``...`` leading axes, D the last axis.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.catalogue import erf
from minigrad.checks import mismatch
from minigrad.engine import Tensor
from minigrad.ops import as_tensor, tanh


def layer_norm(x, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    """y = γ ⊙ x̂ + β over the last axis (Ba, Kiros & Hinton 2016), where

        μ = (1/D) Σ_i x_i,   σ² = (1/D) Σ_i (x_i − μ)²,   x̂ = (x − μ) / √(σ² + ε).

    x (..., D); weight γ and bias β (D,) or None."""
    x = as_tensor(x)
    weight = None if weight is None else as_tensor(weight, x)
    bias = None if bias is None else as_tensor(bias, x)
    check_layer_norm(x, weight, bias, eps)
    xc = x - x.mean(axis=-1, keepdims=True)                              # (..., D): x − μ
    xhat = xc / ((xc * xc).mean(axis=-1, keepdims=True) + eps).sqrt()    # (..., D)
    out = xhat if weight is None else xhat * weight                      # (..., D)
    return out if bias is None else out + bias                           # (..., D)


GELU_C = float(np.sqrt(2.0 / np.pi))  # Python floats: float32 stays float32
GELU_A = 0.044715


def gelu(x, approximate: str = "tanh") -> Tensor:
    """GELU(x) = x Φ(x), Φ(x) = ½ (1 + erf(x / √2)) (Hendrycks & Gimpel 2016):
    ``approximate="none"``; the default "tanh", BERT's and GPT-2's, is ½ x (1 + tanh u),
    u = √(2/π) (x + 0.044715 x³)."""
    x = as_tensor(x)
    if approximate == "tanh":
        return 0.5 * x * (1 + tanh(GELU_C * (x + GELU_A * x ** 3)))
    if approximate == "none":
        return x * (0.5 * (1 + erf(x * (1 / math.sqrt(2)))))
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


def check_layer_norm(x: Tensor, weight, bias, eps: float) -> None:
    """``layer_norm``'s arguments fit: a last axis D ≥ 1, γ and β of shape (D,), ε > 0."""
    if x.ndim < 1 or x.shape[-1] == 0:
        raise ValueError(f"layer_norm: input {x.shape} needs a last axis D of length >= 1")
    for role, p in (("weight", weight), ("bias", bias)):
        if p is not None and p.shape != x.shape[-1:]:
            raise mismatch("layer_norm", role, p.shape, "input", x.shape, expects=x.shape[-1:])
    if not eps > 0:  # written so that NaN fails too
        raise ValueError(f"layer_norm: eps must be > 0, got {eps}")
