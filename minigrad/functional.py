"""The functions a model calls on tensors, in PyTorch's layouts and argument orders (its
others are ``catalogue.py``'s, reached here too). A public function checks its arguments once;
``linear_op``, ``embedding_op`` and ``softmax_op`` are the ops alone, for callers that checked.
"""
from __future__ import annotations

import numpy as np

from minigrad import nn_ops
from minigrad.catalogue import (binary_cross_entropy,  # noqa: F401
                                binary_cross_entropy_with_logits, elu, leaky_relu, nll_loss, silu,
                                softplus, sparsemax)
from minigrad.checks import mismatch
from minigrad.engine import Tensor
from minigrad.init import check_rng
from minigrad.ops import as_tensor, class_targets, log_softmax_array, softmax_axis
from minigrad.tensor import numpy_keywords


# ---- layers' functions -----------------------------------------------------------------------

def _check_linear(x, weight, bias) -> tuple:
    """``linear``'s x (..., in), float weight (out, in) and bias (out,) or None, as Tensors."""
    weight = as_tensor(weight)
    if weight.data.dtype.kind != "f":
        raise TypeError(f"linear: weight must be a float tensor (an int one has no gradient), "
                        f"got {weight.dtype}")
    if weight.data.ndim != 2:
        raise ValueError(f"linear: weight must be 2-D (out, in), got shape {weight.shape}")
    bias = None if bias is None else as_tensor(bias, weight)
    if bias is not None and bias.data.shape != weight.data.shape[:1]:
        raise mismatch("linear", "bias", bias.shape, "weight", weight.shape,
                       expects=weight.shape[:1])
    return linear_input("linear", x, weight), weight, bias


def linear_input(who: str, x, weight: Tensor) -> Tensor:
    """x as a Tensor of weight's dtype whose last dim is weight's in: what a Linear call checks."""
    x = as_tensor(x, weight)
    if x.shape[-1:] != weight.shape[1:]:
        raise mismatch(who, "input", x.shape, "weight", weight.shape,
                       expects=f"last dim {weight.shape[1]}")
    return x


def linear(x, weight, bias=None) -> Tensor:
    """x Wᵀ + b with PyTorch's layout ``weight (out, in)``: x (..., in) → (..., out)."""
    return linear_op(*_check_linear(x, weight, bias))


def _linear_vjp(lead: tuple, n_in: int, need_x: bool, need_w: bool):
    """dx = g W, dW = gᵀ x, db = Σ g, all leading axes as the N rows of one 2-D product."""
    def vjp(xp, g, out, x, weight, bias=None):
        g2 = g.reshape(-1, g.shape[-1])                                      # (N, out)
        gx = (g2 @ weight).reshape(lead + (n_in,)) if need_x else None      # (..., in)
        gw = g2.T @ x.reshape(-1, n_in) if need_w else None                  # (out, in)
        return (gx, gw) if bias is None else (gx, gw, g2.sum(axis=0))
    return vjp


