"""The catalogue: the ops that no model, attention module, walkthrough or exercise calls.

The lesson (``ops.py``, ``shape_ops.py``, ``functional.py``, ``nn_ops.py``) holds the ops the models
run; NumPy's and PyTorch's other functions live here, written in the same way (a NumPy forward and
an ``xp`` VJP, ``tensor.py``, or composed from lesson ops), so each can be differentiated any number
of times. Exported from ``minigrad`` (activations and losses also as ``functional.<name>``), tested
by the op table (``gradcheck_cases.py``). Sections: elementwise, reductions, products, shape,
activations, losses.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from minigrad.checks import mismatch
from minigrad.engine import Tensor
from minigrad.ops import (_bool_error, as_tensor, as_tensors, check_not_empty, class_targets,
                          log_softmax_array, matmul, mul, normalize_axes, normalize_axis, pair,
                          power, relu, sigmoid, softmax_axis)


# ---- elementwise -------------------------------------------------------------------------------

def abs(x) -> Tensor:
    """|x|. d/dx = sign(x), and 0 at the kink (as PyTorch)."""
    x = as_tensor(x)
    sign = np.sign(x.data)  # a constant: its own derivative is 0, under create_graph too
    return Tensor._from_op(np.abs(x.data), (x,), lambda xp, g, out, x: (g * sign,), "abs")


def rpow(base, x) -> Tensor:
    """base ** x for a scalar base ≥ 0 (a negative base has no real log). d/dx = out · log(base);
    at base 0 it is 0 for x ≥ 0 (as PyTorch), not 0 · (−∞) = NaN."""
    if isinstance(base, Tensor) or np.ndim(base) != 0:
        return power(base, x)
    x = as_tensor(x)
    b = np.asarray(base).item()
    if b < 0:
        raise ValueError(f"rpow: base {b} is negative: base ** x = exp(x · log(base)) needs "
                         f"the log of the base, which is undefined (not real) for base < 0")
    out = b ** x.data
    log_b = math.log(b) if b else np.where(x.data >= 0, 0, -math.inf).astype(out.dtype)
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g * (out * log_b),), "rpow")


def sign(x) -> Tensor:
    """sign(x): −1, 0 or 1, as NumPy. Piecewise constant, so d/dx = 0 everywhere (at 0 too,
    as PyTorch); int inputs give NumPy's int result, without gradient."""
    x = as_tensor(x)
    return Tensor._from_op(np.sign(x.data), (x,), lambda xp, g, out, x: (None,), "sign")


def sin(x) -> Tensor:
    """sin x. d/dx = cos x."""
    x = as_tensor(x)
    return Tensor._from_op(np.sin(x.data), (x,), lambda xp, g, out, x: (g * xp.cos(x),), "sin")


def cos(x) -> Tensor:
    """cos x. d/dx = −sin x."""
    x = as_tensor(x)
    return Tensor._from_op(np.cos(x.data), (x,), lambda xp, g, out, x: (-g * xp.sin(x),), "cos")


def log1p(x) -> Tensor:
    """log(1 + x), accurate for small x. d/dx = 1 / (1 + x)."""
    x = as_tensor(x)
    return Tensor._from_op(np.log1p(x.data), (x,), lambda xp, g, out, x: (g / (1 + x),), "log1p")


def expm1(x) -> Tensor:
    """e^x − 1, accurate for small x. d/dx = e^x = out + 1, so the VJP reuses the output."""
    x = as_tensor(x)
    return Tensor._from_op(np.expm1(x.data), (x,), lambda xp, g, out, x: (g * (out + 1),), "expm1")


_erf = np.vectorize(math.erf, otypes=[np.float64])


def erf(x) -> Tensor:
    """erf(x) = (2/√π) ∫₀ˣ e^(−t²) dt (``math.erf`` elementwise). d/dx = (2/√π) e^(−x²)."""
    x = as_tensor(x)
    out = _erf(x.data).astype(np.result_type(x.data.dtype, np.float16))  # float32 stays float32
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (
        g * (2 / math.sqrt(math.pi)) * xp.exp(-(x * x)),), "erf")


