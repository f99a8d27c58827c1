"""The namespace a VJP computes with, in two executions: on arrays and on Tensors.

Every VJP in minigrad is written once, as the formula of its derivative, with operators
(``+ - * / @ **``), the methods that ``np.ndarray`` and ``Tensor`` share (``.sum``,
``.reshape``, ``.swapaxes``, ``.transpose``, ``.T``, indexing) and the few functions of a
namespace ``xp`` that the engine passes in::

    def vjp(xp, g, out, x):              # tanh: d tanh(x)/dx = 1 − tanh(x)²
        return (g * (1 - out * out),)

The engine calls it with one of two namespaces (``engine.run_backward``; ``Tensor.backward``
and ``grad`` choose):

* ``ARRAYS``: ``g``, ``out`` and the inputs are ndarrays and ``xp`` is NumPy. This is every
  ordinary ``backward()``: plain NumPy arithmetic, no Tensor is made, nothing is recorded.
* ``TENSORS``: under ``create_graph=True`` they are Tensors (``out`` is the op's output
  tensor itself, the inputs are its parents) and ``xp`` calls minigrad's ops, so the backward
  pass is recorded like any other computation and its results can be differentiated again,
  any number of times. Each op's second derivative is then the first derivative of its VJP's
  formula, taken by the same engine: there is no second copy of any derivative.

A value a forward pass saved for its backward (cross_entropy's softmax) enters through
``xp.saved(array, recompute)``: the array on the first-order path, ``recompute()`` (the same
value as a differentiable function of the inputs) under ``create_graph``.

A fused kernel whose backward exists only as NumPy code (``minigrad/kernels.py``, the GRU step,
the additive score) wraps its VJP in ``once_differentiable``: first order works as before, and under
``create_graph`` it raises an error that names the op and its composed alternative.
"""
from __future__ import annotations

import numpy as np

from minigrad import catalogue, ops, shape_ops
from minigrad.engine import Tensor
from minigrad.shape_ops import scatter_array


def _nan_to_zero_array(p):
    p = np.asarray(p)  # an array even when 0-d
    p[np.isnan(p)] = 0
    return p


class Arrays:
    """``xp`` on the first-order path: NumPy on ndarrays."""

    broadcast_to = staticmethod(np.broadcast_to)
    where = staticmethod(np.where)
    zeros_like = staticmethod(np.zeros_like)
    exp = staticmethod(np.exp)
    sin = staticmethod(np.sin)
    cos = staticmethod(np.cos)
    sigmoid = staticmethod(ops.sigmoid_array)
    log = staticmethod(np.log)
    maximum = staticmethod(np.maximum)
    power = staticmethod(np.power)

    @staticmethod
    def prod(x, axis):
        return np.prod(x, axis=axis)

    @staticmethod
    def cumsum(x, axis):
        return np.cumsum(x, axis=axis)

    einsum = staticmethod(np.einsum)
    scatter = staticmethod(scatter_array)
    nan_to_zero = staticmethod(_nan_to_zero_array)

    @staticmethod
    def split(g, bounds, axis):
        return np.split(g, bounds, axis=axis)

    @staticmethod
    def unstack(g, axis):
        return list(np.moveaxis(g, axis, 0))

    @staticmethod
    def saved(array, recompute):
        return array


class Tensors:
    """``xp`` under ``create_graph=True``: minigrad's ops on Tensors, so the backward records."""

    broadcast_to = staticmethod(shape_ops.broadcast_to)
    where = staticmethod(shape_ops.where)

    @staticmethod
    def zeros_like(x):
        return Tensor(np.zeros_like(x.data))

    exp = staticmethod(ops.exp)
    sin = staticmethod(catalogue.sin)
    cos = staticmethod(catalogue.cos)
    sigmoid = staticmethod(ops.sigmoid)
    log = staticmethod(ops.log)
    maximum = staticmethod(catalogue.maximum)
    power = staticmethod(ops.power)
    prod = staticmethod(catalogue.prod)
    cumsum = staticmethod(catalogue.cumsum)
    einsum = staticmethod(catalogue.einsum)
    scatter = staticmethod(shape_ops.scatter)

    @staticmethod
    def nan_to_zero(p):
        return shape_ops.masked_fill(p, np.isnan(p.data), 0.0)

    @staticmethod
    def split(g, bounds, axis):
        return shape_ops.split(g, bounds, axis=axis)

    @staticmethod
    def unstack(g, axis):
        return [g[(slice(None),) * axis + (i,)] for i in range(g.shape[axis])]

    @staticmethod
    def saved(array, recompute):
        return recompute()


ARRAYS, TENSORS = Arrays(), Tensors()


def once_differentiable(vjp, op: str, instead: str):
    """Wrap ``vjp(g)``, a backward written only on arrays (a fused kernel), as an engine VJP.

    First-order gradients are unchanged; under ``create_graph=True`` it raises, naming the op
    and ``instead``, the composed version to use for higher-order gradients.
    """
    def wrapped(xp, g, out, *inputs):
        if xp is not ARRAYS:
            raise RuntimeError(f"op '{op}' can be differentiated only once (its backward is a "
                               f"fused NumPy kernel), so create_graph=True cannot record it: "
                               f"for higher-order gradients use {instead}")
        return vjp(g)
    return wrapped

