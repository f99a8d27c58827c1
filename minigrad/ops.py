"""Primitive ops, in the order of the lesson: arithmetic, elementwise functions, reductions
(with the one stable log-softmax on arrays) and matmul. (The ops no model uses: ``catalogue.py``.)

Each op computes ``out`` with NumPy and defines ``vjp(xp, g, out, *inputs)``, which returns
``dL/d input`` for each input given ``g = dL/d out``: one formula that runs on arrays for an
ordinary backward and on Tensors under ``create_graph`` (``minigrad/xp.py``), so every op here
can be differentiated any number of times. VJPs may return gradients in the *broadcast*
shape: the engine sums them back to each input's shape (``engine.unbroadcast``).
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.coerce import as_tensor, check_not_empty, normalize_axes, pair, reduce_axes
from minigrad.engine import Tensor
from minigrad.checks import refuse_complex


def _broadcast_error(op, a, b):
    return ValueError(f"{op}: operands could not be broadcast together: "
                      f"shapes {a.shape} and {b.shape}")


def _bool_error(op, *tensors):
    shapes = " and ".join(str(t.shape) for t in tensors)
    return TypeError(f"{op}: arithmetic on bool tensors (shapes {shapes}) is not defined; "
                     f"convert first, e.g. mg.tensor(t.data, dtype=float)")


# ---- arithmetic ----------------------------------------------------------------------
# A binary op's forward: ``_binary`` returns a and b as Tensors (``pair``) and fn(a, b) on their
# data, refusing shapes that do not broadcast and bool operands (all of them by default, as
# NumPy's bool + bool is a logical or; any of them for ``power``).

def _binary(op, fn, a, b, refuse_bool=all):
    a, b = pair(a, b)
    if refuse_bool(t.data.dtype.kind == "b" for t in (a, b)):
        raise _bool_error(op, a, b)
    try:
        return a, b, fn(a.data, b.data)
    except ValueError:
        raise _broadcast_error(op, a, b) from None


def add(a, b) -> Tensor:
    """a + b. d/da = 1, d/db = 1."""
    a, b, out = _binary("add", np.add, a, b)
    return Tensor._from_op(out, (a, b), lambda xp, g, out, a, b: (g, g), "add")


def sub(a, b) -> Tensor:
    """a - b. d/da = 1, d/db = -1."""
    a, b, out = _binary("sub", np.subtract, a, b)
    return Tensor._from_op(out, (a, b), lambda xp, g, out, a, b: (g, -g), "sub")


def mul(a, b) -> Tensor:
    """a * b. d/da = b, d/db = a."""
    a, b, out = _binary("mul", np.multiply, a, b)
    return Tensor._from_op(out, (a, b), lambda xp, g, out, a, b: (g * b, g * a), "mul")


def div(a, b) -> Tensor:
    """a / b. d/da = 1/b, d/db = -a/b^2 = -out/b."""
    a, b, out = _binary("div", np.true_divide, a, b)
    return Tensor._from_op(out, (a, b), lambda xp, g, out, a, b: (g / b, -(g / b) * out), "div")


def neg(x) -> Tensor:
    """-x."""
    x = as_tensor(x)
    if x.data.dtype.kind == "b":
        raise _bool_error("neg", x)
    return Tensor._from_op(-x.data, (x,), lambda xp, g, out, x: (-g,), "neg")


def _scalar_exponent(x, exponent):
    """``pow``'s exponent as a Python number (it adopts x's dtype; np.float64(2) would upcast),
    refused for a bool x, a complex p, and a negative integer p on an integer x."""
    if x.data.dtype.kind == "b":
        raise _bool_error("pow", x)
    refuse_complex(exponent)
    p = np.asarray(exponent).item()
    if p < 0 and x.data.dtype.kind in "iub" and isinstance(p, int):
        raise ValueError(f"pow: an integer tensor ({x.dtype}) to a negative integer power {p} "
                         f"has no integer result: make the tensor or the exponent a float")
    return p


def pow(x, exponent) -> Tensor:
    """x ** p for a scalar p. d/dx = p x^(p-1). A Tensor or array exponent: ``power``."""
    if isinstance(exponent, Tensor) or np.ndim(exponent) != 0:
        return power(x, exponent)
    x = as_tensor(x)
    p = _scalar_exponent(x, exponent)
    def vjp(xp, g, out, x):
        if p == 0:  # x^0 = 1 is constant; p x^(p-1) would be 0 · ∞ = NaN at x = 0
            return (xp.zeros_like(g),)
        return (g * (p * x ** (p - 1)),)
    return Tensor._from_op(x.data ** p, (x,), vjp, "pow")


def power(x, y) -> Tensor:
    """x ** y elementwise, broadcasting. d/dx = y x^(y−1) (0 at x = y = 0: x^0 = 1 is constant),
    d/dy = x^y log x = out · log x (0 where x = 0), as PyTorch. Safe 1s keep 0 · ∞ out of both
    orders of differentiation."""
    x, y, out = _binary("pow", np.power, x, y, refuse_bool=any)
    zero_x = x.data == 0
    both_zero = zero_x & (y.data == 0)  # constants: 0 · 0^(−1) would be 0 · ∞
    need_x, need_y = x.requires_grad, y.requires_grad
    def vjp(xp, g, out, x, y):
        gx = xp.where(both_zero, 0, g * y * xp.power(x, xp.where(both_zero, 1, y - 1))) if need_x else None
        return gx, (g * out * xp.log(xp.where(zero_x, 1, x)) if need_y else None)
    return Tensor._from_op(out, (x, y), vjp, "pow")


def _scalar_base(base):
    """``rpow``'s base as a Python number (it adopts x's dtype), refused when negative:
    base ** x = exp(x · log(base)) needs the log of the base, which is not real for base < 0."""
    b = np.asarray(base).item()
    if b < 0:
        raise ValueError(f"rpow: base {b} is negative: base ** x = exp(x · log(base)) needs "
                         f"the log of the base, which is undefined (not real) for base < 0")
    return b


def rpow(base, x) -> Tensor:
    """base ** x for a scalar base ≥ 0. d/dx = base^x · log(base) = out · log(base); at base 0
    it is 0 for x ≥ 0 (as PyTorch and HIPS autograd), a constant, not 0 · (−∞) = NaN."""
    if isinstance(base, Tensor) or np.ndim(base) != 0:
        return power(base, x)
    x = as_tensor(x)
    b = _scalar_base(base)
    out = b ** x.data
    log_b = math.log(b) if b else np.where(x.data >= 0, 0, -math.inf).astype(out.dtype)
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g * (out * log_b),), "rpow")


def astype(x, dtype) -> Tensor:
    """x converted to ``dtype``. Between float dtypes d/dx = 1 (the engine casts the gradient
    back to x's dtype); an integer or bool result is a constant, without gradient."""
    x = as_tensor(x)
    out = x.data.astype(dtype)
    if out.dtype.kind != "f":
        return Tensor._from_op(out, (), None, "astype")
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g,), "astype")


