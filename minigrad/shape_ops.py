"""Ops that move, select or combine elements without arithmetic: the lesson's shape ops, read
after ``ops.py`` (``tril``, ``pad``, ``tile`` and the others no model uses: ``catalogue.py``).

Their VJPs route the gradient back to where each element came from: a reshape is undone by
reshaping, a transpose by the inverse permutation, a selection by scattering (adding) the
gradient into zeros of the input's shape -- and a scatter by selecting, so ``getitem`` and
``scatter`` are each other's VJP. Like every VJP they run on arrays or on Tensors (``xp.py``).
"""
from __future__ import annotations

import itertools

import numpy as np

from minigrad.coerce import (as_tensor, as_tensors, boolean_mask, normalize_axes, normalize_axis,
                             pair, reduce_axes)
from minigrad.engine import Tensor


def _data(i):
    return i.data if isinstance(i, Tensor) else i


def reshape(x, shape) -> Tensor:
    """Same elements, new shape. The VJP reshapes back."""
    x = as_tensor(x)
    try:
        out = x.data.reshape(shape)
    except ValueError:
        raise ValueError(f"reshape: cannot reshape a tensor of shape {x.shape} "
                         f"({x.size} elements) into shape {tuple(np.atleast_1d(shape).tolist())}") from None
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g.reshape(x.shape),), "reshape")


def _check_permutation(x, axes) -> tuple:
    """``transpose``'s axes, normalized, and a permutation of x's axes."""
    axes = tuple(normalize_axis(a, x.shape, "transpose") for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"transpose: axes {axes} are not a permutation of the {x.ndim} "
                         f"axes of a tensor of shape {x.shape}")
    return axes


def transpose(x, axes=None) -> Tensor:
    """Permute axes (reverse them when ``axes`` is None). The VJP applies the inverse
    permutation, argsort(axes)."""
    x = as_tensor(x)
    axes = tuple(range(x.ndim))[::-1] if axes is None else _check_permutation(x, axes)
    inverse = tuple(sorted(range(x.ndim), key=axes.__getitem__))
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
    inserted = 1 if np.ndim(axis) == 0 else len(axis)
    axis = normalize_axes(axis, x.shape, "expand_dims", x.ndim + inserted)
    return Tensor._from_op(np.expand_dims(x.data, axis), (x,),
                           lambda xp, g, out, x: (g.reshape(x.shape),), "expand_dims")


def squeeze(x, axis=None) -> Tensor:
    """Remove axes of size 1 (all of them when ``axis`` is None). A 0-d tensor takes axis 0
    or −1 (nothing to remove), and an axis whose size is not 1 raises, both as NumPy."""
    x = as_tensor(x)
    if axis is not None:
        axis = reduce_axes(axis, x.shape, "squeeze")
    try:
        out = np.squeeze(x.data, axis)
    except ValueError:
        raise ValueError(f"squeeze: axis {axis} of shape {x.shape} does not have size 1") from None
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g.reshape(x.shape),), "squeeze")


def broadcast_to(x, shape) -> Tensor:
    """Stretch to ``shape`` by NumPy's rules. The engine sums the gradient back."""
    x = as_tensor(x)
    try:
        out = np.broadcast_to(x.data, shape)
    except ValueError:
        raise ValueError(f"broadcast_to: shape {x.shape} cannot be broadcast to {tuple(shape)}") from None
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g,), "broadcast_to")


def _some_tensors(op, tensors) -> list:
    """The inputs of a join, as Tensors (``as_tensors``): at least one."""
    tensors = as_tensors(tensors)
    if not tensors:
        raise ValueError(f"{op}: needs at least one tensor")
    return tensors


def concatenate(tensors, axis: int = 0) -> Tensor:
    """Join along an existing axis. The VJP splits the gradient at the same boundaries."""
    tensors = _some_tensors("concatenate", tensors)
    axis = normalize_axis(axis, tensors[0].shape, "concatenate")
    try:
        out = np.concatenate([t.data for t in tensors], axis=axis)
    except ValueError:
        raise ValueError(f"concatenate: shapes {[t.shape for t in tensors]} do not match "
                         f"outside axis {axis}") from None
    bounds = list(itertools.accumulate(t.shape[axis] for t in tensors))[:-1]  # where each ends
    return Tensor._from_op(out, tuple(tensors),
                           lambda xp, g, out, *xs: tuple(xp.split(g, bounds, axis)), "concatenate")


