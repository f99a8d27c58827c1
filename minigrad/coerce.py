"""Arguments into tensors, masks and axes: the dtype policy and the axis checks, in one place.

Every op starts here. ``as_tensor`` applies the dtype policy of ``tensor.py`` (plain numbers
and arrays adopt the float tensor's dtype, so float32 stays float32) and ``pair`` applies it to
two operands; ``boolean_mask`` refuses a mask that is not boolean; ``normalize_axis`` turns an
axis into a checked non-negative int, with an error that names the op and the shape.
"""
from __future__ import annotations

import operator

import numpy as np

from minigrad.engine import Tensor
from minigrad.checks import refuse_complex


def as_tensor(x, like: Tensor | None = None) -> Tensor:
    """``x`` as a Tensor, by the dtype policy (tensor.py's docstring): when ``like`` is a
    float Tensor, a non-Tensor ``x`` or an int/bool Tensor ``x`` takes its dtype."""
    if isinstance(x, Tensor):
        if like is None or x.data.dtype.kind == "f" or like.data.dtype.kind != "f":
            return x
        return Tensor(x.data, dtype=like.data.dtype)  # int/bool: a constant, needs no graph
    if like is not None and like.data.dtype.kind == "f":
        refuse_complex(x)  # before the cast, which would drop the imaginary part
        return Tensor(np.asarray(x, dtype=like.data.dtype))
    return Tensor(x)


def pair(a, b) -> tuple:
    """Two operands as Tensors, by the dtype policy, the same whichever is a Tensor: a plain
    number or array, or an int/bool Tensor, takes the dtype of the other when that is a float
    Tensor (int-tensor × float32 gives float32); two float Tensors promote as NumPy does.
    Every binary op (``mul``, ``matmul``, ``where``, the attention read) pairs with this."""
    if isinstance(a, Tensor):
        if isinstance(b, Tensor) and a.data.dtype is b.data.dtype:
            return a, b  # the common case, decided by one identity test
        b = as_tensor(b, a)
        return as_tensor(a, b), b
    a = as_tensor(a, b if isinstance(b, Tensor) else None)
    return a, as_tensor(b, a)


def boolean_mask(op: str, role: str, mask) -> np.ndarray:
    """``mask`` (an array or Tensor) as a boolean ndarray; anything else is refused, since a
    0/1 float array could mean either polarity."""
    mask = np.asarray(mask.data if isinstance(mask, Tensor) else mask)
    if mask.dtype != bool:
        raise ValueError(f"{op}: {role} must be boolean, got dtype {mask.dtype}")
    return mask


def as_tensors(items) -> list:
    """Several operands (concatenate, stack) as Tensors: non-Tensors and int/bool Tensors take
    the dtype of the first float Tensor among them."""
    like = None
    for x in items:
        if isinstance(x, Tensor) and x.data.dtype.kind == "f":
            like = x
            break
    return [as_tensor(x, like) for x in items]


def normalize_axis(axis, shape: tuple, op: str, ndim: int | None = None) -> int:
    """The one place an axis is checked: ``axis`` as an int in [0, ndim).

    ``ndim`` is the number of axes ``axis`` counts in: ``len(shape)`` unless the op adds axes
    (``stack``, ``expand_dims``: the result's). Negative axes count from the end, as in NumPy.
    """
    n = len(shape) if ndim is None else ndim
    try:
        a = operator.index(axis)  # ints and NumPy ints; 1.0 is refused, as NumPy does
    except TypeError:
        raise TypeError(f"{op}: axis must be an integer, got {axis!r}") from None
    if not -n <= a < n:
        raise ValueError(f"{op}: axis {a} is out of range for a tensor of shape {tuple(shape)}"
                         + (f" (the result has {n} axes)" if n != len(shape) else ""))
    return a % n


def normalize_axes(axis, shape: tuple, op: str, ndim: int | None = None) -> tuple:
    """``axis`` (None: every axis; an int; or a sequence of ints) as a sorted tuple of
    distinct axes in [0, ndim), each checked by ``normalize_axis``."""
    if axis is None:
        return tuple(range(len(shape) if ndim is None else ndim))
    if isinstance(axis, (int, np.integer)) or np.ndim(axis) == 0:
        return (normalize_axis(axis, shape, op, ndim),)
    axes = sorted(normalize_axis(a, shape, op, ndim) for a in axis)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{op}: axis {axis} names the same dimension twice")
    return tuple(axes)


def reduce_axes(axis, shape: tuple, op: str) -> tuple:
    """The axes of a reduction (sum, max, min, prod, logsumexp, squeeze): ``normalize_axes``, except
    that a 0-d input takes an int axis 0 or −1 and reduces nothing, as NumPy's ``sum`` and
    ``max`` do (a tuple (0,) is refused there too)."""
    if len(shape) == 0 and isinstance(axis, (int, np.integer)) and axis in (0, -1):
        return ()
    return normalize_axes(axis, shape, op)


def check_not_empty(op: str, shape: tuple, axes: tuple) -> None:
    """Refuse to reduce over zero elements: mean, max, logsumexp and softmax have no value there."""
    if any(shape[a] == 0 for a in axes):
        raise ValueError(f"{op}: cannot reduce over zero elements (axis {axes} of a tensor of "
                         f"shape {shape}): the result would be undefined")
