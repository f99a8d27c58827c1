"""The engine: a Tensor that records how it was made, and reverse mode back through the record.

``backward()`` orders the graph (iteratively: a 100 000-op chain works), calls each op's VJP
once, sums each gradient back to its parent's shape, accumulates, fills the leaves' ``.grad``
and frees the graph (a small one keeps its shape and gradients, for ``draw_graph``). A VJP
``vjp(xp, g, out, *inputs)`` returns one gradient (or None) per input given g = ∂L/∂out: one
formula, run on arrays with NumPy as ``xp`` or, under ``create_graph=True``, on Tensors with
minigrad's ops (``xp.py``). Checks: ``checks.py``; operators and methods: ``tensor.py``.
"""
from __future__ import annotations

import numpy as np

from minigrad import checks
from minigrad.modes import mode

NAMESPACES = {}  # create_graph (False/True) -> the ``xp`` VJPs compute with (filled by xp.py)


class Tensor:
    """An array ``data`` with ``grad``; made by an op, also its ``_parents`` and ``_vjp``."""

    __slots__ = ("data", "grad", "requires_grad", "_parents", "_vjp", "_op", "_snapshot",
                 "_epoch", "_kept", "__weakref__")  # _kept: (parents, gradient) after backward
    __array_ufunc__ = None  # ndarray (op) Tensor defers to Tensor's reflected operator

    def __init__(self, data, requires_grad: bool = False, dtype=None):
        self.data = checks.as_array(data.data if isinstance(data, Tensor) else data, dtype, requires_grad)
        self.grad, self.requires_grad = None, bool(requires_grad)
        self._parents, self._vjp, self._op, self._epoch = (), None, "leaf", -1

    @staticmethod
    def _from_op(data, parents: tuple, vjp, op: str) -> "Tensor":
        """The result of op ``op``, recording ``parents`` and ``vjp`` if a parent needs grad."""
        t = Tensor.__new__(Tensor)
        t.data, t.grad, t._op, t._parents, t._vjp, t._epoch = np.asarray(data), None, op, (), None, -1
        t.requires_grad = mode.grad_enabled and any([p.requires_grad for p in parents])
        if t.requires_grad:
            t._parents, t._vjp, epoch = parents, vjp, mode.epoch
            for p in parents:
                if p._vjp is None and p._epoch != epoch:  # a leaf, first seen this epoch
                    p._snapshot, p._epoch = p.data.tobytes(), epoch
        if mode.anomaly:
            checks.check_finite(t.data, op, "forward", t, parents)
        return t

    def backward(self, grad=None, retain_graph: bool | None = None, create_graph: bool = False):
        """Accumulate ∂self/∂leaf into every leaf's ``.grad``; ``grad`` seeds a non-scalar self.
        ``create_graph=True`` records the backward pass too (each ``.grad`` is then a Tensor)."""
        seed = checks.seed(self, grad, create_graph, Tensor)  # ∂self/∂self: 1, or the grad given
        _run([self], [seed], create_graph if retain_graph is None else retain_graph, create_graph)


FREED = lambda xp, g, out, *inputs: None  # noqa: E731  (a freed node's VJP: _run refuses it)


def topological_order(roots) -> list:
    """Every node reachable from ``roots``, each after all of its parents: a depth-first
    search with an explicit stack of (node, iterator over its parents), no recursion."""
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
    """Sum ``grad`` back to ``shape``: the adjoint of broadcasting, which aligns shapes from
    the right, prepends axes and stretches size-1 axes (each summed over here)."""
    if grad.shape != shape:
        grad = grad.sum(axis=tuple(range(grad.ndim - len(shape)))) if grad.ndim > len(shape) else grad
        grad = grad.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1),
                        keepdims=True)
        checks.check_unbroadcast(grad, shape, op)
    return grad if grad.dtype == dtype else grad.astype(dtype)  # float32 stays float32


def _run(roots, seeds, retain_graph: bool, create_graph: bool, wanted=None) -> dict:
    """The reverse-mode loop: from the roots back, pop a node's gradient, call its VJP, add what
    it returns into its parents' gradients; fill leaves' ``.grad`` (or return ``wanted``'s)."""
    order = topological_order(roots)
    checks.check_saved(order)
    mode.epoch, anomaly, keep = mode.epoch + 1, mode.anomaly, checks.small(order, retain_graph)
    xp, grads, found = NAMESPACES[create_graph], {}, {}
    for root, seed in zip(roots, seeds):
        grads[root] = grads[root] + seed if root in grads else seed
    for node in reversed(order):
        g = grads.pop(node, None)
        if g is None:
            continue
        if wanted is not None and node in wanted:
            found[node] = g
        if node._vjp is None:  # a leaf: .grad is its own array (a Tensor under create_graph)
            if wanted is None and node.grad is None:  # its own copy: g may be a VJP's view
                node.grad = g if create_graph else np.array(g)
            elif wanted is None:
                node.grad += g  # in place, as PyTorch accumulates
            continue
        if node._vjp is FREED:
            checks.refuse_freed(node._op)
        inputs = node._parents if create_graph else [p.data for p in node._parents]
        parent_grads = node._vjp(xp, g, node if create_graph else node.data, *inputs)
        checks.check_arity(node, parent_grads)
        for p, pg in zip(node._parents, parent_grads):
            if pg is not None and p.requires_grad:
                pg = unbroadcast(pg, p.data.shape, p.data.dtype, node._op)
                if anomaly:
                    checks.check_finite(pg, node._op, "backward", node, node._parents)
                grads[p] = grads[p] + pg if p in grads else pg  # a parent read twice: the sum
        if not retain_graph:  # release the parents, so the intermediates can go (unless kept)
            node._kept, node._parents, node._vjp = keep and (node._parents, g), (), FREED
    return found
