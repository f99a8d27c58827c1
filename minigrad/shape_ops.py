"""Ops that move, select or combine elements without arithmetic.

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


def reshape(x, shape) -> Tensor:
    """Same elements, new shape. The VJP reshapes back."""
    x = as_tensor(x)
    try:
        out = x.data.reshape(shape)
    except ValueError:
        raise ValueError(f"reshape: cannot reshape a tensor of shape {x.shape} "
                         f"({x.size} elements) into shape {tuple(np.atleast_1d(shape).tolist())}") from None
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g.reshape(x.shape),), "reshape")


def transpose(x, axes=None) -> Tensor:
    """Permute axes (reverse them when ``axes`` is None). The VJP applies the inverse permutation."""
    x = as_tensor(x)
    if axes is None:
        axes = tuple(range(x.ndim))[::-1]
    else:
        axes = tuple(normalize_axis(a, x.shape, "transpose") for a in axes)
        if sorted(axes) != list(range(x.ndim)):
            raise ValueError(f"transpose: axes {axes} are not a permutation of the {x.ndim} "
                             f"axes of a tensor of shape {x.shape}")
    # the inverse permutation, argsort(axes)
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


def concatenate(tensors, axis: int = 0) -> Tensor:
    """Join along an existing axis. The VJP splits the gradient at the same boundaries."""
    tensors = as_tensors(tensors)
    if not tensors:
        raise ValueError("concatenate: needs at least one tensor")
    axis = normalize_axis(axis, tensors[0].shape, "concatenate")
    try:
        out = np.concatenate([t.data for t in tensors], axis=axis)
    except ValueError:
        raise ValueError(f"concatenate: shapes {[t.shape for t in tensors]} do not match "
                         f"outside axis {axis}") from None
    # the split points: where each input ends, but the last
    bounds = list(itertools.accumulate(t.shape[axis] for t in tensors))[:-1]
    return Tensor._from_op(out, tuple(tensors),
                           lambda xp, g, out, *xs: tuple(xp.split(g, bounds, axis)), "concatenate")


def stack(tensors, axis: int = 0) -> Tensor:
    """Join along a new axis. The VJP takes each slice of the gradient back."""
    tensors = as_tensors(tensors)
    if not tensors:
        raise ValueError("stack: needs at least one tensor")
    axis = normalize_axis(axis, tensors[0].shape, "stack", tensors[0].ndim + 1)
    try:
        out = np.stack([t.data for t in tensors], axis=axis)
    except ValueError:
        raise ValueError(f"stack: all shapes must be equal, got {[t.shape for t in tensors]}") from None
    return Tensor._from_op(out, tuple(tensors),
                           lambda xp, g, out, *xs: tuple(xp.unstack(g, axis)), "stack")


def split(x, indices_or_sections, axis: int = 0) -> list:
    """Split into pieces along ``axis`` (NumPy's rules); each piece is a slice of ``x``."""
    x = as_tensor(x)
    axis = normalize_axis(axis, x.shape, "split")
    n = x.shape[axis]
    if np.ndim(indices_or_sections) == 0:
        k = int(indices_or_sections)
        if k <= 0 or n % k:
            raise ValueError(f"split: axis {axis} of shape {x.shape} does not divide into {k} "
                             f"equal sections")
        bounds = [i * (n // k) for i in range(k + 1)]  # n = 0 gives k empty pieces, as NumPy
    else:
        bounds = [0] + [min(int(i), n) for i in indices_or_sections] + [n]
    index = [slice(None)] * x.ndim
    pieces = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        index[axis] = slice(lo, hi)
        pieces.append(getitem(x, tuple(index)))
    return pieces


def getitem(x, index) -> Tensor:
    """``x[index]`` with slices, ints, integer arrays or boolean masks.

    The VJP scatters ``g`` into zeros shaped like ``x`` (``scatter``); with integer arrays
    the same element may be picked several times, and its gradients then add up.
    """
    x = as_tensor(x)
    if isinstance(index, Tensor):
        index = index.data
    elif isinstance(index, tuple):
        index = tuple(i.data if isinstance(i, Tensor) else i for i in index)
    try:
        out = x.data[index]
    except IndexError as e:
        raise IndexError(f"getitem: index {index!r} does not fit a tensor of shape {x.shape}: {e}") from None
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (xp.scatter(g, index, x.shape),),
                           "getitem")


def scatter(values, index, shape) -> Tensor:
    """Zeros of ``shape`` with ``values`` added at ``index``; repeated indices add up.

    The adjoint of ``getitem``: ``scatter(g, index, x.shape)`` is getitem's VJP, and the VJP
    of ``scatter`` picks ``g[index]`` back out, so each is the other's derivative.
    """
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


def masked_fill(x, mask, value: float) -> Tensor:
    """``value`` where ``mask`` is True, ``x`` elsewhere (PyTorch's polarity: True = fill).

    The filled positions get zero gradient.
    """
    x = as_tensor(x)
    mask = boolean_mask("masked_fill", "mask", mask)
    try:
        out = np.where(mask, np.asarray(value, dtype=x.dtype), x.data)
    except ValueError:
        raise ValueError(f"masked_fill: mask of shape {mask.shape} does not broadcast to "
                         f"the tensor's shape {x.shape}") from None
    if out.shape != x.shape:
        raise ValueError(f"masked_fill: mask of shape {mask.shape} would enlarge the tensor's "
                         f"shape {x.shape} to {out.shape}")
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (xp.where(mask, 0, g),), "masked_fill")


def _triangle(op, fn, x, k):
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"{op}: needs at least 2 dimensions (a matrix, or a batch of them), "
                         f"got shape {x.shape}")
    keep = fn(np.ones(x.shape[-2:], bool), k)  # (rows, cols): a constant mask
    return Tensor._from_op(fn(x.data, k), (x,), lambda xp, g, out, x: (g * keep,), op)


