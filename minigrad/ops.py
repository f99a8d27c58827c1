"""Primitive ops: arithmetic, elementwise functions, reductions (with the one stable log-softmax
on arrays) and matmul; the ops no model uses are in ``catalogue.py``. Each computes ``out`` with
NumPy and defines its ``vjp(xp, g, out, *inputs)`` (``engine.py``). First, arguments into tensors
and axes, in one place, with the dtype policy: beside a float Tensor, a plain number or array, or
an int/bool Tensor, takes the float Tensor's dtype (float32 stays float32); two float Tensors
promote as NumPy does.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from minigrad.checks import mismatch
from minigrad.engine import Tensor, refuse_complex

AxisError = getattr(np, "exceptions", np).AxisError  # a ValueError and an IndexError (NumPy's)


# ---- arguments into tensors, axes and class targets ----------------------------------------

def as_tensor(x, like: Tensor | None = None) -> Tensor:
    """``x`` as a Tensor, taking the dtype of ``like`` when that is a float Tensor and x is not."""
    dtype = like.data.dtype if like is not None and like.data.dtype.kind == "f" else None
    if isinstance(x, Tensor) and (dtype is None or x.data.dtype.kind == "f"):
        return x
    return Tensor(x, dtype=dtype)  # refuses complex values before casting them


def pair(a, b) -> tuple:
    """Two operands as Tensors by the dtype policy, the same whichever of them is a Tensor."""
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.data.dtype is b.data.dtype:
        return a, b  # the common case, decided by one identity test
    a = as_tensor(a, b if isinstance(b, Tensor) and not isinstance(a, Tensor) else None)
    b = as_tensor(b, a)
    return as_tensor(a, b), b


def as_tensors(op: str, items) -> list:
    """A join's operands (at least one) as Tensors, taking the dtype of the first float Tensor."""
    items = list(items)
    like = next((x for x in items if isinstance(x, Tensor) and x.data.dtype.kind == "f"), None)
    if not items:
        raise ValueError(f"{op}: needs at least one tensor")
    return [as_tensor(x, like) for x in items]


def boolean_mask(op: str, role: str, mask, shape: tuple | None = None) -> np.ndarray:
    """``mask`` as a boolean array, broadcast to ``shape`` if given; 0/1 floats are refused (they
    could mean either polarity)."""
    mask = np.asarray(mask.data if isinstance(mask, Tensor) else mask)
    if mask.dtype != bool:
        raise ValueError(f"{op}: {role} must be boolean, got dtype {mask.dtype}")
    try:
        return mask if shape is None or mask.shape == shape else np.broadcast_to(mask, shape)
    except ValueError:
        raise mismatch(op, role, mask.shape, "input", shape, why="do not broadcast") from None


def normalize_axis(axis, shape: tuple, op: str, ndim: int | None = None) -> int:
    """``axis`` as an int in [0, ndim), counting from the end when negative; ``ndim`` is
    len(shape) unless the op adds axes (stack, expand_dims: the result's)."""
    n = len(shape) if ndim is None else ndim
    if not hasattr(axis, "__index__"):  # 1.0 is refused, as NumPy does
        raise TypeError(f"{op}: axis must be an integer, got {axis!r}")
    if not -n <= operator.index(axis) < n:
        raise AxisError(f"{op}: axis {axis} is out of range for a tensor of shape {tuple(shape)}"
                         + (f" (the result has {n} axes)" if n != len(shape) else ""))
    return operator.index(axis) % n


def normalize_axes(axis, shape: tuple, op: str, ndim: int | None = None) -> tuple:
    """``axis`` (None: every axis; an int; a sequence of ints) as sorted distinct axes. A 0-d
    input takes the int axis 0 or −1 (as None), as NumPy's sum and PyTorch's dim= do (NumPy's
    mean, var and std refuse it)."""
    n = len(shape) if ndim is None else ndim
    if axis is None or n == 0 and isinstance(axis, (int, np.integer)) and axis in (0, -1):
        return tuple(range(n))
    axes = sorted(normalize_axis(a, shape, op, ndim) for a in (axis if np.ndim(axis) else (axis,)))
    if len(set(axes)) != len(axes):
        raise ValueError(f"{op}: axis {axis} names the same dimension twice")
    return tuple(axes)


def softmax_axis(op: str, x: Tensor, axis, mask=None) -> tuple:
    """A softmax's axis, over at least one element (a 0-d x takes 0 or −1, as PyTorch's dim), and
    its mask (True = keep) broadcast to x, or None."""
    if x.ndim == 0 and isinstance(axis, (int, np.integer)) and axis in (0, -1):
        axis = -1
    else:
        axis = normalize_axis(axis, x.shape, op)
        check_not_empty(op, x.shape, (axis,))
    return axis, (None if mask is None else boolean_mask(op, "mask (True = keep)", mask, x.shape))


