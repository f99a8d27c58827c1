"""Primitive ops: arithmetic, elementwise functions, reductions (with the one stable log-softmax
on arrays) and matmul. The ops no model uses are in ``catalogue.py``. Each computes ``out`` with
NumPy and defines its ``vjp(xp, g, out, *inputs)`` (``engine.py``).
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.checks import mismatch
from minigrad.coerce import as_tensor, check_not_empty, normalize_axes, pair, reduce_axes
from minigrad.engine import Tensor, refuse_complex


def _bool_error(op, *tensors):
    shapes = " and ".join(str(t.shape) for t in tensors)
    return TypeError(f"{op}: arithmetic on bool tensors (shapes {shapes}) is not defined; "
                     f"convert first, e.g. mg.tensor(t.data, dtype=float)")


# ---- arithmetic ----------------------------------------------------------------------

def _binary(op, fn, a, b, refuse_bool=all):
    a, b = pair(a, b)  # bool operands are refused: NumPy's bool + bool is a logical or
    if refuse_bool((a.data.dtype.kind == "b", b.data.dtype.kind == "b")):
        raise _bool_error(op, a, b)
    try:
        return a, b, fn(a.data, b.data)
    except ValueError:
        raise mismatch(op, "a", a.shape, "b", b.shape, why="do not broadcast together") from None


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
    """``pow``'s exponent as a Python number, refused for a bool x and an integer x to a negative
    int."""
    if x.data.dtype.kind == "b":
        raise _bool_error("pow", x)
    refuse_complex(exponent)
    p = np.asarray(exponent).item()
    if isinstance(p, int) and p < 0 and x.data.dtype.kind in "iu":
        raise ValueError(f"pow: an integer tensor ({x.dtype}) to a negative integer power {p}: "
                         f"make one a float")
    return p


def pow(x, exponent) -> Tensor:
    """x ** p for a scalar p (a Python number: it adopts x's dtype). d/dx = p x^(p-1)."""
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
    """x ** y elementwise. d/dx = y x^(y−1), d/dy = x^y log x = out · log x; as PyTorch, d/dx is 0
    at x = y = 0 (x^0 = 1 is constant) and d/dy is 0 at x = 0, with safe 1s to keep 0 · ∞ out."""
    x, y, out = _binary("pow", np.power, x, y, refuse_bool=any)
    zero_x = x.data == 0
    both_zero = zero_x & (y.data == 0)
    need_x, need_y = x.requires_grad, y.requires_grad
    def vjp(xp, g, out, x, y):
        gx = (xp.where(both_zero, 0, g * y * xp.power(x, xp.where(both_zero, 1, y - 1)))
              if need_x else None)
        return gx, (g * out * xp.log(xp.where(zero_x, 1, x)) if need_y else None)
    return Tensor._from_op(out, (x, y), vjp, "pow")


def astype(x, dtype) -> Tensor:
    """x as ``dtype``: between floats d/dx = 1; an integer or bool result is a constant."""
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
    """σ(x) = 1 / (1 + e^-x) without overflow: with e = e^-|x|, 1 / (1 + e) for x ≥ 0,
    e / (1 + e) else."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1, e) / (1 + e)


def sigmoid(x) -> Tensor:
    """σ(x). d/dx = σ(x)(1 - σ(x))."""
    x = as_tensor(x)
    out = sigmoid_array(x.data)
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g * out * (1 - out),), "sigmoid")


def relu(x) -> Tensor:
    """max(x, 0). d/dx = 1 where x > 0, else 0 (0 at the kink, as PyTorch)."""
    x = as_tensor(x)
    out = np.maximum(x.data, 0)
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g * (x > 0),), "relu")


# ---- reductions ---------------------------------------------------------------------------

def sum(x, axis=None, keepdims: bool = False) -> Tensor:
    """Σ over ``axis``. Each input element gets the gradient of its sum."""
    x = as_tensor(x)
    axes = reduce_axes(axis, x.shape, "sum")
    total = x.data.sum(axis=axes, keepdims=True)                       # the summed axes kept, as 1s
    out = total if keepdims else total.squeeze(axes)
    def vjp(xp, g, out, x):
        return (xp.broadcast_to(g.reshape(total.shape), x.shape),)
    return Tensor._from_op(out, (x,), vjp, "sum")


def mean(x, axis=None, keepdims: bool = False) -> Tensor:
    """The sum over ``axis`` divided by the number n of elements reduced; d/dx = 1/n."""
    x = as_tensor(x)
    axes = normalize_axes(axis, x.shape, "mean")
    check_not_empty("mean", x.shape, axes)
    n = math.prod([x.shape[a] for a in axes])
    kept = tuple(1 if i in axes else s for i, s in enumerate(x.shape))  # keepdims=True's shape
    out = x.data.sum(axis=axes, keepdims=keepdims) / n
    def vjp(xp, g, out, x):
        return (xp.broadcast_to(g.reshape(kept) / n, x.shape),)
    return Tensor._from_op(out, (x,), vjp, "mean")


def log_softmax_array(x: np.ndarray, axis=-1, mask=None) -> tuple:
    """(x − lse, lse) over ``axis``: lse = log Σ e^x = m + log Σ e^(x − m), m = max x, so nothing
    overflows. ``mask`` (True = keep) leaves entries out: −∞ there, lse = −∞ if none is kept."""
    x = x if mask is None else np.where(mask, x, -np.inf)
    m = x.max(axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)  # a row of −∞: no −∞ − (−∞) in x − m
    logp = x - m
    with np.errstate(divide="ignore", invalid="ignore"):
        log_s = np.log(np.exp(logp).sum(axis=axis, keepdims=True))    # −∞ for an empty row
        logp -= log_s                                                 # in place: x − m − log s
    return (logp if mask is None else np.where(mask, logp, -np.inf)), m + log_s


# ---- matmul ---------------------------------------------------------------------------------

def _matmul_vjp(need_a: bool, need_b: bool):
    """As (..., n, k) @ (..., k, m): ga = G Bᵀ, gb = Aᵀ G; a 1-D side gets an axis and loses it
    again."""
    def vjp(xp, g, out, A, B):
        if B.ndim == 1 and A.ndim > 1:  # a matrix-vector product: out_..i = Σ_k A_..ik B_k
            ga = g[..., None] * B if need_a else None                              # (..., n, k)
            gb = A.reshape(-1, A.shape[-1]).T @ g.reshape(-1) if need_b else None  # (k,)
            return ga, gb
        A2 = A if A.ndim > 1 else A[None, :]                 # (..., n, k)
        B2 = B if B.ndim > 1 else B[:, None]                 # (..., k, m)
        batch = g.shape[:g.ndim - (A.ndim > 1) - (B.ndim > 1)]
        G = g.reshape(batch + (A2.shape[-2], B2.shape[-1]))  # (..., n, m)
        ga = G @ B2.swapaxes(-1, -2) if need_a else None     # (..., n, k)
        gb = A2.swapaxes(-1, -2) @ G if need_b else None     # (..., k, m)
        return (ga[..., 0, :] if A.ndim == 1 and ga is not None else ga,
                gb[..., 0] if B.ndim == 1 and gb is not None else gb)
    return vjp


def matmul(a, b) -> Tensor:
    """a @ b with NumPy's rules (1-D, 2-D, batched). For 2-D: d/da = g bᵀ, d/db = aᵀ g."""
    a, b = pair(a, b)
    try:
        out = a.data @ b.data
    except ValueError:
        raise mismatch("matmul", "a", a.shape, "b", b.shape,
                       why=f"do not fit: a's last dim must be b's "
                       f"{'second-to-last' if b.ndim > 1 else 'only'} dim, batch dims must "
                       f"broadcast, and both need at least 1 dimension (use * for "
                       f"scalars)") from None
    return Tensor._from_op(out, (a, b), _matmul_vjp(a.requires_grad, b.requires_grad), "matmul")
