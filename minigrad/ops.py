"""Primitive ops: arithmetic, elementwise functions, reductions and matmul.

Each op computes ``out`` with NumPy and defines ``vjp(xp, g, out, *inputs)``, which returns
``dL/d input`` for each input given ``g = dL/d out``: one formula that runs on arrays for an
ordinary backward and on Tensors under ``create_graph`` (``minigrad/xp.py``), so every op here
can be differentiated any number of times. VJPs may return gradients in the *broadcast*
shape: the engine sums them back to each input's shape (``engine.unbroadcast``).
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.coerce import as_tensor, check_not_empty, normalize_axes, pair
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

def add(a, b) -> Tensor:
    """a + b. d/da = 1, d/db = 1."""
    a, b = pair(a, b)
    try:
        out = a.data + b.data
    except ValueError:
        raise _broadcast_error("add", a, b) from None
    if out.dtype.kind == "b":  # NumPy's bool + bool is a logical or
        raise _bool_error("add", a, b)
    return Tensor._from_op(out, (a, b), lambda xp, g, out, a, b: (g, g), "add")


def sub(a, b) -> Tensor:
    """a - b. d/da = 1, d/db = -1."""
    a, b = pair(a, b)
    try:
        out = a.data - b.data
    except ValueError:
        raise _broadcast_error("sub", a, b) from None
    except TypeError:  # NumPy refuses bool - bool
        raise _bool_error("sub", a, b) from None
    return Tensor._from_op(out, (a, b), lambda xp, g, out, a, b: (g, -g), "sub")


def mul(a, b) -> Tensor:
    """a * b. d/da = b, d/db = a."""
    a, b = pair(a, b)
    try:
        out = a.data * b.data
    except ValueError:
        raise _broadcast_error("mul", a, b) from None
    if out.dtype.kind == "b":  # NumPy's bool * bool is a logical and
        raise _bool_error("mul", a, b)
    return Tensor._from_op(out, (a, b), lambda xp, g, out, a, b: (g * b, g * a), "mul")


def div(a, b) -> Tensor:
    """a / b. d/da = 1/b, d/db = -a/b^2 = -out/b."""
    a, b = pair(a, b)
    if a.data.dtype.kind == "b" and b.data.dtype.kind == "b":
        raise _bool_error("div", a, b)
    try:
        out = a.data / b.data
    except ValueError:
        raise _broadcast_error("div", a, b) from None

    def vjp(xp, g, out, a, b):
        ga = g / b
        return ga, -ga * out
    return Tensor._from_op(out, (a, b), vjp, "div")


def neg(x) -> Tensor:
    """-x."""
    x = as_tensor(x)
    if x.data.dtype.kind == "b":
        raise _bool_error("neg", x)
    return Tensor._from_op(-x.data, (x,), lambda xp, g, out, x: (-g,), "neg")


def pow(x, exponent) -> Tensor:
    """x ** p for a scalar p. d/dx = p x^(p-1)."""
    x = as_tensor(x)
    if isinstance(exponent, Tensor) or np.ndim(exponent) != 0:
        raise TypeError("pow: the exponent must be a Python or NumPy scalar; for a tensor "
                        "exponent write exp(b * log(a))")
    if x.data.dtype.kind == "b":
        raise _bool_error("pow", x)
    refuse_complex(exponent)
    p = np.asarray(exponent).item()  # a Python number adopts x's dtype; np.float64(2) would upcast
    if p < 0 and x.data.dtype.kind in "iub" and isinstance(p, int):
        raise ValueError(f"pow: an integer tensor ({x.dtype}) to a negative integer power {p} "
                         f"has no integer result: make the tensor or the exponent a float")
    out = x.data ** p

    def vjp(xp, g, out, x):
        if p == 0:  # x^0 = 1 is constant; p x^(p-1) would be 0 · ∞ = NaN at x = 0
            return (xp.zeros_like(g),)
        return (g * (p * x ** (p - 1)),)
    return Tensor._from_op(out, (x,), vjp, "pow")


def rpow(base, x) -> Tensor:
    """base ** x for a scalar base ≥ 0. d/dx = base^x · log(base) = out · log(base).

    At base 0 (log 0 = −∞) the gradient is 0 where out = 0 (x > 0), not 0 · (−∞) = NaN.
    A negative base is refused: base^x = e^(x log base) needs log(base), which has no real
    value for base < 0 (NumPy gives NaN for a non-integer x).
    """
    x = as_tensor(x)
    if isinstance(base, Tensor) or np.ndim(base) != 0:
        raise TypeError("rpow: the base must be a Python or NumPy scalar; for a tensor base "
                        "write base ** exponent with the tensor on the left")
    b = np.asarray(base).item()  # a Python number adopts x's dtype
    if b < 0:
        raise ValueError(f"rpow: base {b} is negative: base ** x = exp(x · log(base)) needs "
                         f"the log of the base, which is undefined (not real) for base < 0")
    out = b ** x.data
    log_b = math.log(b) if b > 0 else -math.inf

    def vjp(xp, g, out, x):
        if b > 0:
            return (g * (out * log_b),)
        with np.errstate(invalid="ignore"):
            return (xp.where(out == 0, 0, g * (out * log_b)),)
    return Tensor._from_op(out, (x,), vjp, "rpow")


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
    axes = normalize_axes(axis, x.shape, "sum")
    out = x.data.sum(axis=axes, keepdims=keepdims)
    return Tensor._from_op(
        out, (x,), lambda xp, g, out, x: (xp.broadcast_to(_keep(g, axes, keepdims), x.shape),), "sum")


def mean(x, axis=None, keepdims: bool = False) -> Tensor:
    """Mean over ``axis``: the sum divided by the number n of elements reduced; d/dx = 1/n."""
    x = as_tensor(x)
    axes = normalize_axes(axis, x.shape, "mean")
    n = math.prod([x.shape[a] for a in axes])
    if n == 0:
        check_not_empty("mean", x.shape, axes)
    out = x.data.sum(axis=axes, keepdims=keepdims) / n
    return Tensor._from_op(
        out, (x,), lambda xp, g, out, x: (xp.broadcast_to(_keep(g, axes, keepdims) / n, x.shape),),
        "mean")


def max(x, axis=None, keepdims: bool = False) -> Tensor:
    """Maximum over ``axis``.

    The gradient goes to the maximal elements; when several tie, they share it equally
    (each gets g / count), so the gradient of max is the same as of the mean of the ties.
    """
    x = as_tensor(x)
    axes = normalize_axes(axis, x.shape, "max")
    if x.data.size == 0:
        check_not_empty("max", x.shape, axes)
    top = x.data.max(axis=axes, keepdims=True)
    out = top if keepdims else np.squeeze(top, axes)

    def vjp(xp, g, out, x):
        winners = x == top  # a boolean array: a constant, under create_graph too
        return (winners * (_keep(g, axes, keepdims) / winners.sum(axis=axes, keepdims=True)),)
    return Tensor._from_op(out, (x,), vjp, "max")


def logsumexp(x, axis=None, keepdims: bool = False) -> Tensor:
    """log Σ e^x, computed as m + log Σ e^(x - m) with m = max x, so nothing overflows.

    d/dx_i = e^(x_i - out) = softmax(x)_i.
    """
    x = as_tensor(x)
    axes = normalize_axes(axis, x.shape, "logsumexp")
    if x.data.size == 0:
        check_not_empty("logsumexp", x.shape, axes)
    m = x.data.max(axis=axes, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)  # a row of -inf stays -inf instead of becoming NaN
    with np.errstate(divide="ignore"):
        top = m + np.log(np.exp(x.data - m).sum(axis=axes, keepdims=True))
    out = top if keepdims else np.squeeze(top, axes)

    def vjp(xp, g, out, x):
        with np.errstate(invalid="ignore"):
            p = xp.nan_to_zero(xp.exp(x - _keep(out, axes, keepdims)))  # NaN: a row of -inf
        return (p * _keep(g, axes, keepdims),)
    return Tensor._from_op(out, (x,), vjp, "logsumexp")


# ---- matmul ---------------------------------------------------------------------------------

def matmul(a, b) -> Tensor:
    """a @ b with NumPy's rules: 1-D, 2-D and batched (batch dims broadcast).

    For 2-D: d/da = g bᵀ, d/db = aᵀ g. A 1-D ``a`` is treated as a row (1, k) and a 1-D ``b``
    as a column (k, 1); the inserted axis is removed from the result and from the gradient.
    """
    a, b = pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: both operands need at least 1 dimension, got shapes "
                         f"{a.shape} and {b.shape} (use * for scalars)")
    ka, kb = a.shape[-1], b.shape[-2] if b.ndim > 1 else b.shape[0]
    if ka != kb:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not fit: a's last dim "
                         f"{ka} != b's {'second-to-last' if b.ndim > 1 else 'only'} dim {kb}")
    try:
        out = a.data @ b.data
    except ValueError:
        raise ValueError(f"matmul: batch dims of shapes {a.shape} and {b.shape} "
                         f"could not be broadcast together") from None

    def vjp(xp, g, out, A, B):
        A = A if a.ndim > 1 else A[None, :]                  # (..., n, k)
        B = B if b.ndim > 1 else B[:, None]                  # (..., k, m)
        batch = g.shape[:g.ndim - (a.ndim > 1) - (b.ndim > 1)]
        G = g.reshape(batch + (A.shape[-2], B.shape[-1]))    # (..., n, m)
        ga = G @ B.swapaxes(-1, -2) if a.requires_grad else None    # (..., n, k): G Bᵀ
        gb = A.swapaxes(-1, -2) @ G if b.requires_grad else None    # (..., k, m): Aᵀ G
        return (ga[..., 0, :] if a.ndim == 1 and ga is not None else ga,
                gb[..., 0] if b.ndim == 1 and gb is not None else gb)
    return Tensor._from_op(out, (a, b), vjp, "matmul")
