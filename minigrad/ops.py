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

from minigrad.coerce import (as_tensor, check_not_empty, normalize_axes, normalize_axis, pair,
                             reduce_axes)
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
    """x ** p for a scalar p. d/dx = p x^(p-1). A Tensor or array exponent: ``power``."""
    if isinstance(exponent, Tensor) or np.ndim(exponent) != 0:
        return power(x, exponent)
    x = as_tensor(x)
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


def power(x, y) -> Tensor:
    """x ** y elementwise with a tensor exponent, broadcasting (``np.power``).

    d/dx = y x^(y−1) (0 at x = y = 0, as PyTorch: x^0 = 1 is constant), d/dy = x^y log x =
    out · log x, taken as 0 where x = 0 (the limit for y > 0, and PyTorch's value at y = 0).
    The log is of a safe base (1 where x = 0), so no 0 · ∞ enters either order.
    """
    x, y = pair(x, y)
    if x.data.dtype.kind == "b" or y.data.dtype.kind == "b":
        raise _bool_error("pow", x, y)
    try:
        out = x.data ** y.data
    except ValueError:
        raise _broadcast_error("pow", x, y) from None
    zero_x = x.data == 0
    both_zero = zero_x & (y.data == 0)  # constants: 0 · 0^(−1) would be 0 · ∞
    need_x, need_y = x.requires_grad, y.requires_grad

    def vjp(xp, g, out, x, y):
        gx = xp.where(both_zero, 0, g * y * xp.power(x, xp.where(both_zero, 1, y - 1))) if need_x else None
        gy = g * out * xp.log(xp.where(zero_x, 1, x)) if need_y else None
        return gx, gy
    return Tensor._from_op(out, (x, y), vjp, "pow")

def rpow(base, x) -> Tensor:
    """base ** x for a scalar base ≥ 0. d/dx = base^x · log(base) = out · log(base).

    At base 0 (log 0 = −∞) the gradient is 0 for x ≥ 0 (x = 0 too, as PyTorch and HIPS
    autograd), not 0 · (−∞) = NaN or −∞, and so is its derivative with respect to g.
    A negative base is refused: base^x = e^(x log base) needs log(base), which has no real
    value for base < 0 (NumPy gives NaN for a non-integer x).
    """
    if isinstance(base, Tensor) or np.ndim(base) != 0:
        return power(base, x)
    x = as_tensor(x)
    b = np.asarray(base).item()  # a Python number adopts x's dtype
    if b < 0:
        raise ValueError(f"rpow: base {b} is negative: base ** x = exp(x · log(base)) needs "
                         f"the log of the base, which is undefined (not real) for base < 0")
    out = b ** x.data
    if b == 0:  # 0^x: 0 for x > 0, 1 at x = 0, ∞ below: slope 0 where x ≥ 0 (PyTorch, autograd)
        with np.errstate(invalid="ignore"):
            slope = np.where(x.data >= 0, 0, out * -math.inf)  # a constant: finite d/dg too
        return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g * slope,), "rpow")
    log_b = math.log(b)
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


def sign(x) -> Tensor:
    """sign(x): −1, 0 or 1, as NumPy. Piecewise constant, so d/dx = 0 everywhere (at 0 too,
    as PyTorch); int inputs give NumPy's int result, without gradient."""
    x = as_tensor(x)
    return Tensor._from_op(np.sign(x.data), (x,), lambda xp, g, out, x: (None,), "sign")


def sin(x) -> Tensor:
    """sin x. d/dx = cos x."""
    x = as_tensor(x)
    return Tensor._from_op(np.sin(x.data), (x,), lambda xp, g, out, x: (g * xp.cos(x),), "sin")


def cos(x) -> Tensor:
    """cos x. d/dx = −sin x."""
    x = as_tensor(x)
    return Tensor._from_op(np.cos(x.data), (x,), lambda xp, g, out, x: (-g * xp.sin(x),), "cos")


def log1p(x) -> Tensor:
    """log(1 + x), accurate for small x. d/dx = 1 / (1 + x)."""
    x = as_tensor(x)
    return Tensor._from_op(np.log1p(x.data), (x,), lambda xp, g, out, x: (g / (1 + x),), "log1p")


def expm1(x) -> Tensor:
    """e^x − 1, accurate for small x. d/dx = e^x = out + 1, so the VJP reuses the output."""
    x = as_tensor(x)
    return Tensor._from_op(np.expm1(x.data), (x,), lambda xp, g, out, x: (g * (out + 1),), "expm1")


_erf = np.vectorize(math.erf, otypes=[np.float64])


