"""Composite functions, each written as one op with its VJP: softmax, log_softmax,
cross_entropy, linear, embedding, dropout; and the activations softplus, leaky_relu, elu,
silu, gelu.

Each could be composed from primitives (and the tests compose them to check). Why one op:

* softmax, log_softmax, cross_entropy: one pass of memory instead of five, and they stay
  finite where the composition (exp, sum, divide or log) would overflow;
* linear: x Wᵀ + b is one node instead of three (transpose, matmul, add), so a layer costs
  the engine one VJP call, and the weight keeps PyTorch's layout ``(out, in)``;
* embedding: a gather, ``weight[ids]``; its backward scatters g back into the rows the ids
  picked (repeated ids add up; ``xp.scatter`` does it faster than ``np.add.at``);
* dropout: ``x * mask`` with the random mask scaled by 1/(1 − p) built inside, so its
  backward multiplies g by that same mask; the identity when not training.
"""
from __future__ import annotations

import numpy as np

import math

from minigrad import ops
from minigrad.shape_ops import take_along_axis
from minigrad.coerce import as_tensor, boolean_mask, check_not_empty, normalize_axis
from minigrad.init import check_rng
from minigrad.engine import Tensor


def _check_axis(op, x, axis) -> int:
    """The softmax axis, checked, and not empty (a softmax over nothing has no value). A 0-d
    x takes axis 0 or −1, as PyTorch's dim (a softmax over one element: 1)."""
    if x.ndim == 0 and isinstance(axis, (int, np.integer)) and axis in (0, -1):
        return -1
    axis = normalize_axis(axis, x.shape, op)
    if x.data.size == 0:
        check_not_empty(op, x.shape, (axis,))
    return axis


def _check_mask(op, x, mask):
    mask = boolean_mask(op, "mask (True = keep)", mask)
    try:
        fits = np.broadcast_shapes(mask.shape, x.shape) == x.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{op}: mask of shape {mask.shape} does not broadcast to the "
                         f"input's shape {x.shape}")
    return mask


def softmax_array(x: np.ndarray, axis: int = -1, mask=None) -> np.ndarray:
    """α_j = exp(x_j − m) / Σ_k exp(x_k − m) over ``axis``, m = max over kept x_k.

    The array-level masked softmax (``softmax`` and the attention read both compute with it).
    ``mask``: a boolean array broadcastable to ``x``, True = keep. Masked entries get exactly 0
    and a row with nothing kept is all zeros, without warnings: the maximum of an empty row is
    replaced by 0 and its zero sum by 1 before dividing.
    """
    if mask is not None:
        x = np.where(mask, x, -np.inf)
    m = x.max(axis=axis, keepdims=True)
    if mask is not None:
        m = np.where(np.isfinite(m), m, 0)  # a row with nothing kept: avoid -inf - -inf
    e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    if mask is not None:
        s = np.where(s == 0, 1, s)
    return e / s


def softmax_vjp(y: np.ndarray, g: np.ndarray, axis: int = -1) -> np.ndarray:
    """dL/dx = y ⊙ (g − Σ_j g_j y_j) for y = softmax(x): (diag(y) − y yᵀ) g, no matrix built.

    Also right for a masked softmax: there y_j = 0 at masked entries, so they get 0. On arrays,
    or on Tensors under ``create_graph`` (then y is the softmax's output tensor).
    """
    return y * (g - (g * y).sum(axis=axis, keepdims=True))


def softmax(x, axis: int = -1, mask=None) -> Tensor:
    """softmax(x)_i = e^(x_i) / Σ_j e^(x_j), computed with the maximum subtracted.

    ``mask`` (boolean, True = keep) removes entries from the sum; they get weight 0, and a row
    with nothing kept is all zeros (never NaN). VJP: dL/dx = y ⊙ (g − Σ_j g_j y_j), i.e.
    (diag(y) − y yᵀ) g without building the matrix.
    """
    x = as_tensor(x)
    axis = _check_axis("softmax", x, axis)
    if mask is not None:
        mask = _check_mask("softmax", x, mask)
    y = softmax_array(x.data, axis, mask)
    return Tensor._from_op(y, (x,), lambda xp, g, y, x: (softmax_vjp(y, g, axis),), "softmax")


