"""The kernels room: fused, faster versions of core modules, switched on in one place.

A *kernel* is a subclass of a core module that computes the same numbers faster (one graph node
with a hand-written backward, fewer temporaries), tested equal to the core to 1e-12 in float64.
Each package's ``kernels`` module has a table ``KERNELS = {CoreClass: KernelClass}``; the one
switch, ``models.kernels.use_kernels(model)``, applies the three tables in place (``swap``)::

    model = use_kernels(Seq2Seq(config))   # same parameters, same numbers, faster steps
    use_core(model)                        # back to the composed reference

The fused ops are first order only (``create_graph=True`` through one raises, naming the core
module); a kernel made of ordinary ops (the one-hot input tables) differentiates again.
"""
from __future__ import annotations

import timeit

import numpy as np

from minigrad.ops import as_tensor
from minigrad.engine import Tensor
from minigrad.nn import LayerNorm
from minigrad.nn_ops import GELU_A, GELU_C, check_layer_norm
from minigrad.tensor import ARRAYS


def once_differentiable(vjp, op: str, instead: str):
    """``vjp(g)``, a fused kernel's backward on arrays, as an engine VJP that refuses
    ``create_graph``, naming ``instead``, the composed version."""
    def wrapped(xp, g, out, *inputs):
        if xp is not ARRAYS:
            raise RuntimeError(f"op '{op}' can be differentiated only once (a fused NumPy "
                               f"kernel), so create_graph=True cannot record it: for "
                               f"higher-order gradients use {instead}")
        return vjp(g)
    return wrapped


def swap(module, table: dict, back: bool = False):
    """Give every submodule of ``module`` (itself included) whose class ``table`` names the class
    ``table`` maps it to (``back``: the other way), in place; returns ``module``."""
    if back:
        table = {kernel: core for core, kernel in table.items()}
    for m in list(module.modules()):
        new = table.get(type(m))
        if new is not None:
            m.__class__ = new
    return module


# ---- tanh and σ in place, each in the form the running NumPy computes fastest -----------------

def tanh_exp(x: np.ndarray) -> np.ndarray:
    """tanh in place as sign(x) (2 / (1 + e) − 1) with e = exp(−2 min(|x|, 20)), within 2⁻⁵¹ of
    np.tanh in float64: faster where NumPy's float64 exp is vectorised but not its tanh."""
    e = np.abs(x)
    np.multiply(np.minimum(e, 20.0, out=e), -2, out=e)               # tanh(±20) is ±1.0 exactly
    np.exp(e, out=e)
    np.divide(2, np.add(e, 1, out=e), out=e)
    e -= 1                                                           # tanh |x|
    return np.copysign(e, x, out=x)


# σ's argument is clipped to ±c, the largest with e^c finite and e^−c a normal number: σ(c)
# rounds to 1, and σ(a) for a < −c (below e^−c) is given as e^−c, off by less than that.
SIGMOID_CLIP = {np.dtype(np.float64): 708.0, np.dtype(np.float32): 87.0}


def sigmoid_exp(a: np.ndarray) -> np.ndarray:
    """σ(a) = 1 / (1 + e^{−a}) in place, a clipped to ±``SIGMOID_CLIP``: never overflows or
    underflows, no temporary, within a few ulp of σ for a ≥ −c."""
    c = SIGMOID_CLIP.get(a.dtype, 87.0)
    np.negative(np.clip(a, -c, c, out=a), out=a)
    np.exp(a, out=a)
    return np.divide(1, np.add(a, 1, out=a), out=a)


def sigmoid_tanh(a: np.ndarray) -> np.ndarray:
    """σ(a) = ½ + ½ tanh(a / 2) in place: four passes, within 2⁻²⁴ of σ, but not relatively
    for a ≪ 0 (so float32 only: float64's σ keeps 4 ulp down to e^−708)."""
    np.tanh(np.multiply(a, 0.5, out=a), out=a)
    a *= 0.5
    return np.add(a, 0.5, out=a)


def tanh_numpy(x: np.ndarray) -> np.ndarray:  # NumPy's own, in place
    return np.tanh(x, out=x)