# ---- elementwise functions -------------------------------------------------------------

def exp(x) -> Tensor:
    """e^x. d/dx = e^x, so the VJP reuses the output."""
    x = as_tensor(x)
    out = np.exp(x.data)
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g * out,), "exp")


def log(x) -> Tensor:
    """Natural log. d/dx = 1/x."""
    x = as_tensor(x)
    out = np.log(x.data)
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g / x,), "log")


def sqrt(x) -> Tensor:
    """√x. d/dx = 1 / (2√x)."""
    x = as_tensor(x)
    out = np.sqrt(x.data)
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g * 0.5 / out,), "sqrt")


def tanh(x) -> Tensor:
    """tanh x. d/dx = 1 - tanh(x)^2, so the VJP reuses the output."""
    x = as_tensor(x)
    out = np.tanh(x.data)
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g * (1 - out * out),), "tanh")


def sigmoid_array(x: np.ndarray) -> np.ndarray:
    """σ(x) = 1 / (1 + e^-x), never overflowing: with e = e^-|x| ≤ 1 it is 1 / (1 + e) for
    x ≥ 0 and e / (1 + e) for x < 0."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1, e) / (1 + e)


def sigmoid(x) -> Tensor:
    """σ(x) = 1 / (1 + e^-x). d/dx = σ(x)(1 - σ(x)). Stable for any |x|."""
    x = as_tensor(x)
    out = sigmoid_array(x.data)
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g * out * (1 - out),), "sigmoid")


def abs(x) -> Tensor:
    """|x|. d/dx = sign(x): 1 for x > 0, −1 for x < 0, and 0 at the kink (as PyTorch)."""
    x = as_tensor(x)
    sign = np.sign(x.data)  # a constant: its own derivative is 0, under create_graph too
    return Tensor._from_op(np.abs(x.data), (x,), lambda xp, g, out, x: (g * sign,), "abs")


def relu(x) -> Tensor:
    """max(x, 0). d/dx = 1 where x > 0, else 0 (0 at the kink, as PyTorch)."""
    x = as_tensor(x)
    out = np.maximum(x.data, 0)
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g * (x > 0),), "relu")


# ---- reductions ---------------------------------------------------------------------------

def _keep(g, axes, keepdims):
    """Reinsert the reduced axes into ``g`` so it broadcasts against the input."""
    if keepdims:
        return g
    shape = list(g.shape)
    for a in axes:  # sorted, so each index counts the axes already reinserted
        shape.insert(a, 1)
    return g.reshape(shape)


def sum(x, axis=None, keepdims: bool = False) -> Tensor:
    """Σ over ``axis``. Each input element gets the gradient of its sum."""
    x = as_tensor(x)
    axes = reduce_axes(axis, x.shape, "sum")
    kept = tuple(1 if i in axes else n for i, n in enumerate(x.shape))  # keepdims=True's shape
    out = x.data.sum(axis=axes, keepdims=keepdims)
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (xp.broadcast_to(g.reshape(kept), x.shape),), "sum")


def mean(x, axis=None, keepdims: bool = False) -> Tensor:
    """Mean over ``axis``: the sum divided by the number n of elements reduced; d/dx = 1/n."""
    x = as_tensor(x)
    axes = normalize_axes(axis, x.shape, "mean")
    check_not_empty("mean", x.shape, axes)
    n = math.prod([x.shape[a] for a in axes])
    out = x.data.sum(axis=axes, keepdims=keepdims) / n
    return Tensor._from_op(
        out, (x,), lambda xp, g, out, x: (xp.broadcast_to(_keep(g, axes, keepdims) / n, x.shape),),
        "mean")


def log_softmax_array(x: np.ndarray, axis=-1, mask=None) -> tuple:
    """(x − lse, lse) over ``axis`` (int or tuple, kept as size 1): lse = log Σ e^x = m + log Σ e^(x − m),
    m = max x, so nothing overflows. The one stable log-softmax (softmax, log_softmax, cross_entropy,
    logsumexp); ``mask`` (True = keep) leaves entries out: −∞ there, lse = −∞ if none is kept."""
    x = x if mask is None else np.where(mask, x, -np.inf)
    m = x.max(axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)  # a row of −∞: no −∞ − (−∞) in x − m
    with np.errstate(divide="ignore", invalid="ignore"):
        log_s = np.log(np.exp(x - m).sum(axis=axis, keepdims=True))   # −∞ for an empty row
        logp = x - m - log_s
    return (logp if mask is None else np.where(mask, logp, -np.inf)), m + log_s


def logsumexp(x, axis=None, keepdims: bool = False) -> Tensor:
    """log Σ e^x over ``axis``, stable (``log_softmax_array``). d/dx_i = e^(x_i − out) = softmax(x)_i."""
    x = as_tensor(x)
    axes = reduce_axes(axis, x.shape, "logsumexp")
    check_not_empty("logsumexp", x.shape, axes)
    lse = log_softmax_array(x.data, axes)[1]
    out = lse if keepdims else np.squeeze(lse, axes)
    def vjp(xp, g, out, x):
        with np.errstate(invalid="ignore"):  # a row of −∞: e^(−∞ − (−∞)) is NaN, read as 0
            p = xp.nan_to_zero(xp.exp(x - _keep(out, axes, keepdims)))
        return (p * _keep(g, axes, keepdims),)
    return Tensor._from_op(out, (x,), vjp, "logsumexp")


# ---- matmul ---------------------------------------------------------------------------------

def _check_matmul(a, b) -> None:
    """matmul's operands fit: both at least 1-D, and a's last dim is b's contracted one."""
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: both operands need at least 1 dimension, got shapes "
                         f"{a.shape} and {b.shape} (use * for scalars)")
    ka, kb = a.shape[-1], b.shape[-2] if b.ndim > 1 else b.shape[0]
    if ka != kb:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not fit: a's last dim "
                         f"{ka} != b's {'second-to-last' if b.ndim > 1 else 'only'} dim {kb}")