def sparsemax(x, axis: int = -1) -> Tensor:
    """sparsemax(x) = argmin_{p ∈ simplex} ‖p − x‖² (Martins & Astudillo 2016): like softmax, a
    distribution (p ≥ 0, Σ p = 1) that keeps the order of x, but with exact zeros:

        p_i = max(x_i − τ, 0),   τ = (Σ_{i∈S} x_i − 1) / |S|,   S = {i : p_i > 0}.

    S: sort x descending, x₍₁₎ ≥ x₍₂₎ ≥ …; S holds the k largest for the largest k with
    1 + k x₍ₖ₎ > Σ_{j≤k} x₍ⱼ₎. S does not change under a small change of x (away from the
    kinks x_i = τ), so it is a constant here and the rest is composed from ops: autograd gives
    the Jacobian ∂p/∂x = diag(s) − s sᵀ / |S| (s the indicator of S) with no VJP written out.
    """
    x = as_tensor(x)
    axis = _check_axis("sparsemax", x, axis)
    if x.ndim == 0:                                                      # one element: p = 1
        return sparsemax(x.reshape(1)).reshape(())
    z = np.moveaxis(x.data, axis, -1)                                    # (..., n)
    top = -np.sort(-z, axis=-1)                                          # x₍₁₎ ≥ x₍₂₎ ≥ …
    sums = np.cumsum(top, axis=-1)                                       # Σ_{j≤k} x₍ⱼ₎
    k = (1 + np.arange(1, z.shape[-1] + 1) * top > sums).sum(axis=-1, keepdims=True)  # |S|
    tau = (np.take_along_axis(sums, k - 1, axis=-1) - 1) / k             # (..., 1)
    support = np.moveaxis(z > tau, -1, axis)                             # S, a constant
    size = np.moveaxis(k, -1, axis).astype(x.data.dtype)                 # |S|
    tau = ((x * support).sum(axis=axis, keepdims=True) - 1) / size       # τ, differentiable
    return ops.relu(x - tau)


