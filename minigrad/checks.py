"""The engine's checks, kept out of its loop's way: what a Tensor may be made from, the seed of
a backward pass, the VJPs' answers, NaN/inf under ``detect_anomaly``, and leaves changed in
place after a graph recorded them. Each raises an error naming the op and the shapes.
NumPy alone is imported here, so the engine can import it without a cycle.
"""
from __future__ import annotations

import numpy as np


class AnomalyError(FloatingPointError):
    """What ``detect_anomaly`` raises. ``op`` and ``where`` ("forward" or "backward") name the
    step; ``node`` is the tensor of that op (its result, or the node whose VJP made NaN/inf)
    and ``inputs`` its inputs, so the graph can be drawn (``minigrad.viz.draw_anomaly``)."""

    def __init__(self, message: str, op: str, where: str, node=None, inputs=()):
        super().__init__(message)
        self.op, self.where, self.node, self.inputs = op, where, node, tuple(inputs)


def check_finite(array, op: str, where: str, node=None, inputs=()) -> None:
    """Raise ``AnomalyError`` if ``array`` holds NaN or inf (only under ``detect_anomaly``)."""
    array = np.asarray(array.data if hasattr(array, "requires_grad") else array)
    if array.dtype.kind in "fc" and not np.isfinite(array).all():
        bad = "NaN" if np.isnan(array).any() else "inf"
        raise AnomalyError(f"detect_anomaly: the {where} of op '{op}' produced {bad} "
                           f"(shape {array.shape})", op, where, node, inputs)


def refuse_complex(data) -> None:
    """Complex values are refused, not cast: casting would drop the imaginary part silently."""
    if (data.dtype.kind == "c" if isinstance(data, np.ndarray) else
            type(data) is not float and type(data) is not int and np.iscomplexobj(data)):
        raise TypeError(f"tensor: complex values are not supported (got "
                        f"{np.asarray(data).dtype}); minigrad differentiates real functions: "
                        f"pass the real and imaginary parts (x.real, x.imag) as separate tensors")


def as_array(data, dtype=None, requires_grad: bool = False) -> np.ndarray:
    """The array a new tensor wraps: a copy, float64 by default, ints and bools kept; objects,
    strings and complex numbers refused; ``requires_grad`` only for floating dtypes."""
    try:
        if dtype is not None:  # a cast to a real dtype would drop an imaginary part silently
            refuse_complex(data)
        array = np.array(data, dtype=dtype, copy=True)
    except ValueError as e:  # NumPy's "inhomogeneous shape", or a string that is no number
        raise ValueError(f"tensor: cannot make an array of numbers from this data (a ragged "
                         f"nested list, whose rows differ in length?): {e}") from None
    if array.dtype.kind in "OSUVMmc":
        raise TypeError(f"tensor: cannot make a tensor from an array of dtype {array.dtype} "
                        f"(real numbers only: float, int or bool)")
    if requires_grad and array.dtype.kind != "f":
        raise TypeError(f"tensor: requires_grad=True needs a floating dtype, got "
                        f"{array.dtype} (only real floating tensors, float16/32/64, "
                        f"have gradients)")
    return array


def seed(t, g, create_graph: bool, tensor_type):
    """The gradient that starts backward at ``t``: ``g``, or 1 for a one-element ``t``; under
    ``create_graph`` a Tensor (a Tensor ``g`` is kept, so results depend on it too)."""
    if not t.requires_grad:
        raise RuntimeError("backward() on a tensor that does not require grad: no input of "
                           "its graph has requires_grad=True (or it was made under no_grad())")
    if create_graph and isinstance(g, tensor_type) and g.shape == t.shape and g.dtype == t.dtype:
        return g
    if g is None and t.data.size != 1:
        raise RuntimeError(f"backward() on a non-scalar tensor of shape {t.shape} needs a "
                           f"gradient: pass grad= (an array of that shape)")
    g = np.ones_like(t.data) if g is None else np.asarray(g.data if isinstance(g, tensor_type) else g, dtype=t.data.dtype)
    if g.shape != t.shape:
        raise ValueError(f"backward: grad has shape {g.shape} but the tensor has shape {t.shape}")
    return tensor_type(g) if create_graph else g


def check_saved(order) -> None:
    """Refuse to run backward if a leaf's data changed in place since a graph recorded it
    (``Tensor._from_op`` keeps the bytes): the VJPs read those data, so the gradients would
    be silently wrong."""
    for leaf in order:
        if leaf._vjp is None and leaf._epoch >= 0 and leaf.data.tobytes() != leaf._snapshot:
            node, k = next((n, k) for n in order for k, p in enumerate(n._parents) if p is leaf)
            raise RuntimeError(
                f"backward: input {k} of op '{node._op}' (a tensor of shape {leaf.shape}) was "
                f"changed in place after the op saved it for backward, so the gradients would "
                f"be wrong. Change a tensor's data only after backward() has used it, or give "
                f"it a new array (t.data = new_array) before recording the graph.")


KEEP_NODES, KEEP_NUMBERS = 500, 100_000  # a graph this small is kept for drawing after backward


def small(order, retain_graph: bool) -> bool:
    """Whether backward keeps this graph's shape and gradients (``Tensor._kept``) when it frees
    it (``retain_graph`` false), so that ``draw_graph`` can draw it afterwards, as micrograd
    users do: at most ``KEEP_NODES`` nodes holding at most ``KEEP_NUMBERS`` numbers (a training
    step's graph is larger, so it is freed whole and costs nothing more)."""
    return not retain_graph and len(order) <= KEEP_NODES and \
        sum([n.data.size for n in order]) <= KEEP_NUMBERS


def check_arity(node, parent_grads) -> None:
    """A VJP returns one gradient (or None) per input."""
    if len(parent_grads) != len(node._parents):
        n = len(parent_grads)
        raise RuntimeError(f"op '{node._op}': its VJP returned {n} gradient{'s' * (n != 1)} "
                           f"for {len(node._parents)} inputs (one array, or None, per input)")


def check_unbroadcast(grad, shape: tuple, op: str) -> None:
    """A VJP's gradient, summed over the broadcast axes, has its input's shape."""
    if grad.shape != shape:
        raise RuntimeError(f"op '{op}': its VJP returned a gradient of shape {grad.shape}, "
                           f"which cannot be summed to its input's shape {shape}")


def refuse_freed(op: str) -> None:
    raise RuntimeError(f"backward through op '{op}' a second time: its graph was freed by the "
                       f"first backward(). Pass retain_graph=True to the first call to keep it.")