def _pick(op, fn, a, b) -> Tensor:
    """maximum/minimum: g goes to the operand ``fn`` picked; a tie splits it in half (as
    PyTorch), so each side gets g/2. The weights are constants, under create_graph too."""
    a, b = pair(a, b)
    try:
        out = fn(a.data, b.data)
    except ValueError:
        raise mismatch(op, "a", a.shape, "b", b.shape,
                       why="could not be broadcast together") from None
    if out.dtype.kind == "b":
        raise _bool_error(op, a, b)
    wa = ((fn(a.data, b.data) == a.data) * 1.0 - (a.data == b.data) * 0.5).astype(out.dtype)
    return Tensor._from_op(out, (a, b), lambda xp, g, out, a, b: (g * wa, g * (1 - wa)), op)


def maximum(a, b) -> Tensor:
    """Elementwise max(a, b), broadcasting. d/da = 1 where a > b, 0 where a < b, ½ at a tie
    (PyTorch's choice; NumPy has no gradient)."""
    return _pick("maximum", np.maximum, a, b)


def minimum(a, b) -> Tensor:
    """Elementwise min(a, b), broadcasting. d/da = 1 where a < b, 0 where a > b, ½ at a tie."""
    return _pick("minimum", np.minimum, a, b)


def clip(x, lo=None, hi=None) -> Tensor:
    """x clipped to [lo, hi] (either may be None). d/dx = 1 for lo ≤ x ≤ hi, else 0: at the
    bounds themselves 1, as PyTorch's clamp."""
    x = as_tensor(x)
    if lo is None and hi is None:
        raise ValueError("clip: give lo, hi or both (as np.clip needs one of them)")
    out = np.clip(x.data, lo, hi)
    inside = (True if lo is None else x.data >= lo) & (True if hi is None else x.data <= hi)
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g * inside,), "clip")


# ---- reductions ---------------------------------------------------------------------------

def logsumexp(x, axis=None, keepdims: bool = False) -> Tensor:
    """log Σ e^x over ``axis``, stable (``ops.log_softmax_array``).
    d/dx_i = e^(x_i − out) = softmax(x)_i."""
    x = as_tensor(x)
    axes = normalize_axes(axis, x.shape, "logsumexp")
    check_not_empty("logsumexp", x.shape, axes)
    lse = log_softmax_array(x.data, axes)[1]
    out = lse if keepdims else np.squeeze(lse, axes)
    def vjp(xp, g, out, x):
        with np.errstate(invalid="ignore"):  # a row of −∞: e^(−∞ − (−∞)) is NaN, read as 0
            p = xp.nan_to_zero(xp.exp(x - out.reshape(lse.shape)))
        return (p * g.reshape(lse.shape),)
    return Tensor._from_op(out, (x,), vjp, "logsumexp")


def _extremum(op, fn, x, axis, keepdims) -> Tensor:
    """max or min over ``axis``: the gradient goes to the elements equal to the result; when
    several tie, they share it equally (each gets g / count), as PyTorch's ``amax``/``amin``."""
    x = as_tensor(x)
    axes = normalize_axes(axis, x.shape, op)
    check_not_empty(op, x.shape, axes)
    top = fn(x.data, axis=axes, keepdims=True)
    out = top if keepdims else np.squeeze(top, axes)

    def vjp(xp, g, out, x):
        winners = x == top  # a boolean array: a constant, under create_graph too
        return (winners * (g.reshape(top.shape) / winners.sum(axis=axes, keepdims=True)),)
    return Tensor._from_op(out, (x,), vjp, op)


def max(x, axis=None, keepdims: bool = False) -> Tensor:
    """Maximum over ``axis``. Ties share the gradient equally (``_extremum``), so the
    gradient of max is then that of the mean of the tied elements."""
    return _extremum("max", np.max, x, axis, keepdims)


def min(x, axis=None, keepdims: bool = False) -> Tensor:
    """Minimum over ``axis``. Ties share the gradient equally, as in ``max``."""
    return _extremum("min", np.min, x, axis, keepdims)