def erf(x) -> Tensor:
    """The error function (2/√π) ∫₀ˣ e^(−t²) dt, by ``math.erf`` elementwise.
    d/dx = (2/√π) e^(−x²)."""
    x = as_tensor(x)
    out = _erf(x.data).astype(np.result_type(x.data.dtype, np.float16))  # float32 stays float32
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (
        g * (2 / math.sqrt(math.pi)) * xp.exp(-(x * x)),), "erf")

def _pick(op, fn, a, b) -> Tensor:
    """maximum/minimum: g goes to the operand ``fn`` picked; a tie splits it in half (as
    PyTorch), so each side gets g/2. The weights are constants, under create_graph too."""
    a, b = pair(a, b)
    try:
        out = fn(a.data, b.data)
    except ValueError:
        raise _broadcast_error(op, a, b) from None
    if out.dtype.kind == "b":
        raise _bool_error(op, a, b)
    wa = ((fn(a.data, b.data) == a.data) * 1.0 - (a.data == b.data) * 0.5).astype(out.dtype)
    return Tensor._from_op(out, (a, b), lambda xp, g, out, a, b: (g * wa, g * (1 - wa)), op)


def maximum(a, b) -> Tensor:
    """Elementwise max(a, b), broadcasting. d/da = 1 where a > b, 0 where a < b, ½ at a tie
    (PyTorch's choice; NumPy has no gradient)."""
    return _pick("maximum", np.maximum, a, b)


def minimum(a, b) -> Tensor:
    """Elementwise min(a, b), broadcasting. d/da = 1 where a < b, 0 where a > b, ½ at a tie."""
    return _pick("minimum", np.minimum, a, b)


def clip(x, lo=None, hi=None) -> Tensor:
    """x clipped to [lo, hi] (either may be None). d/dx = 1 for lo ≤ x ≤ hi, else 0: at the
    bounds themselves 1, as PyTorch's clamp."""
    x = as_tensor(x)
    if lo is None and hi is None:
        raise ValueError("clip: give lo, hi or both (as np.clip needs one of them)")
    out = np.clip(x.data, lo, hi)
    inside = np.ones(x.shape, bool)
    if lo is not None:
        inside &= x.data >= lo
    if hi is not None:
        inside &= x.data <= hi
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g * inside,), "clip")


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


def _extremum(op, fn, x, axis, keepdims) -> Tensor:
    """max or min over ``axis``: the gradient goes to the elements equal to the result; when
    several tie, they share it equally (each gets g / count), as PyTorch's ``amax``/``amin``."""
    x = as_tensor(x)
    axes = reduce_axes(axis, x.shape, op)
    if x.data.size == 0:
        check_not_empty(op, x.shape, axes)
    top = fn(x.data, axis=axes, keepdims=True)
    out = top if keepdims else np.squeeze(top, axes)

    def vjp(xp, g, out, x):
        winners = x == top  # a boolean array: a constant, under create_graph too
        return (winners * (_keep(g, axes, keepdims) / winners.sum(axis=axes, keepdims=True)),)
    return Tensor._from_op(out, (x,), vjp, op)


def max(x, axis=None, keepdims: bool = False) -> Tensor:
    """Maximum over ``axis``. Ties share the gradient equally (``_extremum``), so the
    gradient of max is then that of the mean of the tied elements."""
    return _extremum("max", np.max, x, axis, keepdims)


def min(x, axis=None, keepdims: bool = False) -> Tensor:
    """Minimum over ``axis``. Ties share the gradient equally, as in ``max``."""
    return _extremum("min", np.min, x, axis, keepdims)


def prod(x, axis=None, keepdims: bool = False) -> Tensor:
    """Π over ``axis``. d/dx_i = Π_{j≠i} x_j: the product of the others, computed as such
    (not out / x_i), so zeros in x give exact gradients and never 0/0.

    The VJP moves the reduced axes last, flattened to n, and takes the product of an (n, n)
    copy whose row i has x_i replaced by 1: an O(n²) formula, but one that is itself a
    ``prod``, so it can be differentiated again.
    """
    x = as_tensor(x)
    axes = reduce_axes(axis, x.shape, "prod")
    out = np.prod(x.data, axis=axes, keepdims=keepdims)
    rest = tuple(a for a in range(x.ndim) if a not in axes)
    perm = rest + axes
    inverse = tuple(sorted(range(x.ndim), key=perm.__getitem__))
    n = math.prod([x.shape[a] for a in axes])
    eye = np.eye(n, dtype=bool)

    def vjp(xp, g, out, x):
        moved = x.transpose(perm).reshape(tuple(x.shape[a] for a in rest) + (n,))  # (..., n)
        others = xp.where(eye, 1, moved[..., None, :])                          # (..., n, n)
        po = xp.prod(others, -1).reshape(tuple(x.shape[a] for a in perm)).transpose(inverse)
        return (po * _keep(g, axes, keepdims),)
    return Tensor._from_op(out, (x,), vjp, "prod")


