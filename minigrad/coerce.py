"""Arguments into tensors, axes and class targets, in one place: the dtype policy and the checks.

Dtype policy: beside a float Tensor, a plain number or array, or an int/bool Tensor, takes the
float Tensor's dtype (so float32 stays float32); two float Tensors promote as NumPy does.
"""
from __future__ import annotations

import operator

import numpy as np

from minigrad.checks import mismatch
from minigrad.engine import Tensor


def as_tensor(x, like: Tensor | None = None) -> Tensor:
    """``x`` as a Tensor, taking the dtype of ``like`` when that is a float Tensor and x is not."""
    dtype = like.data.dtype if like is not None and like.data.dtype.kind == "f" else None
    if isinstance(x, Tensor) and (dtype is None or x.data.dtype.kind == "f"):
        return x
    return Tensor(x, dtype=dtype)  # refuses complex values before casting them


def pair(a, b) -> tuple:
    """Two operands as Tensors by the dtype policy, the same whichever of them is a Tensor."""
    if isinstance(a, Tensor):
        if isinstance(b, Tensor) and a.data.dtype is b.data.dtype:
            return a, b  # the common case, decided by one identity test
        b = as_tensor(b, a)
        return as_tensor(a, b), b
    a = as_tensor(a, b if isinstance(b, Tensor) else None)
    return a, as_tensor(b, a)


def as_tensors(op: str, items) -> list:
    """A join's operands (at least one) as Tensors, taking the dtype of the first float Tensor."""
    items = list(items)
    like = next((x for x in items if isinstance(x, Tensor) and x.data.dtype.kind == "f"), None)
    if not items:
        raise ValueError(f"{op}: needs at least one tensor")
    return [as_tensor(x, like) for x in items]


def boolean_mask(op: str, role: str, mask) -> np.ndarray:
    """``mask`` as a boolean array; anything else is refused (0/1 floats could mean either
    polarity)."""
    mask = np.asarray(mask.data if isinstance(mask, Tensor) else mask)
    if mask.dtype != bool:
        raise ValueError(f"{op}: {role} must be boolean, got dtype {mask.dtype}")
    return mask


def normalize_axis(axis, shape: tuple, op: str, ndim: int | None = None) -> int:
    """``axis`` as an int in [0, ndim), counting from the end when negative; ``ndim`` is
    len(shape) unless the op adds axes (stack, expand_dims: the result's)."""
    n = len(shape) if ndim is None else ndim
    if not hasattr(axis, "__index__"):  # 1.0 is refused, as NumPy does
        raise TypeError(f"{op}: axis must be an integer, got {axis!r}")
    if not -n <= operator.index(axis) < n:
        raise ValueError(f"{op}: axis {axis} is out of range for a tensor of shape {tuple(shape)}"
                         + (f" (the result has {n} axes)" if n != len(shape) else ""))
    return operator.index(axis) % n


def normalize_axes(axis, shape: tuple, op: str, ndim: int | None = None) -> tuple:
    """``axis`` (None: every axis; an int; a sequence of ints) as sorted distinct axes."""
    if axis is None:
        return tuple(range(len(shape) if ndim is None else ndim))
    axes = sorted(normalize_axis(a, shape, op, ndim) for a in (axis if np.ndim(axis) else (axis,)))
    if len(set(axes)) != len(axes):
        raise ValueError(f"{op}: axis {axis} names the same dimension twice")
    return tuple(axes)


def reduce_axes(axis, shape: tuple, op: str) -> tuple:
    """A reduction's axes (``normalize_axes``); as NumPy's sum, a 0-d input takes axis 0 or −1."""
    if axis is None or shape == () and isinstance(axis, (int, np.integer)) and axis in (0, -1):
        return tuple(range(len(shape)))
    return normalize_axes(axis, shape, op)


def softmax_axis(op: str, x: Tensor, axis) -> int:
    """A softmax's axis, over at least one element; a 0-d x takes 0 or −1, as PyTorch's dim."""
    if x.ndim == 0 and isinstance(axis, (int, np.integer)) and axis in (0, -1):
        return -1
    axis = normalize_axis(axis, x.shape, op)
    check_not_empty(op, x.shape, (axis,))
    return axis


def check_not_empty(op: str, shape: tuple, axes: tuple) -> None:
    """Refuse to reduce over zero elements: mean, max, logsumexp and softmax have no value there."""
    if any(shape[a] == 0 for a in axes):
        raise ValueError(f"{op}: cannot reduce over zero elements (axis {axes} of a tensor of "
                         f"shape {shape})")


def class_targets(op, scores, targets, ignore_index):
    """The integer targets (...) of scores (..., C), checked, ignored ones read as 0; the kept
    mask."""
    t = np.asarray(targets.data if isinstance(targets, Tensor) else targets)
    if t.dtype.kind not in "iu":
        raise ValueError(f"{op}: targets must be integers, got dtype {t.dtype}")
    if scores.ndim < 1 or t.shape != scores.shape[:-1]:
        raise mismatch(op, "targets", t.shape, "input", scores.shape,
                       why=f"do not fit (expects {scores.shape[:-1]})")
    keep = np.ones(t.shape, bool) if ignore_index is None else t != ignore_index
    t = np.where(keep, t, 0)
    bad = t[(t < 0) | (t >= scores.shape[-1])]
    if bad.size:
        raise ValueError(f"{op}: target {bad[0]} is out of range for {scores.shape[-1]} classes")
    return t, keep