def log_softmax(x, axis: int = -1, mask=None) -> Tensor:
    """log softmax(x)_i = x_i − log Σ_j e^(x_j), stable. VJP: g − softmax(x) Σ_j g_j.

    With ``mask`` (True = keep) the sum runs over kept entries; masked entries are set to 0,
    not −inf, so nothing downstream turns into NaN, and they get no gradient.
    """
    x = as_tensor(x)
    axis = _check_axis("log_softmax", x, axis)
    if mask is not None:
        mask = _check_mask("log_softmax", x, mask)
        xm = np.where(mask, x.data, -np.inf)
    else:
        xm = x.data
    m = xm.max(axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    shifted = xm - m
    e = np.exp(shifted)
    s = e.sum(axis=axis, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):  # a row with nothing kept: -inf - -inf
        out = shifted - np.log(s)
    if mask is not None:
        out = np.where(mask, out, 0)
        s = np.where(s == 0, 1, s)
    p = e / s                                   # softmax(x): the derivative of log Σ e^x

    def vjp(xp, g, out, x):
        if mask is not None:
            g = xp.where(mask, g, 0)
        sm = xp.saved(p, lambda: softmax(x, axis, mask))
        return (g - sm * g.sum(axis=axis, keepdims=True),)
    return Tensor._from_op(out, (x,), vjp, "log_softmax")


def cross_entropy(logits, targets, ignore_index: int | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Mean (or sum, or with ``reduction="none"`` each position's value) of −log softmax(logits)[target].

    ``logits`` (..., C), ``targets`` integer (...). Positions whose target is ``ignore_index``
    contribute nothing (0 under "none") and are not counted in the mean; if every position is
    ignored the mean is 0 (PyTorch gives NaN). VJP: (softmax(logits) − onehot(target)) · g / n.
    ``label_smoothing`` ε is PyTorch's: (1 − ε) · nll + ε · (−Σ_c log p_c / C); it and "none"
    are composed from ``log_softmax`` (``_smoothed_cross_entropy``).
    """
    if reduction == "none" or label_smoothing:
        return _smoothed_cross_entropy(logits, targets, ignore_index, reduction, label_smoothing)
    logits = as_tensor(logits)
    t = np.asarray(targets.data if isinstance(targets, Tensor) else targets)
    if logits.data.dtype.kind != "f":  # integer logits would be truncated to an integer loss
        raise ValueError(f"cross_entropy: logits must be floating, got dtype {logits.dtype} "
                         f"(convert them, e.g. logits.astype(float))")
    if reduction not in ("mean", "sum"):
        raise ValueError(f"cross_entropy: reduction must be 'none', 'mean' or 'sum', got {reduction!r}")
    if t.dtype.kind not in "iu":
        raise ValueError(f"cross_entropy: targets must be integers, got dtype {t.dtype}")
    if logits.ndim < 1 or t.shape != logits.shape[:-1]:
        raise ValueError(f"cross_entropy: targets of shape {t.shape} do not fit logits of "
                         f"shape {logits.shape} (expected targets of shape {logits.shape[:-1]})")
    C = logits.shape[-1]
    tf = t.reshape(-1)                                              # (N,)
    keep = None if ignore_index is None else tf != ignore_index     # (N,), None: keep all
    if keep is not None:
        tf = np.where(keep, tf, 0)  # an ignored position reads class 0, then counts 0
    if tf.size and (tf.min() < 0 or tf.max() >= C):
        bad = tf[(tf < 0) | (tf >= C)][0]
        raise ValueError(f"cross_entropy: target {bad} is out of range for {C} classes")
    flat = logits.data.reshape(-1, C)                               # (N, C)
    m = flat.max(axis=1, keepdims=True)
    e = np.exp(flat - m)
    s = e.sum(axis=1, keepdims=True)
    rows = np.arange(flat.shape[0])
    nll = np.log(s[:, 0]) + m[:, 0] - flat[rows, tf]                # (N,)
    if keep is not None:
        nll = nll * keep
    count = len(tf) if keep is None else int(keep.sum())
    n = max(count, 1) if reduction == "mean" else 1
    out = np.asarray(nll.sum() / n, dtype=logits.dtype)

    def vjp(xp, g, out, logits):
        p = xp.saved(e / s, lambda: softmax(logits.reshape(-1, C), axis=1))  # (N, C)
        onehot = np.zeros(p.shape, dtype=p.dtype)
        onehot[rows, tf] = 1                                                 # (N, C), constant
        weight = (g / n if keep is None else keep * (g / n))[..., None]      # (N, 1)
        return (((p - onehot) * weight).reshape(logits.shape),)
    return Tensor._from_op(out, (logits,), vjp, "cross_entropy")


def linear(x, weight, bias=None) -> Tensor:
    """x Wᵀ + b, with PyTorch's layout ``weight (out, in)``.

    x (..., in) → (..., out). VJP: dx = g W, dW = Σ gᵀ x over all leading axes, db = Σ g.
    A plain array ``x`` or ``bias`` adopts the weight's dtype.
    """
    weight = as_tensor(weight)
    if weight.data.dtype.kind != "f":
        raise TypeError(f"linear: weight must be a float tensor, got dtype {weight.dtype} "
                        f"(shape {weight.shape}); an int weight has no gradient")
    x = as_tensor(x, weight)
    if weight.data.ndim != 2:
        raise ValueError(f"linear: weight must be 2-D (out, in), got shape {weight.shape}")
    if x.shape[-1:] != weight.shape[1:]:
        raise ValueError(f"linear: input of shape {x.shape} does not fit weight of shape "
                         f"{weight.shape} (expects last dim {weight.shape[1]})")
    lead, n_in = x.shape[:-1], weight.shape[1]  # leading axes: rows of one 2-D product
    out = (x.data.reshape(-1, n_in) @ weight.data.T).reshape(lead + weight.shape[:1])
    parents = (x, weight)
    if bias is not None:
        bias = as_tensor(bias, weight)
        if bias.data.shape != weight.data.shape[:1]:
            raise ValueError(f"linear: bias of shape {bias.shape} does not fit weight of shape "
                             f"{weight.shape} (expects {weight.shape[:1]})")
        out += bias.data
        parents = (x, weight, bias)

    dx, dw = x.requires_grad, weight.requires_grad

    def vjp(xp, g, out, x, weight, bias=None):
        g2 = g.reshape(-1, g.shape[-1])                                  # (N, out)
        gx = (g2 @ weight).reshape(lead + (n_in,)) if dx else None      # (..., in)
        gw = g2.T @ x.reshape(-1, n_in) if dw else None                  # (out, in)
        return (gx, gw) if bias is None else (gx, gw, g2.sum(axis=0))
    return Tensor._from_op(out, parents, vjp, "linear")


def embedding(input, weight) -> Tensor:
    """Rows of ``weight (V, E)`` picked by the integer ids ``input (...)`` → (..., E), in
    PyTorch's argument order (``F.embedding(input, weight)``).

    VJP: each row's gradient is the sum of g over the positions that picked it.
    """
    ids = np.asarray(input.data if isinstance(input, Tensor) else input)
    if ids.dtype.kind not in "iu":
        swapped = " (the order is embedding(input, weight), ids first, as PyTorch)" \
            if np.asarray(weight.data if isinstance(weight, Tensor) else weight).dtype.kind in "iu" else ""
        raise ValueError(f"embedding: input must be integer ids, got dtype {ids.dtype}{swapped}")
    weight = as_tensor(weight)
    if weight.data.ndim != 2:
        raise ValueError(f"embedding: weight must be 2-D (V, E), got shape {weight.shape}")
    V = weight.shape[0]
    if ids.size and (ids.min() < 0 or ids.max() >= V):
        bad = ids[(ids < 0) | (ids >= V)][0]
        raise ValueError(f"embedding: id {bad} is out of range for a table of {V} rows "
                         f"(weight shape {weight.shape})")
    out = weight.data[ids]

    # the VJP: repeated ids add up (xp.scatter: a one-hot matmul or sorted runs, not np.add.at)
    return Tensor._from_op(out, (weight,), lambda xp, g, out, w: (xp.scatter(g, ids, w.shape),),
                           "embedding")


def dropout(input, p: float = 0.5, training: bool = True, *,
            rng: np.random.Generator | None = None) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1/(1−p) (inverted
    dropout, so the expectation is unchanged). Identity when not training or p = 0.
    PyTorch's ``F.dropout(input, p, training)``; the randomness is ``rng=`` (keyword-only),
    which training with p > 0 needs: without it a ValueError, never a silent identity."""
    x = as_tensor(input)
    if not 0 <= p <= 1:
        raise ValueError(f"dropout: p must be in [0, 1], got {p}")
    if not isinstance(training, (bool, np.bool_)):
        raise TypeError(f"dropout: training must be a bool, got {type(training).__name__} "
                        f"(rng is keyword-only: dropout(x, p, rng=rng))")
    if rng is not None:
        check_rng("dropout", rng)
    if not training or p == 0:
        return x
    if rng is None:
        raise ValueError("dropout: pass rng (an np.random.Generator) when training with p > 0")
    keep = rng.random(x.shape) >= p
    scale = np.asarray(0.0 if p == 1 else 1.0 / (1.0 - p), dtype=x.dtype)
    mask = keep * scale
    return Tensor._from_op(x.data * mask, (x,), lambda xp, g, out, x: (g * mask,), "dropout")


# ---- activations ------------------------------------------------------------------------------

def softplus(x) -> Tensor:
    """log(1 + e^x), computed as log1p(e^−|x|) + max(x, 0) so it never overflows.
    d/dx = σ(x). (PyTorch's beta and threshold are not offered: this form is exact everywhere.)"""
    x = as_tensor(x)
    out = np.log1p(np.exp(-np.abs(x.data))) + np.maximum(x.data, 0)
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g * xp.sigmoid(x),), "softplus")


def leaky_relu(x, negative_slope: float = 0.01) -> Tensor:
    """x for x > 0, negative_slope · x otherwise. d/dx = 1 or negative_slope; at 0 the slope
    (as PyTorch)."""
    x = as_tensor(x)
    slope = np.where(x.data > 0, 1, negative_slope).astype(np.result_type(x.data, np.float16))
    return Tensor._from_op(x.data * slope, (x,), lambda xp, g, out, x: (g * slope,), "leaky_relu")


def elu(x, alpha: float = 1.0) -> Tensor:
    """x for x > 0, α (e^x − 1) otherwise. d/dx = 1, or α e^x = out + α (at 0: α, as PyTorch)."""
    x = as_tensor(x)
    pos = x.data > 0
    out = np.where(pos, x.data, alpha * np.expm1(np.minimum(x.data, 0)))
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (xp.where(pos, g, g * (out + alpha)),),
                           "elu")