def _centred_grad(x, g, axes, keepdims, n, ddof):
    """∂L/∂x of var = Σ (x − x̄)² / (n − ddof): g · 2 (x − x̄) / (n − ddof) (the x̄ term drops
    out since Σ (x − x̄) = 0). NaN when n ≤ ddof, as the variance itself."""
    factor = 2 / (n - ddof) if n > ddof else math.nan
    return (x - x.mean(axis=axes, keepdims=True)) * (_keep(g, axes, keepdims) * factor)


def var(x, axis=None, ddof: int = 0, keepdims: bool = False) -> Tensor:
    """Variance Σ (x − x̄)² / (n − ddof) over ``axis``, with NumPy's default ddof = 0
    (PyTorch's default is the unbiased ddof = 1: pass ddof=1). d/dx_i = 2 (x_i − x̄) / (n − ddof)."""
    x = as_tensor(x)
    axes = normalize_axes(axis, x.shape, "var")
    out = np.var(x.data, axis=axes, ddof=ddof, keepdims=keepdims)
    n = math.prod([x.shape[a] for a in axes])
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (
        _centred_grad(x, g, axes, keepdims, n, ddof),), "var")


def std(x, axis=None, ddof: int = 0, keepdims: bool = False) -> Tensor:
    """Standard deviation √var (NumPy's default ddof = 0). d/dx = (d var/dx) / (2 std); where
    std = 0 (all equal) the gradient is 0, as PyTorch's, not 0/0."""
    x = as_tensor(x)
    axes = normalize_axes(axis, x.shape, "std")
    out = np.std(x.data, axis=axes, ddof=ddof, keepdims=keepdims)
    n = math.prod([x.shape[a] for a in axes])

    def vjp(xp, g, out, x):
        zero = out == 0  # a constant mask; the safe divisor keeps 0/0 out of both orders
        half = xp.where(zero, 0, g / (2 * xp.where(zero, 1, out)))
        return (_centred_grad(x, half, axes, keepdims, n, ddof),)
    return Tensor._from_op(out, (x,), vjp, "std")


def _arg(op, fn, x, axis, keepdims) -> Tensor:
    x = as_tensor(x)
    if axis is not None and not (x.ndim == 0 and axis in (0, -1)):
        axis = normalize_axis(axis, x.shape, op)
    return Tensor._from_op(fn(x.data, axis=axis, keepdims=keepdims), (), None, op)


def argmax(x, axis=None, keepdims: bool = False) -> Tensor:
    """Index of the maximum along ``axis`` (of the flattened x for None), as NumPy: an int
    tensor without gradient. Ties give the first index (NumPy and PyTorch)."""
    return _arg("argmax", np.argmax, x, axis, keepdims)


def argmin(x, axis=None, keepdims: bool = False) -> Tensor:
    """Index of the minimum along ``axis``, as ``argmax``."""
    return _arg("argmin", np.argmin, x, axis, keepdims)


def cumsum(x, axis=None) -> Tensor:
    """Running sum along ``axis`` (of the flattened x for None, as NumPy). Element i of the
    input appears in every out_j with j ≥ i, so its gradient is Σ_{j≥i} g_j: the cumsum of
    g reversed along the axis, reversed back."""
    x = as_tensor(x)
    if axis is not None:
        axis = 0 if x.ndim == 0 and axis in (0, -1) else normalize_axis(axis, x.shape, "cumsum")
    out = np.cumsum(x.data, axis=axis)
    a = 0 if axis is None else axis
    flip = (slice(None),) * a + (slice(None, None, -1),)

    def vjp(xp, g, out, x):
        return (xp.cumsum(g[flip], a)[flip].reshape(x.shape),)
    return Tensor._from_op(out, (x,), vjp, "cumsum")


def logsumexp(x, axis=None, keepdims: bool = False) -> Tensor:
    """log Σ e^x, computed as m + log Σ e^(x - m) with m = max x, so nothing overflows.

    d/dx_i = e^(x_i - out) = softmax(x)_i.
    """
    x = as_tensor(x)
    axes = reduce_axes(axis, x.shape, "logsumexp")
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
        if b.ndim == 1 and a.ndim > 1:  # a matrix-vector product: out_..i = Σ_k A_..ik B_k
            ga = g[..., None] * B if a.requires_grad else None            # (..., n, k): g ⊗ B
            gb = A.reshape(-1, A.shape[-1]).T @ g.reshape(-1) if b.requires_grad else None  # (k,)
            return ga, gb
        A = A if a.ndim > 1 else A[None, :]                  # (..., n, k)
        B = B if b.ndim > 1 else B[:, None]                  # (..., k, m)
        batch = g.shape[:g.ndim - (a.ndim > 1) - (b.ndim > 1)]
        G = g.reshape(batch + (A.shape[-2], B.shape[-1]))    # (..., n, m)
        ga = G @ B.swapaxes(-1, -2) if a.requires_grad else None    # (..., n, k): G Bᵀ
        gb = A.swapaxes(-1, -2) @ G if b.requires_grad else None    # (..., k, m): Aᵀ G
        return (ga[..., 0, :] if a.ndim == 1 and ga is not None else ga,
                gb[..., 0] if b.ndim == 1 and gb is not None else gb)
    return Tensor._from_op(out, (a, b), vjp, "matmul")


