"""Composite functions, each written as one op with its VJP: softmax, log_softmax,
cross_entropy, linear, embedding, dropout.

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

from minigrad.coerce import as_tensor, boolean_mask, check_not_empty, normalize_axis
from minigrad.init import check_rng
from minigrad.engine import Tensor


def _check_axis(op, x, axis) -> int:
    """The softmax axis, checked, and not empty (a softmax over nothing has no value)."""
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


def cross_entropy(logits, targets, ignore_index: int | None = None, reduction: str = "mean") -> Tensor:
    """Mean (or sum) over positions of −log softmax(logits)[target].

    ``logits`` (..., C), ``targets`` integer (...). Positions whose target is ``ignore_index``
    contribute nothing and are not counted in the mean; if every position is ignored the mean
    is 0. VJP: (softmax(logits) − onehot(target)) · g / n.
    """
    logits = as_tensor(logits)
    t = np.asarray(targets.data if isinstance(targets, Tensor) else targets)
    if logits.data.dtype.kind != "f":  # integer logits would be truncated to an integer loss
        raise ValueError(f"cross_entropy: logits must be floating, got dtype {logits.dtype} "
                         f"(convert them, e.g. logits.astype(float))")
    if reduction not in ("mean", "sum"):
        raise ValueError(f"cross_entropy: reduction must be 'mean' or 'sum', got {reduction!r}")
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
    out = x.data @ weight.data.T
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
        gx = g @ weight if dx else None                                  # (..., in)
        gw = g2.T @ x.reshape(-1, x.shape[-1]) if dw else None           # (out, in)
        return (gx, gw) if bias is None else (gx, gw, g2.sum(axis=0))
    return Tensor._from_op(out, parents, vjp, "linear")


def embedding(weight, ids) -> Tensor:
    """Rows of ``weight (V, E)`` picked by integer ``ids (...)`` → (..., E).

    VJP: each row's gradient is the sum of g over the positions that picked it.
    """
    weight = as_tensor(weight)
    if weight.data.ndim != 2:
        raise ValueError(f"embedding: weight must be 2-D (V, E), got shape {weight.shape}")
    ids = np.asarray(ids.data if isinstance(ids, Tensor) else ids)
    if ids.dtype.kind not in "iu":
        raise ValueError(f"embedding: ids must be integers, got dtype {ids.dtype}")
    V = weight.shape[0]
    if ids.size and (ids.min() < 0 or ids.max() >= V):
        bad = ids[(ids < 0) | (ids >= V)][0]
        raise ValueError(f"embedding: id {bad} is out of range for a table of {V} rows "
                         f"(weight shape {weight.shape})")
    out = weight.data[ids]

    # the VJP: repeated ids add up (xp.scatter: a one-hot matmul or sorted runs, not np.add.at)
    return Tensor._from_op(out, (weight,), lambda xp, g, out, w: (xp.scatter(g, ids, w.shape),),
                           "embedding")


def dropout(x, p: float, rng: np.random.Generator | None = None, training: bool = True) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1/(1−p) (inverted
    dropout, so the expectation is unchanged). Identity when not training or p = 0."""
    x = as_tensor(x)
    if not 0 <= p <= 1:
        raise ValueError(f"dropout: p must be in [0, 1], got {p}")
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
