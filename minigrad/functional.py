"""The functions a model calls on tensors, after the primitives (``ops.py``, ``shape_ops.py``):
linear, embedding, dropout, elu, then softmax, log_softmax, cross_entropy and sparsemax.

linear, embedding and dropout are each one op with its VJP, in PyTorch's layouts: x Wᵀ + b is
one node instead of three (transpose, matmul, add), with the weight ``(out, in)``; embedding is
a gather, ``weight[ids]``, whose backward adds g into the rows the ids picked (``xp.scatter``);
dropout multiplies by a random mask scaled by 1/(1 − p) and its backward by that same mask.

softmax, log_softmax and cross_entropy are ops too, written on the one stable log-softmax of
``ops.log_softmax_array`` (the maximum subtracted, so they stay finite where exp, sum, divide
and log composed would overflow); cross_entropy's label smoothing and ``reduction="none"`` are
the same op. sparsemax and elu are composed from primitives.

PyTorch's other functions (softplus, leaky_relu, silu, nll_loss, the binary cross-entropies)
live in ``catalogue.py`` and are reached here too, as ``functional.<name>``; ``gelu`` is
``nn_ops.gelu`` with PyTorch's default.
"""
from __future__ import annotations

import numpy as np

from minigrad import nn_ops, ops
from minigrad.catalogue import (binary_cross_entropy, binary_cross_entropy_with_logits,  # noqa: F401
                                class_targets, leaky_relu, nll_loss, silu, softplus)
from minigrad.coerce import as_tensor, boolean_mask, check_not_empty, normalize_axis
from minigrad.engine import Tensor
from minigrad.init import check_rng
from minigrad.ops import log_softmax_array


# ---- layers' functions -----------------------------------------------------------------------

def _check_linear(x, weight, bias) -> tuple:
    """``linear``'s arguments as Tensors, checked: a float 2-D weight (out, in), x (..., in), a
    bias (out,) or None; a plain array x or bias adopts the weight's dtype."""
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
    bias = None if bias is None else as_tensor(bias, weight)
    if bias is not None and bias.data.shape != weight.data.shape[:1]:
        raise ValueError(f"linear: bias of shape {bias.shape} does not fit weight of shape "
                         f"{weight.shape} (expects {weight.shape[:1]})")
    return x, weight, bias


def _linear_vjp(lead: tuple, n_in: int, need_x: bool, need_w: bool):
    """linear's VJP, all leading axes as the rows N of one 2-D product: dx = g W,
    dW = gᵀ x, db = Σ g over the rows."""
    def vjp(xp, g, out, x, weight, bias=None):
        g2 = g.reshape(-1, g.shape[-1])                                      # (N, out)
        gx = (g2 @ weight).reshape(lead + (n_in,)) if need_x else None      # (..., in)
        gw = g2.T @ x.reshape(-1, n_in) if need_w else None                  # (out, in)
        return (gx, gw) if bias is None else (gx, gw, g2.sum(axis=0))
    return vjp


def linear(x, weight, bias=None) -> Tensor:
    """x Wᵀ + b, with PyTorch's layout ``weight (out, in)``: x (..., in) → (..., out).
    VJP (``_linear_vjp``): dx = g W, dW = Σ gᵀ x over all leading axes, db = Σ g."""
    x, weight, bias = _check_linear(x, weight, bias)
    n_in = weight.shape[1]
    out = (x.data.reshape(-1, n_in) @ weight.data.T).reshape(x.shape[:-1] + weight.shape[:1])
    if bias is not None:
        out += bias.data
    vjp = _linear_vjp(x.shape[:-1], n_in, x.requires_grad, weight.requires_grad)
    return Tensor._from_op(out, (x, weight) + (() if bias is None else (bias,)), vjp, "linear")


def _check_embedding(input, weight) -> tuple:
    """``embedding``'s integer ids (as an array) and its 2-D weight (V, E), each id in [0, V)."""
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
    return ids, weight


def embedding(input, weight) -> Tensor:
    """Rows of ``weight (V, E)`` picked by the integer ids ``input (...)`` → (..., E), in
    PyTorch's argument order (``F.embedding(input, weight)``). VJP: each row's gradient is the
    sum of g over the positions that picked it (``xp.scatter``: repeated ids add up)."""
    ids, weight = _check_embedding(input, weight)
    return Tensor._from_op(weight.data[ids], (weight,),
                           lambda xp, g, out, w: (xp.scatter(g, ids, w.shape),), "embedding")


