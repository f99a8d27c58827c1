"""``Tensor``'s array-like face: operators, NumPy's methods, conversions, printing.

The engine (``engine.py``) defines what a Tensor *is* for reverse mode; this module gives it the
methods people type on arrays, each one op of ``ops.py``, ``shape_ops.py`` or ``catalogue.py``,
attached here so that the engine imports no op and nothing imports in a circle (DeZero's
``setup_variable``).

**Dtype policy** (applied in one place, ``coerce.as_tensor``), so float32 stays float32 end to end:

* a non-Tensor operand (a Python or NumPy scalar, a plain array, an int or bool array) adopts
  the float tensor's dtype: ``x32 * 2.0``, ``x32 + np.ones(3)`` are float32;
* an int or bool Tensor combined with a float Tensor is cast to the float's dtype:
  float32 * int64-tensor is float32;
* two float Tensors of different precision follow NumPy: float32 * float64 is float64;
* with several operands the dtype comes from one of them: in ``functional.linear`` a plain
  array input or bias adopts the weight's dtype; in ``concatenate`` and ``stack`` plain
  arrays (and int/bool Tensors) adopt the dtype of the first float Tensor among the inputs.

Only real floating tensors (float16/32/64) can require grad. Complex values are refused
(casting would drop the imaginary part), and so is arithmetic between two bool tensors.
"""
from __future__ import annotations

import numpy as np

from minigrad import catalogue, ops, shape_ops
from minigrad.engine import Tensor, run_backward
from minigrad.xp import ARRAYS, TENSORS
from minigrad.checks import refuse_complex  # noqa: F401  (re-exported for older imports)


def tensor(data, requires_grad: bool = False, dtype=None) -> Tensor:
    """Make a leaf tensor (a copy of ``data``). Python floats (and lists of them) give
    float64, Python ints int64, as in NumPy; NumPy arrays keep their dtype; object and string
    arrays are refused."""
    return Tensor(data, requires_grad=requires_grad, dtype=dtype)


def backward(self, grad=None, retain_graph: bool | None = None, create_graph: bool = False):
    """Accumulate ∂self/∂leaf into every leaf's ``.grad``; ``grad`` seeds a non-scalar self.
    ``create_graph=True`` records the backward pass too (each ``.grad`` is then a Tensor)."""
    seed = initial_gradient(self, grad, create_graph)  # ∂self/∂self: 1, or the grad given
    retain = create_graph if retain_graph is None else retain_graph
    run_backward([self], [seed], TENSORS if create_graph else ARRAYS, retain)


def initial_gradient(t, g, create_graph: bool):
    """The gradient that starts backward at ``t``: ``g``, or 1 for a one-element ``t``; under
    ``create_graph`` a Tensor (a Tensor ``g`` is kept, so results depend on it too)."""
    if not t.requires_grad:
        raise RuntimeError("backward() on a tensor that does not require grad: no input of "
                           "its graph has requires_grad=True (or it was made under no_grad())")
    if create_graph and isinstance(g, Tensor) and g.shape == t.shape and g.dtype == t.dtype:
        return g
    if g is None and t.data.size != 1:
        raise RuntimeError(f"backward() on a non-scalar tensor of shape {t.shape} needs a "
                           f"gradient: pass grad= (an array of that shape)")
    g = np.ones_like(t.data) if g is None else np.asarray(_data(g), dtype=t.data.dtype)
    if g.shape != t.shape:
        raise ValueError(f"backward: grad has shape {g.shape} but the tensor has shape {t.shape}")
    return Tensor(g) if create_graph else g


def _data(x):
    return x.data if isinstance(x, Tensor) else x


def _bool(self) -> bool:
    if self.data.size != 1:
        raise ValueError(f"the truth value of a tensor with {self.data.size} elements is "
                         f"ambiguous: use t.data.any() or t.data.all()")
    return bool(self.data)


def _array(self, dtype=None, copy=None) -> np.ndarray:
    """``np.asarray(t)`` is ``t.data`` (no graph). ``ndarray + t`` still gives a Tensor:
    ``__array_ufunc__ = None`` makes NumPy defer to the reflected operator first."""
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


def _setitem(self, index, value):
    raise TypeError("tensor: t[index] = value is not recorded by autograd (the gradient would be "
                    "wrong): build a new tensor, e.g. mg.where(mask, value, t) or "
                    "t.masked_fill(mask, value), or change t.data before any op reads t")


_ABSENT = object()  # a keyword not given (NumPy passes ``out=None`` explicitly)