def prod(x, axis=None, keepdims: bool = False) -> Tensor:
    """Π over ``axis``. d/dx_i = Π_{j≠i} x_j: the product of the others, computed as such (not
    out / x_i), so zeros in x give exact gradients and never 0/0. The VJP moves the reduced axes
    last, flattened to n, and takes the product of an (n, n) copy whose row i has x_i replaced
    by 1: O(n²), but itself a ``prod``, so it can be differentiated again."""
    x = as_tensor(x)
    axes = normalize_axes(axis, x.shape, "prod")
    total = np.prod(x.data, axis=axes, keepdims=True)                 # the reduced axes kept, as 1s
    out = total if keepdims else total.squeeze(axes)
    rest = tuple(a for a in range(x.ndim) if a not in axes)
    perm = rest + axes
    inverse = tuple(sorted(range(x.ndim), key=perm.__getitem__))
    n = math.prod([x.shape[a] for a in axes])
    eye = np.eye(n, dtype=bool)

    def vjp(xp, g, out, x):
        moved = x.transpose(perm).reshape(tuple(x.shape[a] for a in rest) + (n,))  # (..., n)
        others = xp.where(eye, 1, moved[..., None, :])                          # (..., n, n)
        po = xp.prod(others, -1).reshape(tuple(x.shape[a] for a in perm)).transpose(inverse)
        return (po * g.reshape(total.shape),)
    return Tensor._from_op(out, (x,), vjp, "prod")


def _centred_grad(x, g, axes, n, ddof):
    """∂L/∂x of var = Σ (x − x̄)² / (n − ddof): g · 2 (x − x̄) / (n − ddof) (the x̄ term drops
    out since Σ (x − x̄) = 0). NaN when n ≤ ddof, as the variance itself."""
    factor = 2 / (n - ddof) if n > ddof else math.nan
    mean = x.mean(axis=axes, keepdims=True)                              # the reduced axes as 1s
    return (x - mean) * (g.reshape(mean.shape) * factor)


def var(x, axis=None, ddof: int = 0, keepdims: bool = False) -> Tensor:
    """Variance Σ (x − x̄)² / (n − ddof) over ``axis``, with NumPy's default ddof = 0
    (PyTorch's default is the unbiased ddof = 1: pass ddof=1).
    d/dx_i = 2 (x_i − x̄) / (n − ddof)."""
    x = as_tensor(x)
    axes = normalize_axes(axis, x.shape, "var")
    out = np.var(x.data, axis=axes, ddof=ddof, keepdims=keepdims)
    n = math.prod([x.shape[a] for a in axes])
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (
        _centred_grad(x, g, axes, n, ddof),), "var")


def std(x, axis=None, ddof: int = 0, keepdims: bool = False) -> Tensor:
    """Standard deviation √var (NumPy's default ddof = 0). d/dx = (d var/dx) / (2 std); where
    std = 0 (all equal) the gradient is 0, as PyTorch's, not 0/0."""
    x = as_tensor(x)
    axes = normalize_axes(axis, x.shape, "std")
    out = np.std(x.data, axis=axes, ddof=ddof, keepdims=keepdims)
    n = math.prod([x.shape[a] for a in axes])

    def vjp(xp, g, out, x):
        zero = out == 0  # a constant mask; the safe divisor keeps 0/0 out of both orders
        half = xp.where(zero, 0, g / (2 * xp.where(zero, 1, out)))
        return (_centred_grad(x, half, axes, n, ddof),)
    return Tensor._from_op(out, (x,), vjp, "std")


def _arg(op, fn, x, axis, keepdims) -> Tensor:
    x = as_tensor(x)
    if axis is not None and not (x.ndim == 0 and axis in (0, -1)):
        axis = normalize_axis(axis, x.shape, op)
    return Tensor._from_op(fn(x.data, axis=axis, keepdims=keepdims), (), None, op)


def argmax(x, axis=None, keepdims: bool = False) -> Tensor:
    """Index of the maximum along ``axis`` (of the flattened x for None), as NumPy: an int
    tensor without gradient. Ties give the first index (NumPy and PyTorch)."""
    return _arg("argmax", np.argmax, x, axis, keepdims)


def argmin(x, axis=None, keepdims: bool = False) -> Tensor:
    """Index of the minimum along ``axis``, as ``argmax``."""
    return _arg("argmin", np.argmin, x, axis, keepdims)


def cumsum(x, axis=None) -> Tensor:
    """Running sum along ``axis`` (of the flattened x for None, as NumPy). Element i of the
    input appears in every out_j with j ≥ i, so its gradient is Σ_{j≥i} g_j: the cumsum of
    g reversed along the axis, reversed back."""
    x = as_tensor(x)
    if axis is not None:
        axis = 0 if x.ndim == 0 and axis in (0, -1) else normalize_axis(axis, x.shape, "cumsum")
    out = np.cumsum(x.data, axis=axis)
    a = 0 if axis is None else axis
    flip = (slice(None),) * a + (slice(None, None, -1),)
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (
        xp.cumsum(g[flip], a)[flip].reshape(x.shape),), "cumsum")


