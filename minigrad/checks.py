"""The engine's checks, out of its loop's way: what a Tensor may be made from, the VJPs' answers,
NaN/inf under ``detect_anomaly``. NumPy alone is imported, so the engine imports it without a cycle.
"""
from __future__ import annotations

import numpy as np


class AnomalyError(FloatingPointError):
    """What ``detect_anomaly`` raises: ``op``, ``where`` ("forward" or "backward"), the ``node`` and
    its ``inputs``, so that the graph can be drawn."""

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
    """The array a new tensor wraps: a copy of real numbers; ``requires_grad`` only for floats."""
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


def refuse_backward(t) -> None:
    """Backward needs a tensor that requires grad, and a gradient for a non-scalar one."""
    if not t.requires_grad:
        raise RuntimeError("backward() on a tensor that does not require grad: no input of "
                           "its graph has requires_grad=True (or it was made under no_grad())")
    raise RuntimeError(f"backward() on a non-scalar tensor of shape {t.shape} needs a "
                       f"gradient: pass grad= (an array of that shape)")


def refuse_arity(node, parent_grads) -> None:
    """A VJP returns one gradient (or None) per input."""
    n = len(parent_grads)
    raise RuntimeError(f"op '{node._op}': its VJP returned {n} gradient{'s' * (n != 1)} "
                       f"for {len(node._parents)} inputs (one array, or None, per input)")


def refuse_unbroadcast(grad, shape: tuple, op: str) -> None:
    """A VJP's gradient, summed over the broadcast axes, must have its input's shape."""
    raise RuntimeError(f"op '{op}': its VJP returned a gradient of shape {grad.shape}, "
                       f"which cannot be summed to its input's shape {shape}")


def refuse_freed(op: str) -> None:
    raise RuntimeError(f"backward through op '{op}' a second time: its graph was freed by the "
                       f"first backward(). Pass retain_graph=True to the first call to keep it.")