def _reduction(op):
    """``t.sum(axis, keepdims)`` (and mean, max, ...) is an op: a Tensor with a graph. NumPy's
    function ``np.sum(t)`` calls ``t.sum(axis=..., out=None)``: given ``out=``, the method
    reads the Tensor as its data, as NumPy does any array-like, and returns NumPy's result
    (no graph), as ``np.asarray(t)`` does. ``dtype=`` without ``out=`` is refused: cast first."""
    name = op.__name__

    def method(self, *args, out=_ABSENT, dtype=_ABSENT, **kwargs):
        if out is not _ABSENT:  # NumPy's np.<name>(t, ...): NumPy's answer on t.data
            extra = {} if dtype is _ABSENT else {"dtype": dtype}
            return getattr(np, name)(self.data, *args, out=out, **extra, **kwargs)
        if dtype is not _ABSENT:
            raise TypeError(f"Tensor.{name}: dtype= is not supported (the result keeps the "
                            f"tensor's dtype {self.dtype}); cast first: t.astype(dtype).{name}()")
        return op(self, *args, **kwargs)
    method.__name__, method.__doc__ = name, op.__doc__
    return method


def _shape_args(fn):
    """``t.reshape(2, 3)`` as ``t.reshape((2, 3))``, as NumPy's methods take both."""
    return lambda self, *shape: fn(self, shape[0] if len(shape) == 1 else shape)


def _transpose(self, *axes):
    return shape_ops.transpose(self, axes[0] if len(axes) == 1 else (axes or None))


# Comparisons are elementwise, as in NumPy and PyTorch, and give plain boolean arrays (no
# graph: they have no gradient). Tensors still hash by identity, so the engine's dicts and
# sets of tensors never call == (distinct objects never share an identity hash).
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
    "numpy": lambda self: self.data, "backward": backward,
    "detach": lambda self: Tensor._from_op(self.data, (), None, "detach"),
    "__add__": ops.add, "__radd__": lambda self, other: ops.add(other, self),
    "__sub__": ops.sub, "__rsub__": lambda self, other: ops.sub(other, self),
    "__mul__": ops.mul, "__rmul__": lambda self, other: ops.mul(other, self),
    "__truediv__": ops.div, "__rtruediv__": lambda self, other: ops.div(other, self),
    "__matmul__": ops.matmul, "__rmatmul__": lambda self, other: ops.matmul(other, self),
    "__pow__": ops.pow, "__rpow__": lambda self, base: ops.rpow(base, self),
    "__neg__": ops.neg, "__getitem__": shape_ops.getitem, "__abs__": ops.abs,
    "__pos__": lambda self: Tensor._from_op(self.data, (self,), lambda xp, g, out, x: (g,), "pos"),
    "__hash__": object.__hash__,
    "__eq__": lambda self, other: self.data == _data(other),
    "__ne__": lambda self, other: self.data != _data(other),
    "__lt__": lambda self, other: self.data < _data(other),
    "__le__": lambda self, other: self.data <= _data(other),
    "__gt__": lambda self, other: self.data > _data(other),
    "__ge__": lambda self, other: self.data >= _data(other),
    "astype": ops.astype, "exp": ops.exp, "log": ops.log, "sqrt": ops.sqrt, "tanh": ops.tanh,
    "sigmoid": ops.sigmoid, "relu": ops.relu, "logsumexp": ops.logsumexp,
    **{op.__name__: _reduction(op) for op in (ops.sum, ops.mean, catalogue.max, catalogue.min,
                                              catalogue.prod, catalogue.var, catalogue.std)},
    "all": lambda self, *a, **k: self.data.all(*a, **k),  # booleans: no graph, as comparisons
    "any": lambda self, *a, **k: self.data.any(*a, **k),
    "abs": ops.abs, "sign": catalogue.sign, "sin": catalogue.sin, "cos": catalogue.cos,
    "log1p": catalogue.log1p, "expm1": catalogue.expm1, "clip": catalogue.clip,
    "argmax": catalogue.argmax, "argmin": catalogue.argmin, "cumsum": catalogue.cumsum,
    "erf": catalogue.erf,
    "reshape": _shape_args(shape_ops.reshape), "transpose": _transpose,
    "flatten": lambda self: shape_ops.reshape(self, -1), "ravel": lambda self: shape_ops.reshape(self, -1),
    "swapaxes": shape_ops.swapaxes, "expand_dims": shape_ops.expand_dims,
    "squeeze": shape_ops.squeeze, "broadcast_to": shape_ops.broadcast_to,
    "masked_fill": shape_ops.masked_fill, "repeat": catalogue.repeat,
}
for _name, _method in _METHODS.items():
    setattr(Tensor, _name, _method)
