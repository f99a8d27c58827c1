"""The namespace ``xp`` a VJP computes with: a VJP is written once, with operators, the methods
ndarray and Tensor share (indexing too), and ``xp``'s functions, and runs on arrays (``ARRAYS``)
or, recorded so it can be differentiated again, on Tensors (``TENSORS``, ``create_graph=True``).
``xp.saved(array, recompute)``: a value the forward saved, or under ``create_graph`` recomputed.
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
    prod = staticmethod(np.prod)
    cumsum = staticmethod(np.cumsum)
    einsum = staticmethod(np.einsum)
    scatter = staticmethod(scatter_array)
    nan_to_zero = staticmethod(_nan_to_zero_array)
    saved = staticmethod(lambda array, recompute: array)


class Tensors:
    """``xp`` under ``create_graph=True``: minigrad's ops on Tensors, so the backward records."""

    broadcast_to = staticmethod(shape_ops.broadcast_to)
    where = staticmethod(shape_ops.where)
    zeros_like = staticmethod(lambda x: Tensor(np.zeros_like(x.data)))
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
    nan_to_zero = staticmethod(lambda p: shape_ops.masked_fill(p, np.isnan(p.data), 0.0))
    saved = staticmethod(lambda array, recompute: recompute())


ARRAYS, TENSORS = Arrays(), Tensors()


def once_differentiable(vjp, op: str, instead: str):
    """``vjp(g)``, a fused kernel's backward on arrays, as an engine VJP that refuses
    ``create_graph``, naming ``instead``, the composed version."""
    def wrapped(xp, g, out, *inputs):
        if xp is not ARRAYS:
            raise RuntimeError(f"op '{op}' can be differentiated only once (a fused NumPy "
                               f"kernel), so create_graph=True cannot record it: for "
                               f"higher-order gradients use {instead}")
        return vjp(g)
    return wrapped