# ---- products ---------------------------------------------------------------------------------

def outer(a, b) -> Tensor:
    """The outer product of the flattened a and b: out_ij = a_i b_j (``np.outer``). Composed:
    a column times a row, so its VJP is ``mul``'s (each side's gradient summed over the other)."""
    a, b = pair(a, b)
    return mul(a.reshape(-1)[:, None], b.reshape(-1)[None, :])


def tensordot(a, b, axes=2) -> Tensor:
    """``np.tensordot``: sum a_(free_a, k) b_(k, free_b) over the paired ``axes`` (an int n:
    a's last n with b's first n; or two sequences). Composed as NumPy computes it: move the
    summed axes together, flatten to two matrices, one ``matmul``, reshape."""
    a, b = pair(a, b)
    if np.ndim(axes) == 0:
        n = int(axes)
        axes_a, axes_b = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        axes_a, axes_b = ([axes_x] if np.ndim(axes_x) == 0 else list(axes_x) for axes_x in axes)
    axes_a = [normalize_axis(i, a.shape, "tensordot") for i in axes_a]
    axes_b = [normalize_axis(i, b.shape, "tensordot") for i in axes_b]
    if [a.shape[i] for i in axes_a] != [b.shape[i] for i in axes_b]:
        raise ValueError(f"tensordot: the summed axes of shapes {a.shape} and {b.shape} differ "
                         f"in size ({axes_a} against {axes_b})")
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [i for i in range(b.ndim) if i not in axes_b]
    k = math.prod([a.shape[i] for i in axes_a])
    A = a.transpose(free_a + axes_a).reshape(-1, k) if a.ndim else a.reshape(1, 1)   # (M, K)
    B = b.transpose(axes_b + free_b).reshape(k, -1) if b.ndim else b.reshape(1, 1)   # (K, N)
    shape = tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b)
    return matmul(A, B).reshape(shape)


def _einsum_parse(subscripts: str, count: int):
    """'ij,jk->ik' as (['ij', 'jk'], 'ik'); an implicit output is NumPy's (the letters seen
    once, sorted)."""
    subscripts = subscripts.replace(" ", "")
    ins, arrow, out = subscripts.partition("->")
    ins = ins.split(",")
    if not arrow:
        letters = "".join(ins)
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if "." in subscripts or len(ins) != count:
        raise ValueError(f"einsum: {subscripts!r} needs one term per operand ({count} given) "
                         f"and no '...' (write the axes out)")
    for term in ins:
        if len(set(term)) != len(term):
            raise ValueError(f"einsum: a letter repeated within one operand ({term!r}, a "
                             f"diagonal) is not supported")
    return ins, out


def einsum(subscripts: str, *operands) -> Tensor:
    """``np.einsum`` for explicit letters (no '...', no letter twice within one operand).

    out = Σ over the letters not in the output of Π_k operand_k. The gradient of operand i is
    the same kind of sum with the subscripts swapped: einsum('out,others->in_i', g, others),
    then broadcast over the letters only operand i has (it was summed over them alone).
    """
    ops_ = as_tensors("einsum", operands)
    ins, outs = _einsum_parse(subscripts, len(ops_))
    try:
        out = np.einsum(f"{','.join(ins)}->{outs}", *[t.data for t in ops_])
    except ValueError as e:
        raise ValueError(f"einsum: {subscripts!r} does not fit shapes "
                         f"{[t.shape for t in ops_]}: {e}") from None

    def vjp(xp, g, out, *xs):
        grads = []
        for i, (term, x) in enumerate(zip(ins, xs)):
            rest = [t for j, t in enumerate(ins) if j != i]
            seen = set(outs).union(*rest)
            have = "".join(c for c in term if c in seen)
            gi = xp.einsum(f"{','.join([outs] + rest)}->{have}", g,
                           *[xs[j] for j in range(len(xs)) if j != i])
            gi = gi.reshape(tuple(n if c in seen else 1 for c, n in zip(term, x.shape)))
            grads.append(xp.broadcast_to(gi, x.shape))
        return tuple(grads)
    return Tensor._from_op(out, tuple(ops_), vjp, "einsum")


