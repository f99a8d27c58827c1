"""``grad(outputs, inputs)``, PyTorch's ``torch.autograd.grad``: the engine's loop, returning
gradients instead of storing them in ``.grad``."""
from __future__ import annotations

import numpy as np

from minigrad.engine import Tensor, run_backward
from minigrad.tensor import ARRAYS, TENSORS, initial_gradient


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None,
         create_graph: bool = False):
    """Gradients of ``outputs`` with respect to ``inputs`` (each a tensor or a sequence): a tuple
    of arrays (zeros where unused), or one for a tensor ``inputs``; Tensors under ``create_graph``,
    which can be differentiated again. ``grad_outputs`` seeds non-scalar outputs."""
    single = isinstance(inputs, Tensor)
    inputs = [inputs] if single else list(inputs)
    if isinstance(outputs, Tensor):
        outputs, grad_outputs = [outputs], [grad_outputs]
    outputs = list(outputs)
    grad_outputs = [None] * len(outputs) if grad_outputs is None else list(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"grad: {len(outputs)} outputs but {len(grad_outputs)} grad_outputs")
    if not all(o.requires_grad for o in outputs):
        raise RuntimeError("grad: an output does not require grad (no input of its graph requires "
                           "grad)")
    if not all(i.requires_grad for i in inputs):
        raise ValueError("grad: every input must have requires_grad=True")
    seeds = [initial_gradient(o, g, create_graph) for o, g in zip(outputs, grad_outputs)]
    retain = create_graph if retain_graph is None else retain_graph
    xp = TENSORS if create_graph else ARRAYS
    found = run_backward(outputs, seeds, xp, retain, wanted=set(inputs))
    if create_graph:
        result = tuple(found[i] if i in found else Tensor(np.zeros_like(i.data)) for i in inputs)
    else:  # copies, as for .grad: a VJP may hand the same (or a read-only) array to two inputs
        result = tuple(np.array(found[i]) if i in found else np.zeros_like(i.data) for i in inputs)
    return result[0] if single else result