def outer(a, b) -> Tensor:
    """The outer product of the flattened a and b: out_ij = a_i b_j (``np.outer``). Composed:
    a column times a row, so its VJP is ``mul``'s (each side's gradient summed over the other)."""
    a, b = pair(a, b)
    return mul(a.reshape(-1)[:, None], b.reshape(-1)[None, :])


def tensordot(a, b, axes=2) -> Tensor:
    """``np.tensordot``: sum a_(free_a, k) b_(k, free_b) over the paired ``axes`` (an int n:
    a's last n with b's first n; or two sequences). Composed as NumPy computes it: move the
    summed axes together, flatten to two matrices, one ``matmul``, reshape."""
    a, b = pair(a, b)
    if np.ndim(axes) == 0:
        n = int(axes)
        axes_a, axes_b = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        axes_a, axes_b = ([axes_x] if np.ndim(axes_x) == 0 else list(axes_x) for axes_x in axes)
    axes_a = [normalize_axis(i, a.shape, "tensordot") for i in axes_a]
    axes_b = [normalize_axis(i, b.shape, "tensordot") for i in axes_b]
    if [a.shape[i] for i in axes_a] != [b.shape[i] for i in axes_b]:
        raise ValueError(f"tensordot: the summed axes of shapes {a.shape} and {b.shape} differ "
                         f"in size ({axes_a} against {axes_b})")
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [i for i in range(b.ndim) if i not in axes_b]
    k = math.prod([a.shape[i] for i in axes_a])
    A = a.transpose(free_a + axes_a).reshape(-1, k) if a.ndim else a.reshape(1, 1)   # (M, K)
    B = b.transpose(axes_b + free_b).reshape(k, -1) if b.ndim else b.reshape(1, 1)   # (K, N)
    shape = tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b)
    return matmul(A, B).reshape(shape)


def _einsum_parse(subscripts: str, count: int):
    """'ij,jk->ik' as (['ij', 'jk'], 'ik'); an implicit output is NumPy's (the letters seen
    once, sorted)."""
    subscripts = subscripts.replace(" ", "")
    ins, arrow, out = subscripts.partition("->")
    ins = ins.split(",")
    if not arrow:
        letters = "".join(ins)
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if "." in subscripts or len(ins) != count:
        raise ValueError(f"einsum: {subscripts!r} needs one term per operand ({count} given) "
                         f"and no '...' (write the axes out)")
    for term in ins:
        if len(set(term)) != len(term):
            raise ValueError(f"einsum: a letter repeated within one operand ({term!r}, a "
                             f"diagonal) is not supported")
    return ins, out


def einsum(subscripts: str, *operands) -> Tensor:
    """``np.einsum`` for explicit letters (no '...', no letter twice within one operand).

    out = Σ over the letters not in the output of Π_k operand_k. The gradient of operand i is
    the same kind of sum with the subscripts swapped: einsum('out,others->in_i', g, others),
    then broadcast over the letters only operand i has (it was summed over them alone).
    """
    ops_ = [as_tensor(o) for o in operands]
    if ops_:
        ops_ = [as_tensor(o, next((t for t in ops_ if t.data.dtype.kind == "f"), None)) for o in ops_]
    ins, outs = _einsum_parse(subscripts, len(ops_))
    try:
        out = np.einsum(f"{','.join(ins)}->{outs}", *[t.data for t in ops_])
    except ValueError as e:
        raise ValueError(f"einsum: {subscripts!r} does not fit shapes "
                         f"{[t.shape for t in ops_]}: {e}") from None

    def vjp(xp, g, out, *xs):
        grads = []
        for i, (term, x) in enumerate(zip(ins, xs)):
            rest = [t for j, t in enumerate(ins) if j != i]
            seen = set(outs).union(*rest)
            have = "".join(c for c in term if c in seen)
            gi = xp.einsum(f"{','.join([outs] + rest)}->{have}", g, *[xs[j] for j in range(len(xs)) if j != i])
            gi = gi.reshape(tuple(n if c in seen else 1 for c, n in zip(term, x.shape)))
            grads.append(xp.broadcast_to(gi, x.shape))
        return tuple(grads)
    return Tensor._from_op(out, tuple(ops_), vjp, "einsum")