def _check_dropout(p, training, rng) -> None:
    """``dropout``'s p in [0, 1], a bool ``training``, and a generator when it will draw."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout: p must be in [0, 1], got {p}")
    if not isinstance(training, (bool, np.bool_)):
        raise TypeError(f"dropout: training must be a bool, got {type(training).__name__} "
                        f"(rng is keyword-only: dropout(x, p, rng=rng))")
    if rng is not None:
        check_rng("dropout", rng)
    elif training and p != 0:
        raise ValueError("dropout: pass rng (an np.random.Generator) when training with p > 0")


def dropout(input, p: float = 0.5, training: bool = True, *,
            rng: np.random.Generator | None = None) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1/(1−p) (inverted dropout:
    the expectation is unchanged); the identity when not training or p = 0. PyTorch's
    ``F.dropout(input, p, training)``, its randomness ``rng=`` (needed when it draws)."""
    x = as_tensor(input)
    _check_dropout(p, training, rng)
    if not training or p == 0:
        return x
    keep = rng.random(x.shape) >= p
    mask = keep * np.asarray(0.0 if p == 1 else 1.0 / (1.0 - p), dtype=x.dtype)  # 0 or 1/(1−p)
    return Tensor._from_op(x.data * mask, (x,), lambda xp, g, out, x: (g * mask,), "dropout")


def elu(x, alpha: float = 1.0) -> Tensor:
    """x for x > 0, α (e^x − 1) otherwise. d/dx = 1, or α e^x = out + α (at 0: α, as PyTorch)."""
    x = as_tensor(x)
    pos = x.data > 0
    out = np.where(pos, x.data, alpha * np.expm1(np.minimum(x.data, 0)))
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (xp.where(pos, g, g * (out + alpha)),),
                           "elu")


# ---- softmax and cross-entropy -----------------------------------------------------------------

def _check_axis_mask(op, x, axis, mask=None) -> tuple:
    """The softmax axis, checked and not empty (a softmax over nothing has no value; a 0-d x
    takes axis 0 or −1, as PyTorch's dim), and the boolean mask (True = keep) or None, which
    must broadcast to x's shape."""
    if x.ndim == 0 and isinstance(axis, (int, np.integer)) and axis in (0, -1):
        axis = -1
    else:
        axis = normalize_axis(axis, x.shape, op)
        check_not_empty(op, x.shape, (axis,))
    if mask is None:
        return axis, None
    mask = boolean_mask(op, "mask (True = keep)", mask)
    if mask.ndim > x.ndim or any(m not in (1, n) for m, n in zip(mask.shape[::-1], x.shape[::-1])):
        raise ValueError(f"{op}: mask of shape {mask.shape} does not broadcast to the "
                         f"input's shape {x.shape}")
    return axis, mask


def softmax_array(x: np.ndarray, axis: int = -1, mask=None) -> np.ndarray:
    """α = exp(log softmax(x)) over ``axis`` (``log_softmax_array``), the array-level masked
    softmax: ``mask`` (True = keep) gives exactly 0 to masked entries, and a row with nothing
    kept is all zeros, without warnings."""
    return np.exp(log_softmax_array(x, axis, mask)[0])


def softmax_vjp(y: np.ndarray, g: np.ndarray, axis: int = -1) -> np.ndarray:
    """dL/dx = y ⊙ (g − Σ_j g_j y_j) for y = softmax(x): (diag(y) − y yᵀ) g, no matrix built.

    Also right for a masked softmax: there y_j = 0 at masked entries, so they get 0. On arrays,
    or on Tensors under ``create_graph`` (then y is the softmax's output tensor).
    """
    return y * (g - (g * y).sum(axis=axis, keepdims=True))


def softmax(x, axis: int = -1, mask=None) -> Tensor:
    """softmax(x)_i = e^(x_i) / Σ_j e^(x_j), computed with the maximum subtracted.

    ``mask`` (boolean, True = keep) removes entries from the sum; they get weight 0, and a row
    with nothing kept is all zeros (never NaN). VJP: ``softmax_vjp``.
    """
    x = as_tensor(x)
    axis, mask = _check_axis_mask("softmax", x, axis, mask)
    y = softmax_array(x.data, axis, mask)
    return Tensor._from_op(y, (x,), lambda xp, g, y, x: (softmax_vjp(y, g, axis),), "softmax")


def log_softmax(x, axis: int = -1, mask=None) -> Tensor:
    """log softmax(x)_i = x_i − log Σ_j e^(x_j), stable. VJP: g − softmax(x) Σ_j g_j. With ``mask``
    (True = keep) masked entries are 0, not −∞ (nothing downstream turns NaN), without gradient."""
    x = as_tensor(x)
    axis, mask = _check_axis_mask("log_softmax", x, axis, mask)
    logp = log_softmax_array(x.data, axis, mask)[0]
    out = logp if mask is None else np.where(mask, logp, 0)
    def vjp(xp, g, out, x):
        g = g if mask is None else xp.where(mask, g, 0)
        sm = xp.saved(np.exp(logp), lambda: softmax(x, axis, mask))
        return (g - sm * g.sum(axis=axis, keepdims=True),)
    return Tensor._from_op(out, (x,), vjp, "log_softmax")