def stack(tensors, axis: int = 0) -> Tensor:
    """Join along a new axis. The VJP takes each slice of the gradient back."""
    tensors = _some_tensors("stack", tensors)
    axis = normalize_axis(axis, tensors[0].shape, "stack", tensors[0].ndim + 1)
    try:
        out = np.stack([t.data for t in tensors], axis=axis)
    except ValueError:
        raise ValueError(f"stack: all shapes must be equal, got {[t.shape for t in tensors]}") from None
    return Tensor._from_op(out, tuple(tensors),
                           lambda xp, g, out, *xs: tuple(xp.unstack(g, axis)), "stack")


def _split_bounds(shape, axis, indices_or_sections) -> list:
    """Where ``split``'s pieces begin and end along ``axis``, by NumPy's rules: k equal sections
    (k must divide the length), or the given split indices (clipped to the length)."""
    n = shape[axis]
    if np.ndim(indices_or_sections) != 0:
        return [0] + [min(int(i), n) for i in indices_or_sections] + [n]
    k = int(indices_or_sections)
    if k <= 0 or n % k:
        raise ValueError(f"split: axis {axis} of shape {shape} does not divide into {k} "
                         f"equal sections")
    return [i * (n // k) for i in range(k + 1)]  # n = 0 gives k empty pieces, as NumPy


def split(x, indices_or_sections, axis: int = 0) -> list:
    """Split into pieces along ``axis`` (NumPy's rules); each piece is a slice of ``x``."""
    x = as_tensor(x)
    axis = normalize_axis(axis, x.shape, "split")
    bounds = _split_bounds(x.shape, axis, indices_or_sections)
    before = (slice(None),) * axis
    return [getitem(x, before + (slice(lo, hi),)) for lo, hi in zip(bounds[:-1], bounds[1:])]


def getitem(x, index) -> Tensor:
    """``x[index]`` with slices, ints, integer arrays or boolean masks (Tensors in the index
    read as their data). The VJP scatters ``g`` into zeros shaped like ``x`` (``scatter``); with
    integer arrays the same element may be picked several times, and its gradients add up."""
    x = as_tensor(x)
    index = tuple(map(_data, index)) if isinstance(index, tuple) else _data(index)
    try:
        out = x.data[index]
    except IndexError as e:
        raise IndexError(f"getitem: index {index!r} does not fit a tensor of shape {x.shape}: {e}") from None
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (xp.scatter(g, index, x.shape),),
                           "getitem")


def scatter(values, index, shape) -> Tensor:
    """Zeros of ``shape`` with ``values`` added at ``index`` (repeated indices add up): the
    adjoint of ``getitem``, whose VJP it is, and whose VJP ``g[index]`` is getitem's."""
    values = as_tensor(values)
    shape = tuple(shape)
    try:
        out = scatter_array(values.data, index, shape)
    except (IndexError, ValueError) as e:
        raise ValueError(f"scatter: values of shape {values.shape} do not fit index {index!r} "
                         f"into shape {shape}: {e}") from None
    return Tensor._from_op(out, (values,), lambda xp, g, out, values: (g[index],), "scatter")


def scatter_array(values: np.ndarray, index, shape: tuple) -> np.ndarray:
    """Zeros of ``shape`` with ``values`` added at ``index`` (repeated indices add up): an
    assignment for basic indices (each element picked once), ``np.add.at`` otherwise."""
    out = np.zeros(shape, dtype=values.dtype)
    basic = all(isinstance(i, (int, np.integer, slice)) or i is None or i is Ellipsis
                for i in (index if isinstance(index, tuple) else (index,)))
    if basic:
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
        raise ValueError(f"where: condition {cond.shape}, a {a.shape} and b {b.shape} "
                         f"could not be broadcast together") from None
    return Tensor._from_op(out, (a, b), lambda xp, g, out, a, b: (xp.where(cond, g, 0),
                                                                 xp.where(cond, 0, g)), "where")


def _check_fill_mask(mask, shape) -> np.ndarray:
    """``masked_fill``'s mask broadcasts to the tensor's shape without enlarging it."""
    try:
        full = np.broadcast_shapes(mask.shape, shape)
    except ValueError:
        raise ValueError(f"masked_fill: mask of shape {mask.shape} does not broadcast to "
                         f"the tensor's shape {shape}") from None
    if full != shape:
        raise ValueError(f"masked_fill: mask of shape {mask.shape} would enlarge the tensor's "
                         f"shape {shape} to {full}")
    return mask


def masked_fill(x, mask, value: float) -> Tensor:
    """``value`` where ``mask`` is True, ``x`` elsewhere (PyTorch's polarity: True = fill).
    The filled positions get zero gradient."""
    x = as_tensor(x)
    mask = _check_fill_mask(boolean_mask("masked_fill", "mask", mask), x.shape)
    out = np.where(mask, np.asarray(value, dtype=x.dtype), x.data)
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (xp.where(mask, 0, g),), "masked_fill")