def silu(x) -> Tensor:
    """x σ(x) (the swish), composed from primitives: d/dx = σ(x) (1 + x (1 − σ(x)))."""
    x = as_tensor(x)
    return x * ops.sigmoid(x)


def gelu(x, approximate: str = "none") -> Tensor:
    """GELU(x) = x Φ(x), Φ the standard normal CDF ½ (1 + erf(x / √2)), as PyTorch's default
    ``approximate="none"``; ``"tanh"`` is ½ x (1 + tanh(√(2/π) (x + 0.044715 x³))), the form
    of ``minigrad.nn_ops.gelu``. Composed from primitives, so differentiable to any order:
    d/dx = Φ(x) + x φ(x) with φ(x) = e^(−x²/2) / √(2π)."""
    x = as_tensor(x)
    if approximate == "none":
        return x * (0.5 * (1 + ops.erf(x * (1 / math.sqrt(2)))))
    if approximate == "tanh":
        return 0.5 * x * (1 + ops.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


# ---- losses -------------------------------------------------------------------------------------

def _reduce(op, loss, keep, reduction):
    """``reduction`` of the per-position ``loss``: "none", "sum", or "mean" over the kept
    positions (0 when none is kept, as ``cross_entropy``)."""
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / max(int(np.sum(keep)) if keep is not None else loss.size, 1)
    raise ValueError(f"{op}: reduction must be 'none', 'mean' or 'sum', got {reduction!r}")


def _class_targets(op, scores, targets, ignore_index):
    """Integer targets fitting scores (..., C): (the targets with ignored ones read as class 0,
    the kept mask or None)."""
    t = np.asarray(targets.data if isinstance(targets, Tensor) else targets)
    if t.dtype.kind not in "iu":
        raise ValueError(f"{op}: targets must be integers, got dtype {t.dtype}")
    if scores.ndim < 1 or t.shape != scores.shape[:-1]:
        raise ValueError(f"{op}: targets of shape {t.shape} do not fit scores of shape "
                         f"{scores.shape} (expected targets of shape {scores.shape[:-1]})")
    keep = None if ignore_index is None else t != ignore_index
    t = t if keep is None else np.where(keep, t, 0)
    C = scores.shape[-1]
    if t.size and (t.min() < 0 or t.max() >= C):
        raise ValueError(f"{op}: target {t[(t < 0) | (t >= C)][0]} is out of range for {C} classes")
    return t, keep


def nll_loss(log_probs, targets, ignore_index: int | None = -100, reduction: str = "mean") -> Tensor:
    """−log_probs[target] per position, reduced: PyTorch's ``nll_loss`` with the class axis
    last, ``log_probs`` (..., C) and integer ``targets`` (...). Composed: a gather, so the
    gradient is −g at each target. Ignored positions count 0 and are left out of the mean."""
    log_probs = as_tensor(log_probs)
    t, keep = _class_targets("nll_loss", log_probs, targets, ignore_index)
    loss = -take_along_axis(log_probs, t[..., None], -1)[..., 0]              # (...)
    if keep is not None:
        loss = loss * keep
    return _reduce("nll_loss", loss, keep, reduction)


def _smoothed_cross_entropy(logits, targets, ignore_index, reduction, eps):
    logits = as_tensor(logits)
    if not 0 <= eps <= 1:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {eps}")
    logp = log_softmax(logits, -1)                                            # (..., C)
    nll = nll_loss(logp, targets, ignore_index, "none")                       # (...)
    if not eps:
        loss = nll
    else:
        t, keep = _class_targets("cross_entropy", logits, targets, ignore_index)
        smooth = -logp.mean(axis=-1)                                          # (...)
        loss = (1 - eps) * nll + eps * (smooth if keep is None else smooth * keep)
    keep = None if ignore_index is None else np.asarray(
        targets.data if isinstance(targets, Tensor) else targets) != ignore_index
    return _reduce("cross_entropy", loss, keep, reduction)


def binary_cross_entropy(probs, targets, reduction: str = "mean") -> Tensor:
    """−(t log p + (1 − t) log(1 − p)) for probabilities p, each log clamped at −100 as
    PyTorch, so p = 0 or 1 gives a finite loss. d/dp = (p − t) / max(p (1 − p), 1e-12)
    (PyTorch's clamp, finite at p = 0 and 1). Targets are constants."""
    p = as_tensor(probs)
    t = np.asarray(targets.data if isinstance(targets, Tensor) else targets, dtype=p.dtype)
    with np.errstate(divide="ignore"):
        out = -(t * np.maximum(np.log(p.data), -100) + (1 - t) * np.maximum(np.log1p(-p.data), -100))
    loss = Tensor._from_op(out, (p,), lambda xp, g, out, p: (
        g * (p - t) / xp.maximum(p * (1 - p), 1e-12),), "binary_cross_entropy")
    return _reduce("binary_cross_entropy", loss, None, reduction)


def binary_cross_entropy_with_logits(logits, targets, reduction: str = "mean") -> Tensor:
    """−(t log σ(z) + (1 − t) log(1 − σ(z))) = softplus(z) − t z, stable for any z (softplus
    never overflows). d/dz = σ(z) − t."""
    z = as_tensor(logits)
    t = np.asarray(targets.data if isinstance(targets, Tensor) else targets, dtype=z.dtype)
    return _reduce("binary_cross_entropy_with_logits", softplus(z) - z * t, None, reduction)
