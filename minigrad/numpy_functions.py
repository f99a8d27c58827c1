"""NumPy's own functions on a Tensor keep the graph, as in MyGrad: ``np.exp(t)``,
``np.sum(t ** 2)``, ``np.maximum(t, 0)``, ``np.concatenate([a, b])`` run minigrad's op of the same
meaning (NumPy's protocols ``__array_ufunc__`` and ``__array_function__``, attached in
``tensor.py``), so ``.backward()`` reaches ``t``. Comparisons and tests (``np.isnan``,
``np.equal``, ``np.all``, …) read the data and give booleans, as the comparison operators do.
``np.asarray(t)`` is still ``t.data``. Anything else is refused in one line that names the
closest op, or says that there is none (``t.data`` gives NumPy's answer, with no graph).
"""
from __future__ import annotations

import difflib
import inspect

import numpy as np

from minigrad import catalogue, ops, shape_ops

UFUNCS = {
    np.add: ops.add, np.subtract: ops.sub, np.multiply: ops.mul, np.divide: ops.div,
    np.negative: ops.neg, np.power: ops.power, np.float_power: ops.power, np.matmul: ops.matmul,
    np.exp: ops.exp, np.log: ops.log, np.sqrt: ops.sqrt, np.tanh: ops.tanh,
    np.maximum: catalogue.maximum, np.minimum: catalogue.minimum, np.absolute: catalogue.abs,
    np.sign: catalogue.sign, np.sin: catalogue.sin, np.cos: catalogue.cos,
    np.log1p: catalogue.log1p, np.expm1: catalogue.expm1,
}
FUNCTIONS = {
    np.sum: ops.sum, np.mean: ops.mean, np.max: catalogue.max, np.min: catalogue.min,
    np.amax: catalogue.max, np.amin: catalogue.min, np.prod: catalogue.prod,
    np.var: catalogue.var, np.std: catalogue.std, np.cumsum: catalogue.cumsum,
    np.argmax: catalogue.argmax, np.argmin: catalogue.argmin, np.clip: catalogue.clip,
    np.matmul: ops.matmul, np.outer: catalogue.outer, np.tensordot: catalogue.tensordot,
    np.einsum: catalogue.einsum, np.reshape: shape_ops.reshape, np.ravel: catalogue.ravel,
    np.transpose: shape_ops.transpose, np.swapaxes: shape_ops.swapaxes,
    np.expand_dims: shape_ops.expand_dims, np.squeeze: catalogue.squeeze,
    np.broadcast_to: shape_ops.broadcast_to, np.concatenate: shape_ops.concatenate,
    np.stack: shape_ops.stack, np.split: catalogue.split, np.where: shape_ops.where,
    np.tril: catalogue.tril, np.triu: catalogue.triu, np.pad: catalogue.pad,
    np.repeat: catalogue.repeat, np.tile: catalogue.tile,
    np.take_along_axis: catalogue.take_along_axis,
}
BOOLEAN = {np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
           np.isnan, np.isinf, np.isfinite, np.signbit, np.logical_and, np.logical_or,
           np.logical_not, np.logical_xor, np.all, np.any, np.array_equal, np.allclose,
           np.isclose, np.shape, np.ndim, np.size}


def _data(x):
    if isinstance(x, (list, tuple)):
        return type(x)(_data(i) for i in x)
    return getattr(x, "data", x) if hasattr(x, "requires_grad") else x


def _call(name: str, op, args, kwargs):
    """``op(*args, **kwargs)``, or one line when NumPy's call has a keyword the op has not."""
    try:
        inspect.signature(op).bind(*args, **kwargs)
    except TypeError as e:
        params = ", ".join(inspect.signature(op).parameters)
        raise TypeError(f"np.{name} on a Tensor runs mg.{op.__name__}({params}): {e} "
                        f"(np.{name}(t.data, ...) gives NumPy's answer, with no graph)") from None
    return op(*args, **kwargs)


def _refuse(name: str):
    close = difflib.get_close_matches(name, [f.__name__ for f in (*UFUNCS, *FUNCTIONS)], 1)
    hint = f"the closest is np.{close[0]}" if close else "nor one close to it"
    raise TypeError(f"np.{name} on a Tensor: minigrad has no op for it ({hint}); "
                    f"np.{name}(t.data) gives NumPy's answer, with no graph")


def array_ufunc(self, ufunc, method: str, *inputs, **kwargs):
    """``np.exp(t)``, ``array + t`` …: the op, recorded; booleans on the data."""
    if ufunc in BOOLEAN and method == "__call__":
        return ufunc(*_data(inputs), **{k: _data(v) for k, v in kwargs.items()})
    if ufunc not in UFUNCS or method != "__call__":
        _refuse(ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}")
    return _call(ufunc.__name__, UFUNCS[ufunc], inputs, kwargs)


def array_function(self, func, types, args, kwargs):
    """``np.sum(t)``, ``np.concatenate([a, t])`` …: the op, recorded; booleans on the data."""
    if func in BOOLEAN:
        return func(*_data(args), **{k: _data(v) for k, v in kwargs.items()})
    if func not in FUNCTIONS:
        _refuse(func.__name__)
    return _call(func.__name__, FUNCTIONS[func], args, kwargs)


PYTORCH = {"cat": "concatenate", "unsqueeze": "expand_dims", "view": "reshape", "mm": "matmul",
           "bmm": "matmul", "permute": "transpose", "clamp": "clip", "dim": "ndim", "numel": "size"}


def missing(owner: str, name: str):
    """``t.unsqueeze``, ``mg.cat`` …: no such attribute; a PyTorch name is told minigrad's."""
    hint = f" (PyTorch's name; minigrad follows NumPy: {PYTORCH[name]})" if name in PYTORCH else ""
    raise AttributeError(f"{owner} has no attribute {name!r}{hint}")


def module_getattr(name: str):  # minigrad's module __getattr__
    missing("module 'minigrad'", name)