# ---- shape --------------------------------------------------------------------------------------

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


def ravel(x) -> Tensor:
    """The elements in one axis (``reshape(x, -1)``)."""
    return as_tensor(x).reshape(-1)


def squeeze(x, axis=None) -> Tensor:
    """Remove axes of size 1 (all of them when ``axis`` is None), as NumPy."""
    x = as_tensor(x)
    axis = None if axis is None else normalize_axes(axis, x.shape, "squeeze")
    try:
        out = np.squeeze(x.data, axis)
    except ValueError:
        raise ValueError(f"squeeze: axis {axis} of shape {x.shape} does not have size 1") from None
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (g.reshape(x.shape),), "squeeze")


def split(x, indices_or_sections, axis: int = 0) -> list:
    """Split into pieces along ``axis`` by NumPy's rules; each piece is a slice of x."""
    x = as_tensor(x)
    axis = normalize_axis(axis, x.shape, "split")
    try:  # NumPy's split of the indices 0 … n−1 along the axis: where each piece begins and ends
        pieces = np.split(np.arange(x.shape[axis]), indices_or_sections)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"split: axis {axis} of shape {x.shape} does not divide into "
                         f"{indices_or_sections} equal sections") from None
    except TypeError:  # NumPy's: indices that are not ints
        raise TypeError(f"split: indices_or_sections must be an int or ints, got "
                        f"{indices_or_sections!r}") from None
    before = (slice(None),) * axis
    return [x[before + (slice(p[0], p[-1] + 1) if p.size else slice(0, 0),)] for p in pieces]


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
        x, axis = x.reshape(-1), 0
    axis = normalize_axis(axis, x.shape, "take_along_axis")
    if idx.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices of shape {idx.shape} need as many axes as "
                         f"x of shape {x.shape}")
    index = tuple(idx if d == axis else
                  np.arange(n).reshape((-1,) + (1,) * (x.ndim - d - 1))
                  for d, n in enumerate(x.shape))
    return x[index]


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
    if axis is None or x.ndim == 0 and axis in (0, -1):  # a 0-d x repeats as a 1-d one (NumPy)
        x, axis = x.reshape(-1), 0
    axis = normalize_axis(axis, x.shape, "repeat")
    picks = np.repeat(np.arange(x.shape[axis]), repeats)
    return x[(slice(None),) * axis + (picks,)]


def tile(x, reps) -> Tensor:
    """``np.tile``: x repeated ``reps`` times along each axis (shapes aligned from the right,
    as NumPy). A getitem of ``arange(n)`` tiled on every axis, so the VJP sums the copies."""
    x = as_tensor(x)
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    x = x.reshape((1,) * (len(reps) - x.ndim) + x.shape)
    reps = (1,) * (x.ndim - len(reps)) + reps
    return x[np.ix_(*[np.tile(np.arange(n), r) for n, r in zip(x.shape, reps)])]


# ---- activations (also functional.<name>) -------------------------------------------------------

def elu(x, alpha: float = 1.0) -> Tensor:
    """x for x > 0, α (e^x − 1) otherwise. d/dx = 1, or α e^x = out + α (at 0: α, as PyTorch)."""
    x = as_tensor(x)
    pos = x.data > 0
    out = np.where(pos, x.data, alpha * np.expm1(np.minimum(x.data, 0)))
    return Tensor._from_op(out, (x,), lambda xp, g, out, x: (xp.where(pos, g, g * (out + alpha)),),
                           "elu")


def _sparsemax_support(z: np.ndarray, axis: int) -> tuple:
    """The support S of sparsemax(z) and |S|: the k largest z for the largest k with
    1 + k z₍ₖ₎ > Σ_{j≤k} z₍ⱼ₎, z sorted descending."""
    z = np.moveaxis(z, axis, -1)                                         # (..., n)
    top = -np.sort(-z, axis=-1)                                          # z₍₁₎ ≥ z₍₂₎ ≥ …
    with np.errstate(over="ignore"):              # −∞ from a score ≪ the max compares as it should
        sums = np.cumsum(top, axis=-1)                                   # Σ_{j≤k} z₍ⱼ₎
        k = (1 + np.arange(1, z.shape[-1] + 1) * top > sums).sum(axis=-1, keepdims=True)  # |S|
    tau = (np.take_along_axis(sums, k - 1, axis=-1) - 1) / k             # (..., 1)
    return np.moveaxis(z > tau, -1, axis), np.moveaxis(k, -1, axis).astype(z.dtype)