FORMS = {"tanh": (tanh_numpy, tanh_exp), "sigmoid": (sigmoid_exp, sigmoid_tanh)}
ONLY = {tanh_exp: np.float64, sigmoid_tanh: np.float32}  # offered in the dtype it is accurate in
PICKED: dict = {}  # (name, dtype) -> its form, measured here once, at first use


def pick(name: str, dtype) -> callable:
    """The fastest of ``FORMS[name]`` for ``dtype`` on a gate block (128 × 64), best of 9 timings;
    the first form stays unless another is a third faster, so no near tie flips with the load:
    one machine keeps one choice, and its exact numbers, from run to run."""
    dtype = np.dtype(dtype)
    forms = [form for form in FORMS[name] if ONLY.get(form, dtype) == dtype]
    x, y = np.linspace(-6, 6, 128 * 64, dtype=dtype).reshape(128, 64), np.empty((128, 64), dtype)
    best = [min(timeit.repeat(lambda: form(y), lambda: np.copyto(y, x), number=1, repeat=9))
            for form in forms]
    fastest = int(np.argmin(best))
    PICKED[name, dtype] = forms[fastest if best[fastest] < 0.75 * best[0] else 0]
    return PICKED[name, dtype]


def fastest(name: str):
    """``name`` in place, ``x -> x``, in the form ``pick`` measured fastest here for x's dtype."""
    return lambda x: (PICKED.get((name, x.dtype)) or pick(name, x.dtype))(x)


tanh_, sigmoid_ = fastest("tanh"), fastest("sigmoid")  # what the kernels call


# ---- layer norm and GELU, each one op with its closed-form VJP -------------------------------

def fused_layer_norm(x, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    """``nn_ops.layer_norm`` as one op: y = γ ⊙ x̂ + β over the last axis.

        μ = (1/D) Σ_i x_i,   σ² = (1/D) Σ_i (x_i − μ)²,   r = 1 / √(σ² + ε),   x̂ = (x − μ) r

    Backward, with ĝ = γ ⊙ g (the gradient reaching x̂) and means over the last axis:

        ∂L/∂x = r (ĝ − mean(ĝ) − x̂ mean(ĝ ⊙ x̂)),   ∂L/∂γ = Σ g ⊙ x̂,   ∂L/∂β = Σ g

    x (..., D); weight γ and bias β (D,) or None.
    """
    x = as_tensor(x)
    weight = None if weight is None else as_tensor(weight, x)
    bias = None if bias is None else as_tensor(bias, x)
    check_layer_norm(x, weight, bias, eps)
    inv_d = 1.0 / x.shape[-1]  # sums times 1/D: faster than ndarray.mean
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
        vjp, "layer_norm", "minigrad.nn_ops.layer_norm, the composed op (use_core)"), "layer_norm")


class FusedLayerNorm(LayerNorm):
    """``LayerNorm`` computed by ``fused_layer_norm``: one graph node instead of about nine."""

    def forward(self, x):
        return fused_layer_norm(x, self.weight, self.bias, self.eps)


def fused_gelu(x) -> Tensor:
    """``nn_ops.gelu`` as one op: ½ x (1 + tanh u), u = √(2/π) (x + 0.044715 x³); d/dx =
    ½ (1 + tanh u) + ½ x (1 − tanh² u) · √(2/π) (1 + 3 · 0.044715 x²)."""
    x = as_tensor(x)
    xd = x.data
    t = np.tanh(GELU_C * (xd + GELU_A * xd ** 3))
    out = 0.5 * xd * (1 + t)

    def vjp(g):
        du = GELU_C * (1 + 3 * GELU_A * xd * xd)
        return (g * (0.5 * (1 + t) + 0.5 * xd * (1 - t * t) * du),)
    return Tensor._from_op(out, (x,), once_differentiable(
        vjp, "gelu", "minigrad.nn_ops.gelu, the composed op (use_core)"), "gelu")


KERNELS: dict = {LayerNorm: FusedLayerNorm}  # core Module class -> its kernel subclass