def check_not_empty(op: str, shape: tuple, axes: tuple) -> None:
    """Refuse to reduce over zero elements: mean, max, logsumexp and softmax have no value there."""
    if any(shape[a] == 0 for a in axes):
        raise ValueError(f"{op}: cannot reduce over zero elements (axis {axes} of a tensor of "
                         f"shape {shape})")


def class_targets(op, scores, targets, ignore_index):
    """Checked integer targets (...) for scores (..., C), ignored ones as 0, and the kept mask."""
    t = np.asarray(targets.data if isinstance(targets, Tensor) else targets)
    if t.dtype.kind not in "iu":
        raise ValueError(f"{op}: targets must be integers, got dtype {t.dtype}")
    if scores.ndim < 1 or t.shape != scores.shape[:-1]:
        raise mismatch(op, "targets", t.shape, "input", scores.shape, expects=scores.shape[:-1])
    keep = np.ones(t.shape, bool) if ignore_index is None else t != ignore_index
    bad = t[keep & ((t < 0) | (t >= scores.shape[-1]))]
    if bad.size:
        raise ValueError(f"{op}: target {bad[0]} is out of range for {scores.shape[-1]} classes")
    return np.where(keep, t, 0), keep


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
    """``pow``'s exponent as a Python number; refused: a bool x, an integer x to a negative int."""
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
        return (g * (p * x ** (p - 1)),)                            # d/dx x^p = p x^(p-1)
    return Tensor._from_op(x.data ** p, (x,), vjp, "pow")


def power(x, y) -> Tensor:
    """x ** y. d/dx = y x^(y−1), d/dy = x^y log x = out · log x; as PyTorch, d/dx = 0 at x = y = 0
    (x^0 = 1), d/dy = 0 at x = 0 ≤ y (safe 1s keep 0 · ∞ out) and −∞ at x = 0 > y (∞ · log 0)."""
    x, y, out = _binary("pow", np.power, x, y, refuse_bool=any)
    zero_x = (x.data == 0) & (y.data >= 0)
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
    parents = (x,) if out.dtype.kind == "f" else ()  # an integer or bool result: no gradient
    return Tensor._from_op(out, parents, lambda xp, g, out, x: (g,), "astype")


# ---- elementwise functions -------------------------------------------------------------

def exp(x) -> Tensor:
    """e^x. d/dx = e^x, so the VJP reuses the output."""
    x = as_tensor(x)
    return Tensor._from_op(np.exp(x.data), (x,), lambda xp, g, out, x: (g * out,), "exp")


def log(x) -> Tensor:
    """Natural log. d/dx = 1/x."""
    x = as_tensor(x)
    return Tensor._from_op(np.log(x.data), (x,), lambda xp, g, out, x: (g / x,), "log")


def sqrt(x) -> Tensor:
    """√x. d/dx = 1 / (2√x)."""
    x = as_tensor(x)
    return Tensor._from_op(np.sqrt(x.data), (x,), lambda xp, g, out, x: (g * 0.5 / out,), "sqrt")


def tanh(x) -> Tensor:
    """tanh x. d/dx = 1 - tanh(x)^2, so the VJP reuses the output."""
    x = as_tensor(x)
    out = np.tanh(x.data)
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g * (1 - out * out),), "tanh")


def sigmoid_array(x: np.ndarray) -> np.ndarray:
    """σ(x) = 1/(1 + e^-x) without overflow: e = e^-|x|; 1/(1 + e) if x ≥ 0, else e/(1 + e)."""
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
    axes = tuple(range(x.ndim)) if axis is None else normalize_axes(axis, x.shape, "sum")
    total = x.data.sum(axis=axes, keepdims=True)                       # the summed axes kept, as 1s
    out = total if keepdims else total.squeeze(axes)
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (
        xp.broadcast_to(g.reshape(total.shape), x.shape),), "sum")     # g, spread over the sum


def mean(x, axis=None, keepdims: bool = False) -> Tensor:
    """The sum over ``axis`` divided by the number n of elements reduced; d/dx = 1/n."""
    x = as_tensor(x)
    axes = normalize_axes(axis, x.shape, "mean")
    check_not_empty("mean", x.shape, axes)
    n = math.prod([x.shape[a] for a in axes])
    total = x.data.sum(axis=axes, keepdims=True)                       # the summed axes kept, as 1s
    out = (total if keepdims else total.squeeze(axes)) / n
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (
        xp.broadcast_to(g.reshape(total.shape) / n, x.shape),), "mean")     # g / n, spread back


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
        dim = "second-to-last" if b.ndim > 1 else "only"
        raise mismatch("matmul", "a", a.shape, "b", b.shape, why=f"do not fit: a's last dim must "
                       f"be b's {dim} dim, batch dims must broadcast, and both need at least 1 "
                       f"dimension (use * for scalars)") from None
    return Tensor._from_op(out, (a, b), _matmul_vjp(a.requires_grad, b.requires_grad), "matmul")
