"""Ops that move, select or combine elements without arithmetic (the others: ``catalogue.py``).
Their VJPs route the gradient back to where each element came from.
"""
from __future__ import annotations

import itertools

import numpy as np

from minigrad.checks import mismatch
from minigrad.engine import Tensor
from minigrad.ops import as_tensor, as_tensors, boolean_mask, normalize_axes, normalize_axis, pair


def _data(i):
    return i.data if isinstance(i, Tensor) else i


def reshape(x, shape) -> Tensor:
    """Same elements, new shape. The VJP reshapes back."""
    x = as_tensor(x)
    try:
        out = x.data.reshape(shape)
    except ValueError:
        raise ValueError(f"reshape: cannot reshape {x.shape} ({x.size} elements) into "
                         f"{tuple(np.atleast_1d(shape).tolist())}") from None
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g.reshape(x.shape),), "reshape")


def transpose(x, axes=None) -> Tensor:
    """Permute axes (reversed when ``axes`` is None); the VJP applies the inverse permutation."""
    x = as_tensor(x)
    axes = range(x.ndim)[::-1] if axes is None else axes
    axes = tuple(normalize_axis(a, x.shape, "transpose") for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"transpose: axes {axes} are not a permutation of the axes of shape "
                         f"{x.shape}")
    inverse = tuple(np.argsort(axes).tolist())
    return Tensor._from_op(x.data.transpose(axes), (x,),
                           lambda xp, g, out, x: (g.transpose(inverse),), "transpose")


def swapaxes(x, axis1: int, axis2: int) -> Tensor:
    """Exchange two axes. Its own inverse."""
    x = as_tensor(x)
    axis1, axis2 = (normalize_axis(a, x.shape, "swapaxes") for a in (axis1, axis2))
    out = np.swapaxes(x.data, axis1, axis2)
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g.swapaxes(axis1, axis2),), "swapaxes")


def expand_dims(x, axis) -> Tensor:
    """Insert axes of size 1 (``axis`` counts the result's axes, as in NumPy)."""
    x = as_tensor(x)
    axis = normalize_axes(axis, x.shape, "expand_dims",
                          x.ndim + (1 if np.ndim(axis) == 0 else len(axis)))
    return Tensor._from_op(np.expand_dims(x.data, axis), (x,),
                           lambda xp, g, out, x: (g.reshape(x.shape),), "expand_dims")


def broadcast_to(x, shape) -> Tensor:
    """Stretch to ``shape`` by NumPy's rules. The engine sums the gradient back."""
    x = as_tensor(x)
    try:
        out = np.broadcast_to(x.data, shape)
    except ValueError:
        raise ValueError(f"broadcast_to: shape {x.shape} cannot be broadcast to "
                         f"{tuple(shape)}") from None
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g,), "broadcast_to")


def _join(op: str, fn, tensors: list, axis: int, rule: str) -> np.ndarray:
    """``fn`` (np.concatenate or np.stack) of the tensors' data, or an error naming the shapes."""
    try:
        return fn([t.data for t in tensors], axis=axis)
    except ValueError:
        raise ValueError(f"{op}: shapes {[t.shape for t in tensors]} {rule}") from None


def concatenate(tensors, axis: int = 0) -> Tensor:
    """Join along an existing axis. The VJP slices the gradient at the same boundaries."""
    tensors = as_tensors("concatenate", tensors)
    axis = normalize_axis(axis, tensors[0].shape, "concatenate")
    out = _join("concatenate", np.concatenate, tensors, axis, f"differ outside axis {axis}")
    ends = itertools.accumulate(t.shape[axis] for t in tensors)
    pieces = [(slice(None),) * axis + (slice(end - t.shape[axis], end),)
              for t, end in zip(tensors, ends)]
    return Tensor._from_op(out, tuple(tensors), lambda xp, g, out, *xs: tuple(g[p] for p in pieces),
                           "concatenate")


def stack(tensors, axis: int = 0) -> Tensor:
    """Join along a new axis. The VJP takes each slice of the gradient back."""
    tensors = as_tensors("stack", tensors)
    axis = normalize_axis(axis, tensors[0].shape, "stack", tensors[0].ndim + 1)
    out = _join("stack", np.stack, tensors, axis, "must all be equal")
    pieces = [(slice(None),) * axis + (i,) for i in range(len(tensors))]
    return Tensor._from_op(out, tuple(tensors), lambda xp, g, out, *xs: tuple(g[p] for p in pieces),
                           "stack")


def getitem(x, index) -> Tensor:
    """``x[index]``. The VJP scatters g into zeros like x (an element picked twice gets both)."""
    x = as_tensor(x)
    index = tuple(map(_data, index)) if isinstance(index, tuple) else _data(index)
    try:
        out = x.data[index]
    except IndexError as e:
        raise IndexError(f"getitem: index {index!r} does not fit shape {x.shape}: {e}") from None
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (xp.scatter(g, index, x.shape),),
                           "getitem")


def scatter(values, index, shape) -> Tensor:
    """Zeros of ``shape`` with ``values`` added at ``index``: getitem's VJP; its VJP is getitem."""
    values = as_tensor(values)
    try:
        out = scatter_array(values.data, index, tuple(shape))
    except (IndexError, ValueError) as e:
        raise ValueError(f"scatter: values of shape {values.shape} do not fit index {index!r} "
                         f"into shape {tuple(shape)}: {e}") from None
    return Tensor._from_op(out, (values,), lambda xp, g, out, values: (g[index],), "scatter")


BASIC = (int, np.integer, slice, type(None), type(Ellipsis))  # indices that pick each element once


def scatter_array(values: np.ndarray, index, shape: tuple) -> np.ndarray:
    """``scatter`` on arrays: assignment for basic indices, else ``np.add.at`` (repeats add up)."""
    out = np.zeros(shape, dtype=values.dtype)
    if all(isinstance(i, BASIC) for i in (index if isinstance(index, tuple) else (index,))):
        out[index] = values
    else:
        np.add.at(out, index, values)
    return out


def where(condition, a, b) -> Tensor:
    """Elementwise ``a`` where ``condition`` else ``b``. Each side gets g where it was chosen."""
    cond = boolean_mask("where", "condition", condition)
    a, b = pair(a, b)
    try:
        out = np.where(cond, a.data, b.data)
    except ValueError:
        raise mismatch("where", "condition", cond.shape, "a", a.shape, "b", b.shape,
                       why="could not be broadcast together") from None
    return Tensor._from_op(out, (a, b), lambda xp, g, out, a, b: (
        xp.where(cond, g, 0), xp.where(cond, 0, g)), "where")


def masked_fill(x, mask, value: float) -> Tensor:
    """``value`` where ``mask`` is True (PyTorch's polarity), ``x`` elsewhere (and its gradient)."""
    x = as_tensor(x)
    mask = boolean_mask("masked_fill", "mask", mask, x.shape)
    out = np.where(mask, np.asarray(value, dtype=x.dtype), x.data)
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (xp.where(mask, 0, g),), "masked_fill")