def linear_op(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """``linear`` unchecked: one node (``_linear_vjp``)."""
    n_in, lead = weight.shape[1], x.shape[:-1]
    out = (x.data.reshape(-1, n_in) @ weight.data.T).reshape(lead + weight.shape[:1])
    if bias is not None:
        out += bias.data
    vjp = _linear_vjp(lead, n_in, x.requires_grad, weight.requires_grad)
    return Tensor._from_op(out, (x, weight) + (() if bias is None else (bias,)), vjp, "linear")


def check_embedding_ids(input, weight: Tensor) -> np.ndarray:
    """``embedding``'s integer ids, each a row of the 2-D weight (V, E)."""
    ids = np.asarray(input.data if isinstance(input, Tensor) else input)
    if ids.dtype.kind not in "iu":
        raise ValueError(f"embedding: input must be integer ids, got dtype {ids.dtype}" + (
            " (the order is embedding(input, weight), ids first, as PyTorch)"
            if weight.data.dtype.kind in "iu" else ""))
    if weight.data.ndim != 2:
        raise ValueError(f"embedding: weight must be 2-D (V, E), got shape {weight.shape}")
    bad = ids[(ids < 0) | (ids >= len(weight.data))]
    if bad.size:
        raise ValueError(f"embedding: id {bad[0]} is out of range for a table of "
                         f"{len(weight.data)} rows")
    return ids


def embedding(input, weight) -> Tensor:
    """Rows of ``weight (V, E)`` picked by the integer ids ``input (...)`` → (..., E)."""
    weight = as_tensor(weight)
    return embedding_op(check_embedding_ids(input, weight), weight)


def embedding_op(ids: np.ndarray, weight: Tensor) -> Tensor:
    """``embedding`` unchecked, a gather. VJP: each row gets the sum of g where it was picked."""
    return Tensor._from_op(weight.data[ids], (weight,),
                           lambda xp, g, out, w: (xp.scatter(g, ids, w.shape),), "embedding")


def _check_dropout(p, training, rng) -> None:
    """``dropout``'s p in [0, 1], a bool ``training``, and a generator when it will draw."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout: p must be in [0, 1], got {p}")
    if not isinstance(training, (bool, np.bool_)):
        raise TypeError(f"dropout: training must be a bool, got {type(training).__name__} "
                        f"(rng is keyword-only)")
    if rng is not None:
        check_rng("dropout", rng)
    elif training and p != 0:
        raise ValueError("dropout: pass rng (an np.random.Generator) when training with p > 0")


def dropout(input, p: float = 0.5, training: bool = True, *,
            rng: np.random.Generator | None = None) -> Tensor:
    """Zero each element with probability ``p``, scale the rest by 1/(1−p) (the expectation is
    unchanged); the identity when not training or p = 0. ``rng=`` is needed when it draws."""
    x = as_tensor(input)
    _check_dropout(p, training, rng)
    if not training or p == 0:
        return x
    mask = (rng.random(x.shape) >= p) * np.asarray(1 / (1 - p) if p < 1 else 0, x.dtype)  # 1/(1−p)
    return Tensor._from_op(x.data * mask, (x,), lambda xp, g, out, x: (g * mask,), "dropout")


# ---- softmax and cross-entropy -----------------------------------------------------------------

def softmax_array(x: np.ndarray, axis: int = -1, mask=None) -> np.ndarray:
    """exp(log softmax(x)) on arrays: exactly 0 where ``mask`` is False (a row of them: all 0)."""
    return np.exp(log_softmax_array(x, axis, mask)[0])


def softmax_vjp(y: np.ndarray, g: np.ndarray, axis: int = -1) -> np.ndarray:
    """dL/dx = (diag(y) − y yᵀ) g = y ⊙ (g − Σ_j g_j y_j) for y = softmax(x), no matrix built
    (masked entries, y_j = 0, get 0)."""
    return y * (g - (g * y).sum(axis=axis, keepdims=True))


@numpy_keywords  # F.softmax(x, dim=-1): one line naming axis=
def softmax(x, axis: int = -1, mask=None) -> Tensor:
    """softmax(x)_i = e^(x_i) / Σ_j e^(x_j), stable; ``mask`` (True = keep) gives the others 0."""
    x = as_tensor(x)
    axis, mask = softmax_axis("softmax", x, axis, mask)
    return softmax_op(x, axis, mask)


def softmax_op(x: Tensor, axis: int, mask: np.ndarray | None) -> Tensor:
    """``softmax`` unchecked, for callers that checked x, axis and mask already."""
    y = softmax_array(x.data, axis, mask)
    return Tensor._from_op(y, (x,), lambda xp, g, y, x: (softmax_vjp(y, g, axis),), "softmax")


@numpy_keywords
def log_softmax(x, axis: int = -1, mask=None) -> Tensor:
    """log softmax(x)_i = x_i − log Σ_j e^(x_j). Masked entries are 0 (not −∞, so nothing
    downstream turns NaN), without gradient."""
    x = as_tensor(x)
    axis, mask = softmax_axis("log_softmax", x, axis, mask)
    logp = log_softmax_array(x.data, axis, mask)[0]
    out = logp if mask is None else np.where(mask, logp, 0)
    return Tensor._from_op(out, (x,), _log_softmax_vjp(logp, axis, mask), "log_softmax")


def _log_softmax_vjp(logp: np.ndarray, axis: int, mask):
    """g − softmax(x) Σ_j g_j, with g at masked entries taken as 0 (their output is constant)."""
    def vjp(xp, g, out, x):
        g = g if mask is None else xp.where(mask, g, 0)
        sm = xp.saved(np.exp(logp), lambda: softmax(x, axis, mask))
        return (g - sm * g.sum(axis=axis, keepdims=True),)
    return vjp


def _cross_entropy_targets(logits, targets, ignore_index, reduction, eps) -> tuple:
    """cross_entropy's inputs, checked: logits, q (N, C), and each position's weight (N,): 1/n
    under "mean" over the n kept, 1 otherwise, 0 if ignored."""
    logits = as_tensor(logits)
    if logits.data.dtype.kind != "f":  # integer logits would be truncated to an integer loss
        raise ValueError(f"cross_entropy: logits must be floating, got dtype {logits.dtype} "
                         f"(logits.astype(float))")
    if reduction not in ("none", "mean", "sum") or not 0 <= eps <= 1:
        raise ValueError(f"cross_entropy: reduction must be 'none', 'mean' or 'sum' and "
                         f"label_smoothing in [0, 1], got {reduction!r} and {eps}")
    t, keep = class_targets("cross_entropy", logits, targets, ignore_index)  # (...), (...)
    q = np.full((t.size, logits.shape[-1]), eps / logits.shape[-1], logits.dtype)    # (N, C)
    q[np.arange(t.size), t.reshape(-1)] += 1 - eps
    n = max(int(keep.sum()), 1) if reduction == "mean" else 1  # all ignored: 0 (PyTorch: NaN)
    return logits, q, (keep.reshape(-1) / n).astype(logits.dtype)


def cross_entropy(logits, targets, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0) -> Tensor:
    """ℓ = −Σ_c q_c log softmax(logits)_c, q = (1 − ε) onehot(y) + ε / C; logits (..., C), targets
    y (...) but ``ignore_index`` (-100; None: none); mean, "sum" or "none". VJP: (softmax − q) g."""
    logits, q, w = _cross_entropy_targets(logits, targets, ignore_index, reduction, label_smoothing)
    logp = log_softmax_array(logits.data.reshape(q.shape))[0]            # (N, C)
    loss = -(np.where(q > 0, logp, 0) * q).sum(axis=-1) * w              # (N,)
    out = loss.reshape(logits.shape[:-1]) if reduction == "none" else loss.sum()
    def vjp(xp, g, out, logits):
        p = xp.saved(np.exp(logp), lambda: softmax(logits.reshape(q.shape), axis=1))  # (N, C)
        return (((p - q) * (g.reshape(-1) * w)[:, None]).reshape(logits.shape),)
    return Tensor._from_op(np.asarray(out, dtype=logits.dtype), (logits,), vjp, "cross_entropy")


# ---- PyTorch's spelling ------------------------------------------------------------------------

def gelu(x, approximate: str = "none") -> Tensor:
    """PyTorch's ``F.gelu``: ``nn_ops.gelu`` with PyTorch's default, the exact x Φ(x)."""
    return nn_ops.gelu(x, approximate)
