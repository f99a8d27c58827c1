"""``Tensor``'s array-like face: operators, NumPy's methods, conversions, printing, each one op
of ``ops.py``, ``shape_ops.py`` or ``catalogue.py``, attached here so the engine imports no op;
and ``backward``, with the two namespaces ``xp`` its VJPs compute with.

A VJP uses operators, the methods ndarray and Tensor share (indexing too), and ``xp``'s
functions, so that one formula runs on arrays or on Tensors. ``xp.saved(array, recompute)`` is a
value the forward saved, or under ``create_graph`` recomputed. The dtype policy is
``ops.as_tensor``'s; only real floating tensors can require grad.
"""
from __future__ import annotations

import functools
import inspect
import operator
import warnings
from types import SimpleNamespace

import numpy as np

from minigrad import catalogue, checks, numpy_functions, ops, shape_ops
from minigrad.engine import FREED, Tensor, run_backward


_XP = {  # name: (on arrays, the first-order path; on Tensors, recorded under create_graph)
    "broadcast_to": (np.broadcast_to, shape_ops.broadcast_to),
    "where": (np.where, shape_ops.where),
    "zeros_like": (np.zeros_like, lambda x: Tensor(np.zeros_like(x.data))),
    "exp": (np.exp, ops.exp),
    "sin": (np.sin, catalogue.sin),
    "cos": (np.cos, catalogue.cos),
    "sigmoid": (ops.sigmoid_array, ops.sigmoid),
    "log": (np.log, ops.log),
    "maximum": (np.maximum, catalogue.maximum),
    "power": (np.power, ops.power),
    "prod": (np.prod, catalogue.prod),
    "cumsum": (np.cumsum, catalogue.cumsum),
    "einsum": (np.einsum, catalogue.einsum),
    "scatter": (shape_ops.scatter_array, shape_ops.scatter),
    "nan_to_zero": (lambda p: np.where(np.isnan(p), 0.0, p),
                    lambda p: shape_ops.masked_fill(p, np.isnan(p.data), 0.0)),
    "saved": (lambda array, recompute: array, lambda array, recompute: recompute()),
}
ARRAYS = SimpleNamespace(**{name: pair[0] for name, pair in _XP.items()})
TENSORS = SimpleNamespace(**{name: pair[1] for name, pair in _XP.items()})


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


def numpy_keywords(op):  # t.sum(dim=1): PyTorch's dim=/keepdim= refused naming axis=/keepdims=
    return functools.wraps(op)(lambda *args, **kw: op(*args, **kw) if "dim" not in kw and
                               "keepdim" not in kw else _refuse_keyword(op.__name__, kw))


def _refuse_keyword(op: str, kw: dict):
    name, numpy = ("dim", "axis") if "dim" in kw else ("keepdim", "keepdims")
    raise TypeError(f"{op}() got PyTorch's keyword {name}=; minigrad follows NumPy: {numpy}=")


def _reshape(self, *shape):  # t.reshape(2, 3) as t.reshape((2, 3)): NumPy's methods take both
    return shape_ops.reshape(self, shape[0] if len(shape) == 1 else shape)


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
    "__pow__": ops.pow, "__rpow__": lambda self, base: catalogue.rpow(base, self),
    "__neg__": ops.neg, "__getitem__": shape_ops.getitem, "__abs__": catalogue.abs,
    "__pos__": lambda self: Tensor._from_op(self.data, (self,), lambda xp, g, out, x: (g,), "pos"),
    "__hash__": object.__hash__,  # by identity: the engine's dicts and sets never call ==
    "__array_ufunc__": numpy_functions.array_ufunc,
    "__array_function__": numpy_functions.array_function,
    **{name: property(lambda self, name=name: numpy_functions.missing("'Tensor' object", name))
       for name in numpy_functions.PYTORCH},  # t.unsqueeze: one line naming expand_dims
    "all": lambda self, *a, **k: self.data.all(*a, **k),  # booleans: no graph, as comparisons
    "any": lambda self, *a, **k: self.data.any(*a, **k),
    "reshape": _reshape, "transpose": _transpose, "flatten": catalogue.ravel,
}
for _op in (ops.astype, ops.exp, ops.log, ops.sqrt, ops.tanh, ops.sigmoid, ops.relu, ops.sum,
            ops.mean, catalogue.logsumexp, catalogue.max, catalogue.min, catalogue.prod,
            catalogue.var, catalogue.std, catalogue.abs, catalogue.sign, catalogue.sin,
            catalogue.cos, catalogue.log1p, catalogue.expm1, catalogue.clip, catalogue.argmax,
            catalogue.argmin, catalogue.cumsum, catalogue.erf, catalogue.repeat, catalogue.ravel,
            catalogue.squeeze, shape_ops.swapaxes, shape_ops.expand_dims, shape_ops.broadcast_to,
            shape_ops.masked_fill):
    _METHODS[_op.__name__] = numpy_keywords(_op) if "axis" in inspect.signature(_op).parameters \
        else _op  # t.f(...) is f(t, ...)
for _name, _op in (("add", ops.add), ("sub", ops.sub), ("mul", ops.mul), ("truediv", ops.div),
                   ("matmul", ops.matmul)):  # t + u, and u + t (u: a number or an array)
    _METHODS[f"__{_name}__"] = _op
    _METHODS[f"__r{_name}__"] = lambda self, other, op=_op: op(other, self)
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):  # elementwise, as NumPy: booleans, no gradient
    _METHODS[f"__{_name}__"] = lambda self, other, cmp=getattr(operator, _name): cmp(self.data,
                                                                                     _data(other))
for _name, _method in _METHODS.items():
    setattr(Tensor, _name, _method)
