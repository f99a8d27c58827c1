"""``Tensor``: an ``np.ndarray`` plus what reverse mode needs to walk back through it.

A tensor made by an op remembers its parents and the op's VJP; a tensor made by the user is
a *leaf*. ``backward()`` (in ``engine.py``) visits the graph from the output back to the
leaves and accumulates ``d output / d leaf`` into each leaf's ``.grad``.

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

from minigrad import engine
from minigrad.engine import mode


def refuse_complex(data) -> None:
    """Complex values are refused, not cast: casting would drop the imaginary part silently."""
    if (data.dtype.kind == "c" if isinstance(data, np.ndarray) else
            type(data) is not float and type(data) is not int and np.iscomplexobj(data)):
        raise TypeError(f"tensor: complex values are not supported (got "
                        f"{np.asarray(data).dtype}); minigrad differentiates real functions: "
                        f"pass the real and imaginary parts (x.real, x.imag) as separate tensors")


def _as_array(data, dtype=None) -> np.ndarray:
    """Array for a new tensor: float64 by default; ints and bools kept; objects and complex
    numbers refused."""
    if isinstance(data, Tensor):
        data = data.data
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
    return array


class Tensor:
    """An n-dimensional array that records the ops made from it.

    Attributes: ``data`` (np.ndarray), ``grad`` (np.ndarray or None, filled by backward on
    leaves), ``requires_grad``; tensors made by ops also hold ``_parents`` and ``_vjp``.
    """

    __slots__ = ("data", "grad", "requires_grad", "_parents", "_vjp", "_op", "_snapshot",
                 "_epoch", "__weakref__")
    __array_ufunc__ = None  # ndarray (op) Tensor defers to Tensor's reflected operator

    def __init__(self, data, requires_grad: bool = False, dtype=None):
        self.data = _as_array(data, dtype)
        if requires_grad and self.data.dtype.kind != "f":
            raise TypeError(f"tensor: requires_grad=True needs a floating dtype, got "
                            f"{self.data.dtype} (only real floating tensors, float16/32/64, "
                            f"have gradients)")
        self.grad = None
        self.requires_grad = bool(requires_grad)
        self._parents, self._vjp, self._op, self._epoch = (), None, "leaf", -1

    @staticmethod
    def _from_op(data: np.ndarray, parents: tuple, vjp, op: str) -> "Tensor":
        """The result of op ``op``: records ``parents`` and ``vjp`` if any parent needs grad."""
        t = Tensor.__new__(Tensor)
        if not isinstance(data, np.ndarray):  # NumPy gives scalars, not 0-d arrays, for 0-d math
            data = np.asarray(data)
        t.data, t.grad, t._op = data, None, op
        recording = False
        if mode.grad_enabled:
            for p in parents:
                if p.requires_grad:
                    recording = True
                    break
        if recording:
            epoch = mode.epoch
            t.requires_grad, t._parents, t._vjp, t._epoch = True, parents, vjp, epoch
            for p in parents:
                if p._epoch != epoch and p._vjp is None:  # a leaf, first recorded since the
                    p._snapshot, p._epoch = p.data.tobytes(), epoch  # last backward: its bytes
        else:
            t.requires_grad, t._parents, t._vjp, t._epoch = False, (), None, -1
        if mode.anomaly:
            engine.check_finite(data, op, "forward", t, parents)
        return t

    # ---- array-like attributes ------------------------------------------------------
    shape = property(lambda self: self.data.shape)
    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: self.data.ndim)
    size = property(lambda self: self.data.size)
    T = property(lambda self: shape_ops.transpose(self))

    def __len__(self) -> int:
        return len(self.data)

    def __bool__(self) -> bool:
        if self.data.size != 1:
            raise ValueError(f"the truth value of a tensor with {self.data.size} elements is "
                             f"ambiguous: use t.data.any() or t.data.all()")
        return bool(self.data)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        """``np.asarray(t)`` is ``t.data`` (no graph). ``ndarray + t`` still gives a Tensor:
        ``__array_ufunc__ = None`` makes NumPy defer to the reflected operator first."""
        data = self.data if dtype is None else self.data.astype(dtype, copy=False)
        return data.copy() if copy else data

    def __repr__(self) -> str:
        body = np.array2string(self.data, separator=", ", prefix="tensor(")
        extra = f", dtype={self.dtype}" if self.dtype != np.float64 else ""
        grad = ", requires_grad=True" if self.requires_grad else ""
        return f"tensor({body}{extra}{grad})"

    def numpy(self) -> np.ndarray:
        """The data as an ndarray (shared, not copied)."""
        return self.data

    def item(self) -> float:
        if self.data.size != 1:
            raise ValueError(f"item: only a one-element tensor converts to a Python number, "
                             f"this one has shape {self.shape}")
        return self.data.item()

    def detach(self) -> "Tensor":
        """The same data, cut from the graph (shares memory, requires no grad)."""
        return Tensor._from_op(self.data, (), None, "detach")

    def backward(self, grad=None, retain_graph: bool | None = None,
                 create_graph: bool = False) -> None:
        """Accumulate d self / d leaf into every leaf's ``.grad``.

        ``grad`` is the seed ``dL/d self``; it may be omitted only for a one-element tensor.
        The graph is freed afterwards unless ``retain_graph=True``. With ``create_graph=True``
        the backward pass is itself recorded and each ``.grad`` it fills is a Tensor carrying
        that graph, to be differentiated again (``retain_graph`` then defaults to True).
        """
        engine.backward(self, grad, retain_graph, create_graph)

    # ---- operators: each is one op from ops.py ---------------------------------------
    def __add__(self, other): return ops.add(self, other)
    def __radd__(self, other): return ops.add(other, self)
    def __sub__(self, other): return ops.sub(self, other)
    def __rsub__(self, other): return ops.sub(other, self)
    def __mul__(self, other): return ops.mul(self, other)
    def __rmul__(self, other): return ops.mul(other, self)
    def __truediv__(self, other): return ops.div(self, other)
    def __rtruediv__(self, other): return ops.div(other, self)
    def __matmul__(self, other): return ops.matmul(self, other)
    def __rmatmul__(self, other): return ops.matmul(other, self)
    def __pow__(self, exponent): return ops.pow(self, exponent)
    def __rpow__(self, base): return ops.rpow(base, self)
    def __neg__(self): return ops.neg(self)
    def __getitem__(self, index): return shape_ops.getitem(self, index)

    # Comparisons are elementwise, as in NumPy and PyTorch, and give plain boolean arrays (no
    # graph: they have no gradient). Tensors still hash by identity, so the engine's dicts and
    # sets of tensors never call == (distinct objects never share an identity hash).
    __hash__ = object.__hash__
    def __eq__(self, other): return self.data == _data(other)
    def __ne__(self, other): return self.data != _data(other)
    def __lt__(self, other): return self.data < _data(other)
    def __le__(self, other): return self.data <= _data(other)
    def __gt__(self, other): return self.data > _data(other)
    def __ge__(self, other): return self.data >= _data(other)

    # ---- methods mirroring NumPy's ----------------------------------------------------
    def astype(self, dtype): return ops.astype(self, dtype)
    def exp(self): return ops.exp(self)
    def log(self): return ops.log(self)
    def sqrt(self): return ops.sqrt(self)
    def tanh(self): return ops.tanh(self)
    def sigmoid(self): return ops.sigmoid(self)
    def relu(self): return ops.relu(self)
    def sum(self, axis=None, keepdims=False): return ops.sum(self, axis, keepdims)
    def mean(self, axis=None, keepdims=False): return ops.mean(self, axis, keepdims)
    def max(self, axis=None, keepdims=False): return ops.max(self, axis, keepdims)
    def logsumexp(self, axis=None, keepdims=False): return ops.logsumexp(self, axis, keepdims)

    def reshape(self, *shape):
        return shape_ops.reshape(self, shape[0] if len(shape) == 1 else shape)

    def transpose(self, *axes):
        return shape_ops.transpose(self, axes[0] if len(axes) == 1 else (axes or None))

    def swapaxes(self, axis1, axis2): return shape_ops.swapaxes(self, axis1, axis2)
    def expand_dims(self, axis): return shape_ops.expand_dims(self, axis)
    def squeeze(self, axis=None): return shape_ops.squeeze(self, axis)
    def broadcast_to(self, shape): return shape_ops.broadcast_to(self, shape)
    def masked_fill(self, mask, value): return shape_ops.masked_fill(self, mask, value)


def _data(x):
    return x.data if isinstance(x, Tensor) else x


def tensor(data, requires_grad: bool = False, dtype=None) -> Tensor:
    """Make a leaf tensor (a copy of ``data``). Python floats (and lists of them) give
    float64, Python ints int64, as in NumPy; NumPy arrays keep their dtype; object and string
    arrays are refused."""
    return Tensor(data, requires_grad=requires_grad, dtype=dtype)


from minigrad import ops, shape_ops  # noqa: E402  (ops need Tensor defined first)
