"""``Tensor``'s array-like face: operators, NumPy's methods, conversions, printing, each one op
of ``ops.py``, ``shape_ops.py`` or ``catalogue.py``, attached here so the engine imports no op;
and ``backward``, with the namespace ``xp`` its VJPs compute with.

A VJP is written once, with operators, the methods ndarray and Tensor share (indexing too), and
``xp``'s functions; it runs on arrays (``ARRAYS``) or, recorded so that it can be differentiated
again, on Tensors (``TENSORS``, ``create_graph=True``). ``xp.saved(array, recompute)`` is a value
the forward saved, or under ``create_graph`` recomputed. The dtype policy is ``ops.as_tensor``'s;
only real floating tensors can require grad.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from minigrad import catalogue, checks, numpy_functions, ops, shape_ops
from minigrad.engine import FREED, Tensor, run_backward
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


def tensor(data, requires_grad: bool = False, dtype=None) -> Tensor:
    """A leaf tensor, a copy of ``data``, with NumPy's dtypes (Python floats give float64)."""
    return Tensor(data, requires_grad=requires_grad, dtype=dtype)


def backward(self, grad=None, retain_graph: bool | None = None, create_graph: bool = False):
    """∂self/∂leaf into each leaf's ``.grad`` (``grad``: the seed); ``create_graph``: recorded."""
    seed = initial_gradient(self, grad, create_graph)  # ∂self/∂self: 1, or the grad given
    retain = create_graph if retain_graph is None else retain_graph
    run_backward([self], [seed], TENSORS if create_graph else ARRAYS, retain)


def initial_gradient(t, g, create_graph: bool):
    """∂t/∂t: ``g``, or 1 for a one-element ``t``; under ``create_graph`` a Tensor."""
    seed = np.ones_like(t.data) if g is None else np.asarray(_data(g), dtype=t.data.dtype)
    if not t.requires_grad or (g is None and t.data.size != 1) or seed.shape != t.shape:
        checks.refuse_backward(t, seed)
    keep = create_graph and isinstance(g, Tensor) and g.dtype == t.dtype  # results depend on g
    return g if keep else (Tensor(seed) if create_graph else seed)


def _data(x):
    return x.data if isinstance(x, Tensor) else x


def _bool(self) -> bool:
    if self.data.size != 1:
        raise ValueError(f"the truth value of a tensor with {self.data.size} elements is "
                         f"ambiguous: use t.data.any() or t.data.all()")
    return bool(self.data)


def _array(self, dtype=None, copy=None) -> np.ndarray:
    """``np.asarray(t)`` is ``t.data`` (no graph); ``np.exp(t)``, ``ndarray + t`` and
    ``np.sum(t)`` are ops (``numpy_functions.py``)."""
    data = self.data if dtype is None else self.data.astype(dtype, copy=False)
    return data.copy() if copy else data


def _repr(self) -> str:
    body = np.array2string(self.data, separator=", ", prefix="tensor(")
    extra = f", dtype={self.dtype}" if self.dtype != np.float64 else ""
    grad = ", requires_grad=True" if self.requires_grad else ""
    return f"tensor({body}{extra}{grad})"


def _item(self) -> float:
    if self.data.size != 1:
        raise ValueError(f"item: only a one-element tensor converts to a Python number, "
                         f"this one has shape {self.shape}")
    return self.data.item()


def retain_grad(self) -> None:
    """Keep ∂L/∂self in ``.grad`` at the backward passes to come, summed as a leaf's, as PyTorch's
    ``retain_grad`` (a leaf keeps its own anyway): the op's VJP is wrapped to store its g."""
    vjp = self._vjp
    if not self.requires_grad:
        raise RuntimeError("retain_grad: this tensor does not require grad, so it gets none")
    if vjp is None or vjp is FREED or getattr(vjp, "retains", False):
        return
    self.grad = None

    def keep(xp, g, out, *inputs):
        mine = g if isinstance(g, Tensor) else np.array(g)               # its own copy of g
        self.grad = mine if self.grad is None else self.grad + mine
        return vjp(xp, g, out, *inputs)
    keep.retains = True
    self._vjp = keep


def _get_grad(self):
    """``.grad``: a leaf's gradient after backward. A tensor made by an op keeps none (None, with
    PyTorch's warning) unless ``retain_grad()`` asked."""
    g = getattr(self, "_grad", None)
    if g is None and self.requires_grad and self._vjp is not None and \
            not getattr(self._vjp, "retains", False):
        warnings.warn(f"tensor.grad: this tensor was made by op '{self._op}', and backward() keeps "
                      f"only the leaves' gradients: call t.retain_grad() before backward() to "
                      f"keep its .grad (as in PyTorch), or use mg.grad(loss, [t])", stacklevel=2)
    return g