def _matmul_vjp(need_a: bool, need_b: bool):
    """matmul's VJP, for the inputs that need a gradient. As (..., n, k) @ (..., k, m):
    ga = G Bᵀ, gb = Aᵀ G, a 1-D side given its axis and then its gradient losing it again."""
    def vjp(xp, g, out, A, B):
        if B.ndim == 1 and A.ndim > 1:  # a matrix-vector product: out_..i = Σ_k A_..ik B_k
            ga = g[..., None] * B if need_a else None                              # (..., n, k)
            gb = A.reshape(-1, A.shape[-1]).T @ g.reshape(-1) if need_b else None  # (k,)
            return ga, gb
        A2 = A if A.ndim > 1 else A[None, :]                 # (..., n, k)
        B2 = B if B.ndim > 1 else B[:, None]                 # (..., k, m)
        batch = g.shape[:g.ndim - (A.ndim > 1) - (B.ndim > 1)]
        G = g.reshape(batch + (A2.shape[-2], B2.shape[-1]))  # (..., n, m)
        ga = G @ B2.swapaxes(-1, -2) if need_a else None     # (..., n, k): G Bᵀ
        gb = A2.swapaxes(-1, -2) @ G if need_b else None     # (..., k, m): Aᵀ G
        return (ga[..., 0, :] if A.ndim == 1 and ga is not None else ga,
                gb[..., 0] if B.ndim == 1 and gb is not None else gb)
    return vjp


def matmul(a, b) -> Tensor:
    """a @ b with NumPy's rules: 1-D, 2-D and batched (batch dims broadcast). For 2-D:
    d/da = g bᵀ, d/db = aᵀ g; a 1-D ``a`` is a row (1, k), a 1-D ``b`` a column (k, 1)."""
    a, b = pair(a, b)
    _check_matmul(a, b)
    try:
        out = a.data @ b.data
    except ValueError:
        raise ValueError(f"matmul: batch dims of shapes {a.shape} and {b.shape} "
                         f"could not be broadcast together") from None
    return Tensor._from_op(out, (a, b), _matmul_vjp(a.requires_grad, b.requires_grad), "matmul")