def tril(x, k: int = 0) -> Tensor:
    """The lower triangle of the last two axes: elements with col − row ≤ k, zeros above.
    d/dx = the same mask."""
    return _triangle("tril", np.tril, x, k)


def triu(x, k: int = 0) -> Tensor:
    """The upper triangle of the last two axes: elements with col − row ≥ k, zeros below."""
    return _triangle("triu", np.triu, x, k)


def take_along_axis(x, indices, axis) -> Tensor:
    """``np.take_along_axis`` (PyTorch's ``gather``): out[..., i, ...] = x[..., indices[..., i,
    ...], ...] along ``axis`` (None: of the flattened x). A getitem with the index spelled out
    for every axis, so its VJP is getitem's: g scattered (added) back where each element came
    from."""
    x = as_tensor(x)
    idx = np.asarray(indices.data if isinstance(indices, Tensor) else indices)
    if idx.dtype.kind not in "iu":
        raise ValueError(f"take_along_axis: indices must be integers, got dtype {idx.dtype}")
    if axis is None:
        x, axis = reshape(x, -1), 0
    axis = normalize_axis(axis, x.shape, "take_along_axis")
    if idx.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices of shape {idx.shape} need as many axes as "
                         f"x of shape {x.shape}")
    index = tuple(idx if d == axis else
                  np.arange(n).reshape((-1,) + (1,) * (x.ndim - d - 1)) for d, n in enumerate(x.shape))
    return getitem(x, index)


def pad(x, pad_width, mode: str = "constant", constant_values=0) -> Tensor:
    """``np.pad`` with a constant: ``pad_width`` is NumPy's ((before, after) per axis, or one
    pair or number for all). The VJP slices the original block back out of g."""
    x = as_tensor(x)
    if mode != "constant":
        raise ValueError(f"pad: only mode='constant' is supported, got {mode!r}")
    widths = np.asarray(pad_width, dtype=np.intp)
    widths = np.broadcast_to(widths if widths.size else widths.reshape(0, 2), (x.ndim, 2))
    if (widths < 0).any():
        raise ValueError(f"pad: pad widths must be ≥ 0, got {pad_width!r}")
    # a 0-d x has no axis to pad: NumPy returns it unchanged
    out = np.pad(x.data, widths, constant_values=constant_values) if x.ndim else x.data.copy()
    block = tuple(slice(int(b), int(b) + n) for (b, _), n in zip(widths, x.shape))
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g[block],), "pad")


def repeat(x, repeats, axis=None) -> Tensor:
    """``np.repeat``: each element repeated along ``axis`` (None: of the flattened x). A
    getitem that picks element i ``repeats[i]`` times, so the VJP adds their gradients."""
    x = as_tensor(x)
    if axis is None:
        x, axis = reshape(x, -1), 0
    axis = normalize_axis(axis, x.shape, "repeat")
    picks = np.repeat(np.arange(x.shape[axis]), repeats)
    return getitem(x, (slice(None),) * axis + (picks,))


def tile(x, reps) -> Tensor:
    """``np.tile``: x repeated ``reps`` times along each axis (shapes aligned from the right,
    as NumPy). A getitem of ``arange(n)`` tiled on every axis, so the VJP sums the copies."""
    x = as_tensor(x)
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    x = reshape(x, (1,) * (len(reps) - x.ndim) + x.shape)
    reps = (1,) * (x.ndim - len(reps)) + reps
    return getitem(x, np.ix_(*[np.tile(np.arange(n), r) for n, r in zip(x.shape, reps)]))
