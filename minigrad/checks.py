"""What runs only when something is wrong: the ops' shape-mismatch wording, the engine's refusals,
NaN/inf under ``detect_anomaly``. It imports NumPy alone, so the engine imports it without a cycle.
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


def mismatch(op: str, *roles, why: str = "do not fit", expects=None) -> ValueError:
    """The one wording of shapes that do not go together: ``op: a of shape (2,) and b of shape
    (3,) do not fit``; ``roles`` alternate a role and its shape; ``expects``: what would fit."""
    named = [f"{role} of shape {tuple(shape)}" for role, shape in zip(roles[::2], roles[1::2])]
    why += "" if expects is None else f" (expects {expects})"
    return ValueError(f"{op}: {', '.join(named[:-1])} and {named[-1]} {why}")


def refuse_backward(t, seed) -> None:
    """Backward needs a tensor that requires grad, and a gradient of its shape for a non-scalar."""
    if not t.requires_grad:
        raise RuntimeError("backward() on a tensor that does not require grad: no input of "
                           "its graph has requires_grad=True (or it was made under no_grad())")
    if seed.shape != t.shape:
        raise ValueError(f"backward: grad has shape {seed.shape} but the tensor has shape "
                         f"{t.shape}")
    raise RuntimeError(f"backward() on a non-scalar tensor of shape {t.shape} needs a "
                       f"gradient: pass grad= (an array of that shape)")


def refuse_changed(leaf, order) -> None:
    """A leaf changed in place after an op of ``order`` saved it for backward."""
    node, k = next((n, k) for n in order for k, p in enumerate(n._parents) if p is leaf)
    raise RuntimeError(f"backward: input {k} of op '{node._op}' (a tensor of shape {leaf.shape}) "
                       f"was changed in place after the op saved it for backward, so the gradients "
                       f"would be wrong. Change a tensor's data only after backward() has used it, "
                       f"or give it a new array (t.data = new_array) before recording the graph.")


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