def _setitem(self, index, value):
    raise TypeError("tensor: t[index] = value is not recorded by autograd (the gradient would be "
                    "wrong): build a new tensor, e.g. mg.where(mask, value, t) or "
                    "t.masked_fill(mask, value), or change t.data before any op reads t")


def _shape_args(fn):
    """``t.reshape(2, 3)`` as ``t.reshape((2, 3))``, as NumPy's methods take both."""
    return lambda self, *shape: fn(self, shape[0] if len(shape) == 1 else shape)


def _transpose(self, *axes):
    return shape_ops.transpose(self, axes[0] if len(axes) == 1 else (axes or None))


_METHODS = {
    "shape": property(lambda self: self.data.shape),
    "dtype": property(lambda self: self.data.dtype),
    "ndim": property(lambda self: self.data.ndim),
    "size": property(lambda self: self.data.size),
    "T": property(lambda self: shape_ops.transpose(self)),
    "__len__": lambda self: len(self.data),
    "__bool__": _bool, "__array__": _array, "__repr__": _repr, "item": _item,
    "__float__": lambda self: float(self.data), "__int__": lambda self: int(self.data),
    "__format__": lambda self, spec: format(self.data, spec) if spec else repr(self),
    "__setitem__": _setitem, "tolist": lambda self: self.data.tolist(),
    "numpy": lambda self: self.data, "backward": backward, "retain_grad": retain_grad,
    "grad": property(_get_grad, Tensor._grad.__set__),
    "detach": lambda self: Tensor._from_op(self.data, (), None, "detach"),
    "__add__": ops.add, "__sub__": ops.sub, "__mul__": ops.mul, "__truediv__": ops.div,
    "__matmul__": ops.matmul, "__pow__": ops.pow,
    "__rpow__": lambda self, base: catalogue.rpow(base, self),
    "__neg__": ops.neg, "__getitem__": shape_ops.getitem, "__abs__": catalogue.abs,
    "__pos__": lambda self: Tensor._from_op(self.data, (self,), lambda xp, g, out, x: (g,), "pos"),
    "__hash__": object.__hash__,  # by identity: the engine's dicts and sets never call ==
    "astype": ops.astype, "exp": ops.exp, "log": ops.log, "sqrt": ops.sqrt, "tanh": ops.tanh,
    "sigmoid": ops.sigmoid, "relu": ops.relu, "logsumexp": catalogue.logsumexp,
    **{op.__name__: op for op in (ops.sum, ops.mean, catalogue.max, catalogue.min,
                                  catalogue.prod, catalogue.var, catalogue.std)},
    "__array_ufunc__": numpy_functions.array_ufunc,
    "__array_function__": numpy_functions.array_function,
    "all": lambda self, *a, **k: self.data.all(*a, **k),  # booleans: no graph, as comparisons
    "any": lambda self, *a, **k: self.data.any(*a, **k),
    "abs": catalogue.abs, "sign": catalogue.sign, "sin": catalogue.sin, "cos": catalogue.cos,
    "log1p": catalogue.log1p, "expm1": catalogue.expm1, "clip": catalogue.clip,
    "argmax": catalogue.argmax, "argmin": catalogue.argmin, "cumsum": catalogue.cumsum,
    "erf": catalogue.erf,
    "reshape": _shape_args(shape_ops.reshape), "transpose": _transpose,
    "flatten": shape_ops.ravel, "ravel": shape_ops.ravel,
    "swapaxes": shape_ops.swapaxes, "expand_dims": shape_ops.expand_dims,
    "squeeze": shape_ops.squeeze, "broadcast_to": shape_ops.broadcast_to,
    "masked_fill": shape_ops.masked_fill, "repeat": catalogue.repeat,
}
for _name, _op in (("add", ops.add), ("sub", ops.sub), ("mul", ops.mul), ("truediv", ops.div),
                   ("matmul", ops.matmul)):
    _METHODS[f"__r{_name}__"] = lambda self, other, op=_op: op(other, self)
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):  # elementwise, as NumPy: booleans, no gradient
    _METHODS[f"__{_name}__"] = lambda self, other, cmp=getattr(operator, _name): cmp(self.data,
                                                                                     _data(other))
for _name, _method in _METHODS.items():
    setattr(Tensor, _name, _method)
