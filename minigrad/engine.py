"""The engine: a Tensor that records how it was made, and reverse mode back through the record.

An op makes its result with ``Tensor._from_op(data, parents, vjp, name)``. A VJP
``vjp(xp, g, out, *inputs)`` returns one gradient (or None) per input, given g = ∂L/∂out: one
formula, run on arrays with NumPy as ``xp`` or, under ``create_graph=True``, on Tensors with
minigrad's ops (``tensor.py`` holds both namespaces; ``Tensor.backward`` picks one).
``run_backward`` orders the graph (iteratively: a 100 000-op chain works), calls each VJP once,
sums each gradient back to its parent's shape, accumulates into the leaves' ``.grad`` and frees
the graph (or hands a small one to the viewer, ``on_free``). Methods are attached in ``tensor.py``.
"""
from __future__ import annotations

import threading

import numpy as np

from minigrad import checks
from minigrad.modes import mode


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


class Tensor:
    """An array ``data`` with ``grad``; made by an op, also its ``_parents`` and ``_vjp``."""

    __slots__ = ("data", "_grad", "requires_grad", "_parents", "_vjp", "_op", "_snapshot",
                 "_pass", "__weakref__")

    def __init__(self, data, requires_grad: bool = False, dtype=None):
        self.data = as_array(data.data if isinstance(data, Tensor) else data, dtype, requires_grad)
        self._grad = None  # read as .grad (tensor.py; a tensor made by an op warns there)
        self.requires_grad = bool(requires_grad)
        self._parents = ()
        self._vjp = None
        self._op = "leaf"
        self._pass = -1

    @staticmethod
    def _from_op(data, parents: tuple, vjp, op: str) -> "Tensor":
        """Op ``op``'s result, with ``parents`` and ``vjp`` if one needs grad (``check_saved``)."""
        t = Tensor.__new__(Tensor)
        t.data = np.asarray(data)
        t._op = op
        t._pass = -1
        t.requires_grad = mode.grad_enabled and any([p.requires_grad for p in parents])
        t._parents = parents if t.requires_grad else ()
        t._vjp = vjp if t.requires_grad else None
        for p in t._parents:
            if p._vjp is None and p._pass != mode.backward_pass:  # a leaf: keep its bytes
                p._snapshot = p.data.tobytes()
                p._pass = mode.backward_pass
        if mode.anomaly:
            checks.check_finite(t.data, op, "forward", t, parents)
        return t


def check_saved(order) -> None:
    """Refuse backward if a leaf's data changed in place since an op read it (wrong gradients)."""
    for leaf in order:
        if leaf._vjp is None and leaf._pass >= 0 and leaf.data.tobytes() != leaf._snapshot:
            checks.refuse_changed(leaf, order)


on_free = None  # the viewer's (minigrad/viz/graph.py): how to keep this graph to draw, or None
LEAVES = threading.Lock()  # backward passes in several threads into one leaf add up, as PyTorch
FREED = lambda xp, g, out, *inputs: None  # noqa: E731  (a freed node's VJP: refused)


def topological_order(roots) -> list:
    """Every node reachable from ``roots``, each after all of its parents: a depth-first search
    with an explicit stack of (node, iterator over its parents), no recursion."""
    order, seen = [], set()
    for root in roots:
        stack = [] if root in seen else [(root, iter(root._parents))]
        seen.add(root)
        while stack:
            for parent in stack[-1][1]:
                if parent not in seen:
                    seen.add(parent)
                    stack.append((parent, iter(parent._parents)))
                    break
            else:  # every parent is already in ``order``
                order.append(stack.pop()[0])
    return order


def unbroadcast(grad, shape: tuple, dtype, op: str = "?"):
    """Sum ``grad`` back to ``shape``: broadcasting's adjoint (shapes aligned from the right)."""
    if grad.ndim > len(shape):  # sum the prepended axes
        grad = grad.sum(axis=tuple(range(grad.ndim - len(shape))))
    if grad.shape != shape:  # then the stretched ones
        grad = grad.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)
        if grad.shape != shape:
            checks.refuse_unbroadcast(grad, shape, op)
    return grad if grad.dtype == dtype else grad.astype(dtype)  # float32 stays float32


def run_backward(roots, seeds, xp, retain_graph: bool, wanted=None) -> dict:
    """From the roots back: each VJP once, summed into parents; leaves' .grad (or wanted's)."""
    order = topological_order(roots)
    check_saved(order)
    mode.backward_pass += 1
    keep = None if retain_graph or on_free is None else on_free(order)  # keep(node, parents, g)
    on_tensors = isinstance(seeds[0], Tensor)
    grads, found = {}, {}
    for root, seed in zip(roots, seeds):
        grads[root] = grads[root] + seed if root in grads else seed
    for node in reversed(order):
        g = grads.pop(node, None)
        if g is None:
            continue
        if wanted is not None and node in wanted:
            found[node] = g
        if node._vjp is None:  # a leaf: .grad is its own array (a Tensor under create_graph)
            with LEAVES:
                if wanted is None and node._grad is None:  # its own copy: g may be a VJP's view
                    node._grad = g if on_tensors else np.array(g)
                elif wanted is None:
                    node._grad += g  # in place, as PyTorch accumulates
            continue
        if node._vjp is FREED:
            checks.refuse_freed(node._op)
        inputs = node._parents if on_tensors else [p.data for p in node._parents]
        parent_grads = node._vjp(xp, g, node if on_tensors else node.data, *inputs)
        if len(parent_grads) != len(node._parents):
            checks.refuse_arity(node, parent_grads)
        for p, pg in zip(node._parents, parent_grads):
            if pg is not None and p.requires_grad:
                pg = unbroadcast(pg, p.data.shape, p.data.dtype, node._op)
                if mode.anomaly:
                    checks.check_finite(pg, node._op, "backward", node, node._parents)
                grads[p] = grads[p] + pg if p in grads else pg  # a parent read twice: the sum
        if not retain_graph:  # release the parents, so the intermediates can go
            if keep is not None:
                keep(node, node._parents, g)
            node._parents = ()
            node._vjp = FREED
    return found