def _cross_entropy_targets(logits, targets, ignore_index, reduction, eps) -> tuple:
    """cross_entropy's inputs, checked, as (logits, q (N, C) = (1 − ε) onehot(target) + ε / C,
    the weight (N,) of each position: 1/n under "mean" over n kept, 1 otherwise, 0 if ignored)."""
    logits = as_tensor(logits)
    if logits.data.dtype.kind != "f":  # integer logits would be truncated to an integer loss
        raise ValueError(f"cross_entropy: logits must be floating, got dtype {logits.dtype} "
                         f"(convert them, e.g. logits.astype(float))")
    if reduction not in ("none", "mean", "sum") or not 0 <= eps <= 1:
        raise ValueError(f"cross_entropy: reduction must be 'none', 'mean' or 'sum' and "
                         f"label_smoothing in [0, 1], got {reduction!r} and {eps}")
    t, keep = class_targets("cross_entropy", logits, targets, ignore_index)  # (...), (...)
    q = np.full((t.size, logits.shape[-1]), eps / logits.shape[-1], logits.dtype)    # (N, C)
    q[np.arange(t.size), t.reshape(-1)] += 1 - eps
    n = max(int(keep.sum()), 1) if reduction == "mean" else 1  # all ignored: 0 (PyTorch: NaN)
    return logits, q, (keep.reshape(-1) / n).astype(logits.dtype)


def cross_entropy(logits, targets, ignore_index=None, reduction="mean", label_smoothing=0.0) -> Tensor:
    """ℓ = −Σ_c q_c log softmax(logits)_c, q = (1 − ε) onehot(target) + ε / C, for logits (..., C)
    and integer targets (...): the mean over positions (``reduction``: or "sum", or "none" for
    each), a target ``ignore_index`` counting 0. VJP: (softmax(logits) − q) · g / n."""
    logits, q, w = _cross_entropy_targets(logits, targets, ignore_index, reduction, label_smoothing)
    logp = log_softmax_array(logits.data.reshape(q.shape))[0]            # (N, C)
    loss = -(np.where(q > 0, logp, 0) * q).sum(axis=-1) * w              # (N,)
    out = loss.reshape(logits.shape[:-1]) if reduction == "none" else loss.sum()
    def vjp(xp, g, out, logits):
        p = xp.saved(np.exp(logp), lambda: softmax(logits.reshape(q.shape), axis=1))  # (N, C)
        return (((p - q) * (g.reshape(-1) * w)[:, None]).reshape(logits.shape),)
    return Tensor._from_op(np.asarray(out, dtype=logits.dtype), (logits,), vjp, "cross_entropy")


def _sparsemax_support(z: np.ndarray, axis: int) -> tuple:
    """The support S of sparsemax(z) along ``axis`` and its size |S|, as arrays: sort z
    descending, z₍₁₎ ≥ z₍₂₎ ≥ …; S holds the k largest for the largest k with
    1 + k z₍ₖ₎ > Σ_{j≤k} z₍ⱼ₎."""
    z = np.moveaxis(z, axis, -1)                                         # (..., n)
    top = -np.sort(-z, axis=-1)                                          # z₍₁₎ ≥ z₍₂₎ ≥ …
    sums = np.cumsum(top, axis=-1)                                       # Σ_{j≤k} z₍ⱼ₎
    k = (1 + np.arange(1, z.shape[-1] + 1) * top > sums).sum(axis=-1, keepdims=True)  # |S|
    tau = (np.take_along_axis(sums, k - 1, axis=-1) - 1) / k             # (..., 1)
    return np.moveaxis(z > tau, -1, axis), np.moveaxis(k, -1, axis).astype(z.dtype)


def sparsemax(x, axis: int = -1) -> Tensor:
    """sparsemax(x) = argmin_{p ∈ simplex} ‖p − x‖² (Martins & Astudillo 2016): like softmax, a
    distribution keeping the order of x, but with exact zeros: p_i = max(x_i − τ, 0),
    τ = (Σ_{i∈S} x_i − 1) / |S|, S = {i : p_i > 0}. S is constant near x (away from the kinks),
    so autograd gives ∂p/∂x = diag(s) − s sᵀ / |S| (s: S's indicator) with no VJP written out."""
    x = as_tensor(x)
    axis, _ = _check_axis_mask("sparsemax", x, axis)
    if x.ndim == 0:                                                      # one element: p = 1
        return sparsemax(x.reshape(1)).reshape(())
    support, size = _sparsemax_support(x.data, axis)                    # S and |S|: constants
    tau = ((x * support).sum(axis=axis, keepdims=True) - 1) / size       # τ, differentiable
    return ops.relu(x - tau)


# ---- PyTorch's spelling ------------------------------------------------------------------------

def gelu(x, approximate: str = "none") -> Tensor:
    """PyTorch's ``F.gelu``: ``nn_ops.gelu`` with PyTorch's default, the exact x Φ(x)."""
    return nn_ops.gelu(x, approximate)