def sparsemax(x, axis: int = -1) -> Tensor:
    """sparsemax(x) = argmin_{p ∈ simplex} ‖p − x‖² (Martins & Astudillo 2016), with exact zeros:
    p_i = max(x_i − τ, 0), τ = (Σ_{i∈S} x_i − 1) / |S|. S is constant near x, so autograd
    gives ∂p/∂x = diag(s) − s sᵀ / |S| (s: S's indicator)."""
    x = as_tensor(x)
    axis = softmax_axis("sparsemax", x, axis)[0]
    if x.ndim == 0:                                                      # one element: p = 1
        return sparsemax(x.reshape(1)).reshape(())
    x = x - x.data.max(axis=axis, keepdims=True)          # sparsemax(x − c) = sparsemax(x), finite
    support, size = _sparsemax_support(x.data, axis)                    # S and |S|: constants
    tau = ((x * support).sum(axis=axis, keepdims=True) - 1) / size       # τ, differentiable
    return relu(x - tau)


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


def silu(x) -> Tensor:
    """x σ(x) (the swish), composed from primitives: d/dx = σ(x) (1 + x (1 − σ(x)))."""
    x = as_tensor(x)
    return x * sigmoid(x)


# ---- losses (also functional.<name>) ------------------------------------------------------------

def reduce_loss(op, loss, keep, reduction):
    """``reduction`` of the per-position ``loss``: "none", "sum", or "mean" over the kept
    positions (0 when none is kept, as ``cross_entropy``)."""
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / builtins.max(int(np.sum(keep)) if keep is not None else loss.size, 1)
    raise ValueError(f"{op}: reduction must be 'none', 'mean' or 'sum', got {reduction!r}")


def nll_loss(log_probs, targets, ignore_index: int | None = -100,
             reduction: str = "mean") -> Tensor:
    """−log_probs[target] per position, reduced: PyTorch's ``nll_loss`` with the class axis
    last, ``log_probs`` (..., C) and integer ``targets`` (...). Composed: a gather, so the
    gradient is −g at each target. Ignored positions count 0 and are left out of the mean."""
    log_probs = as_tensor(log_probs)
    t, keep = class_targets("nll_loss", log_probs, targets, ignore_index)
    loss = -take_along_axis(log_probs, t[..., None], -1)[..., 0] * keep      # (...)
    return reduce_loss("nll_loss", loss, keep, reduction)


def binary_cross_entropy(probs, targets, reduction: str = "mean") -> Tensor:
    """−(t log p + (1 − t) log(1 − p)) for probabilities p, each log clamped at −100 as
    PyTorch, so p = 0 or 1 gives a finite loss. d/dp = (p − t) / max(p (1 − p), 1e-12)
    (PyTorch's clamp, finite at p = 0 and 1); d/dt = log(1 − p) − log p, unclamped as PyTorch's."""
    p = as_tensor(probs)
    t = as_tensor(targets, p)
    with np.errstate(divide="ignore"):
        out = -(t.data * np.maximum(np.log(p.data), -100)
                + (1 - t.data) * np.maximum(np.log1p(-p.data), -100))
    need_t = t.requires_grad
    loss = Tensor._from_op(out, (p, t), lambda xp, g, out, p, t: (
        g * (p - t) / xp.maximum(p * (1 - p), 1e-12),
        g * (xp.log(1 - p) - xp.log(p)) if need_t else None), "binary_cross_entropy")
    return reduce_loss("binary_cross_entropy", loss, None, reduction)


def binary_cross_entropy_with_logits(logits, targets, reduction: str = "mean") -> Tensor:
    """−(t log σ(z) + (1 − t) log(1 − σ(z))) = softplus(z) − t z, stable for any z (softplus
    never overflows). d/dz = σ(z) − t."""
    z = as_tensor(logits)
    t = as_tensor(targets, z)                                            # d/dt = −z
    return reduce_loss("binary_cross_entropy_with_logits", softplus(z) - z * t, None, reduction)

