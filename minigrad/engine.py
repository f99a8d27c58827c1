"""The engine: graph modes and reverse-mode traversal.

Everything that walks the graph lives here, in one place:

* ``no_grad()``       -- the one switch that stops ops from recording a graph;
* ``detect_anomaly()``-- makes the first op whose forward or backward yields NaN/inf raise;
* ``backward(root)``  -- orders the graph iteratively (no recursion, so a 100 000-op chain
  works), calls each op's VJP once, sums every gradient back to its parent's shape (undoing
  broadcasting, aligned from the right) and accumulates it into the leaves' ``.grad``;
* ``grad(outputs, inputs)`` -- the same traversal, returning gradients instead of storing them.

A VJP (vector-Jacobian product) is a function ``vjp(xp, g, out, *inputs)`` made by an op:
given ``g = dL/d out`` it *returns* one gradient per input (``dL/d input``, or None) and
changes nothing. ``xp`` is the namespace it computes with (``minigrad/xp.py``).

**Higher-order gradients: one formula, two executions.** Each VJP is written once, with
operators, the methods ndarrays and Tensors share, and ``xp``'s few functions. An ordinary
backward passes ``xp.ARRAYS`` and the arrays (``out.data``, each ``input.data``): the VJPs
are plain NumPy, no Tensor is made, and nothing is recorded, as fast as hand-written NumPy.
``create_graph=True`` passes ``xp.TENSORS`` and the tensors themselves (the op's output and
its inputs): the same formulas then run as minigrad ops, so the backward pass is recorded as
a graph of its own, and ``grad`` on its results differentiates again -- the n-th derivative
is the same engine applied n times, with no second copy of any derivative. (HIPS autograd
writes its VJPs in its own NumPy wrapper; DeZero runs its backward on Variables under a
switch; this is the same idea with the switch made explicit as ``xp``.) Kernels whose
backward exists only on arrays are wrapped in ``xp.once_differentiable``: under
``create_graph`` they raise, naming the composed alternative.
"""
from __future__ import annotations

import contextlib

import numpy as np


class _Mode:
    """Engine state. Read by every op, changed only by the two context managers below."""

    grad_enabled = True
    anomaly = False
    epoch = 0  # counts backward passes: a leaf's data are snapshot once per epoch (_check_saved)


mode = _Mode()


@contextlib.contextmanager
def no_grad():
    """Ops inside this block record no graph: results have ``requires_grad=False``."""
    previous = mode.grad_enabled
    mode.grad_enabled = False
    try:
        yield
    finally:
        mode.grad_enabled = previous


@contextlib.contextmanager
def detect_anomaly():
    """Inside this block the first op whose forward or backward yields NaN/inf raises
    ``FloatingPointError`` naming the op. Costs one ``isfinite`` pass per op."""
    previous = mode.anomaly
    mode.anomaly = True
    try:
        yield
    finally:
        mode.anomaly = previous


class AnomalyError(FloatingPointError):
    """What ``detect_anomaly`` raises. ``op`` and ``where`` ("forward" or "backward") name the
    step; ``node`` is the tensor of that op (its result, or the node whose VJP made NaN/inf)
    and ``inputs`` its inputs, so the graph can be drawn (``minigrad.viz.draw_anomaly``)."""

    def __init__(self, message: str, op: str, where: str, node=None, inputs=()):
        super().__init__(message)
        self.op, self.where, self.node, self.inputs = op, where, node, tuple(inputs)


def check_finite(array: np.ndarray, op: str, where: str, node=None, inputs=()) -> None:
    """Raise ``AnomalyError`` if ``array`` holds NaN or inf (only under ``detect_anomaly``)."""
    if array.dtype.kind in "fc" and not np.isfinite(array).all():
        bad = "NaN" if np.isnan(array).any() else "inf"
        raise AnomalyError(f"detect_anomaly: the {where} of op '{op}' produced {bad} "
                           f"(shape {array.shape})", op, where, node, inputs)


def unbroadcast(grad: np.ndarray, shape: tuple, dtype, op: str = "?") -> np.ndarray:
    """Sum ``grad`` back to ``shape``: the adjoint of NumPy broadcasting.

    Broadcasting aligns shapes from the right, prepends axes and stretches size-1 axes;
    the gradient of a stretched axis is the sum over it. ``op`` names the op whose VJP
    returned ``grad``, for the error raised when it cannot fit. ``grad`` is an ndarray, or a
    Tensor under ``create_graph`` (the same methods: the sum and the cast are then recorded).
    """
    if grad.shape != shape:
        extra = grad.ndim - len(shape)
        if extra > 0:
            grad = grad.sum(axis=tuple(range(extra)))
        stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
        if stretched:
            grad = grad.sum(axis=stretched, keepdims=True)
        if grad.shape != shape:  # a VJP returned a gradient that does not fit its parent
            raise RuntimeError(f"op '{op}': its VJP returned a gradient of shape {grad.shape}, "
                               f"which cannot be summed to its input's shape {shape}")
    if grad.dtype != dtype:  # never let a float64 gradient reach a float32 leaf
        grad = grad.astype(dtype)
    return grad


class _FreedVJP:
    """The VJP left on a node once backward() has released its graph: calling it raises."""

    __slots__ = ("op",)

    def __init__(self, op: str):
        self.op = op

    def __call__(self, *args):
        raise RuntimeError(f"backward through op '{self.op}' a second time: its graph was freed "
                           f"by the first backward(). Pass retain_graph=True to the first call "
                           f"to keep it.")


class _FreedVJPs(dict):
    """op name -> its _FreedVJP, made on first use (one per op name, shared by its nodes)."""

    def __missing__(self, op: str) -> _FreedVJP:
        vjp = self[op] = _FreedVJP(op)
        return vjp


FREED = _FreedVJPs()  # a freed node: node._parents, node._vjp = (), FREED[node._op]


def _topological_order(roots) -> tuple:
    """Nodes reachable from ``roots`` that require grad, each after all of its parents, and
    the leaves reached (constants too: the VJPs read them).

    Iterative depth-first search with an explicit stack of (node, iterator over its parents):
    a node is appended once all of its parents have been appended, so ``reversed(order)``
    visits every node before its parents. Tensors are their own keys in ``seen`` (they hash
    by identity).
    """
    order, seen, leaves = [], set(), []
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(root._parents))]
        while stack:
            node, parents = stack[-1]
            for parent in parents:
                if parent not in seen:
                    seen.add(parent)
                    if not parent._parents:  # a leaf (or a constant): nothing before it
                        leaves.append(parent)
                        if parent.requires_grad:
                            order.append(parent)
                        continue
                    stack.append((parent, iter(parent._parents)))
                    break
            else:  # every parent is in ``order``
                stack.pop()
                order.append(node)
    return order, leaves


def _check_saved(leaves, order) -> None:
    """Refuse to run backward if a leaf's data changed in place since the graph recorded it.

    The VJPs read the leaves' data, so a change made between the forward pass and backward()
    (``b.data[0] = 100``) would give a wrong gradient without any error. A recorded leaf keeps
    a snapshot of its bytes (taken by ``Tensor._from_op`` when an op first records it in an
    epoch, i.e. since the last backward); here the data must still equal it.
    """
    for leaf in leaves:
        if leaf._epoch >= 0 and leaf._vjp is None and leaf.data.tobytes() != leaf._snapshot:
            node, k = next((n, k) for n in order for k, p in enumerate(n._parents) if p is leaf)
            raise RuntimeError(
                f"backward: input {k} of op '{node._op}' (a tensor of shape {leaf.shape}) was "
                f"changed in place after the op saved it for backward, so the gradients would "
                f"be wrong. Change a tensor's data only after backward() has used it, or give "
                f"it a new array (t.data = new_array) before recording the graph.")


def _accumulate(grads: dict, owned: set, node, g) -> None:
    """grads[node] += g, for a gradient that is not the first to reach ``node``. The first
    array may be a VJP's view or input, so the second makes a new sum; that sum is the loop's
    own (``owned``), and later arrivals add into it in place (a tensor read at every step of a
    sequence gets one array, not one per step)."""
    if node in owned:
        grads[node] += g
    else:
        grads[node] = grads[node] + g
        owned.add(node)


def _store_leaf_grad(leaf, g, owned: bool) -> None:
    """leaf.grad += g; a leaf's ``.grad`` is its own writable ndarray (a Tensor that carries
    its graph after ``backward(create_graph=True)``)."""
    if isinstance(g, xp.Tensor):  # create_graph: a Tensor, kept as it is
        leaf.grad = g if leaf.grad is None else leaf.grad + g
    elif leaf.grad is not None:  # (a sum of two 0-d arrays is a NumPy scalar: keep an ndarray)
        leaf.grad = np.asarray(leaf.grad + g)
    else:  # a sum made by the loop is the leaf's own; anything else may be shared: copy
        leaf.grad = np.asarray(g) if owned else np.array(g)


def _arity_error(node, parent_grads) -> RuntimeError:
    n = len(parent_grads)
    return RuntimeError(f"op '{node._op}': its VJP returned {n} gradient{'s' * (n != 1)} for "
                        f"{len(node._parents)} inputs (it must return one array, or None, per "
                        f"input)")


def first_order_vjp(node, g) -> tuple:
    """``node``'s VJP at ``g`` on arrays, as an ordinary backward calls it: one gradient (or
    None) per parent, in the broadcast shape (for callers outside the loop, e.g. minigrad.viz)."""
    return node._vjp(xp.ARRAYS, g, node.data, *[p.data for p in node._parents])


def _run(roots, seeds, retain_graph: bool, wanted=None, create_graph: bool = False) -> dict:
    """Propagate ``seeds`` (one per root) backwards: the reverse-mode loop.

    Pop a node's gradient, call its VJP, accumulate what it returns into the parents. With
    ``wanted`` (a set of tensors) the gradients of those tensors are returned and no ``.grad``
    is touched; otherwise the leaves' ``.grad`` accumulate. With ``create_graph`` the seeds
    are Tensors and the VJPs run on Tensors (see the module docstring).
    """
    order, leaves = _topological_order(roots)
    _check_saved(leaves, order)
    mode.epoch += 1
    namespace = xp.TENSORS if create_graph else xp.ARRAYS
    grads, owned, found = {}, set(), {}
    for root, seed in zip(roots, seeds):
        if root in grads:
            _accumulate(grads, owned, root, seed)
        else:
            grads[root] = seed
    for node in reversed(order):
        g = grads.pop(node, None)
        if g is None:
            continue
        if wanted is not None and node in wanted:
            found[node] = g
        if node._vjp is None:  # a leaf
            if wanted is None:
                _store_leaf_grad(node, g, node in owned)
            continue
        parents = node._parents
        if create_graph:
            parent_grads = node._vjp(namespace, g, node, *parents)
        elif len(parents) == 1:  # one or two inputs without a *-call (benchmarks/README.md)
            parent_grads = node._vjp(namespace, g, node.data, parents[0].data)
        elif len(parents) == 2:
            parent_grads = node._vjp(namespace, g, node.data, parents[0].data, parents[1].data)
        else:
            parent_grads = node._vjp(namespace, g, node.data, *[p.data for p in parents])
        if len(parent_grads) != len(parents):
            raise _arity_error(node, parent_grads)
        for parent, pg in zip(parents, parent_grads):
            if pg is not None and parent.requires_grad:
                pg = unbroadcast(pg, parent.data.shape, parent.data.dtype, node._op)
                if mode.anomaly:
                    check_finite(np.asarray(pg), node._op, "backward", node, parents)
                if parent in grads:
                    _accumulate(grads, owned, parent, pg)
                else:
                    grads[parent] = pg
        if not retain_graph:  # release the parents, so the intermediates can go
            node._parents, node._vjp = (), FREED[node._op]
    return found


def _seed(t, g, create_graph: bool):
    """The gradient that starts the backward pass at ``t``: ``g``, or 1 for a one-element
    ``t``. Under ``create_graph`` a Tensor (a Tensor ``g`` is kept, so the result can be
    differentiated with respect to it too)."""
    if create_graph and isinstance(g, xp.Tensor) and g.shape == t.shape and g.dtype == t.dtype:
        return g
    if g is None:
        if t.data.size != 1:
            raise RuntimeError(f"backward() on a non-scalar tensor of shape {t.shape} needs a "
                               f"gradient: pass grad= (an array of that shape)")
        g = np.ones_like(t.data)
    g = np.asarray(g.data if isinstance(g, xp.Tensor) else g, dtype=t.data.dtype)
    if g.shape != t.shape:
        raise ValueError(f"backward: grad has shape {g.shape} but the tensor has shape {t.shape}")
    return xp.Tensor(g) if create_graph else g


def backward(root, grad=None, retain_graph: bool | None = None, create_graph: bool = False) -> None:
    """Accumulate d root / d leaf into every leaf's ``.grad`` (see ``Tensor.backward``)."""
    if not root.requires_grad:
        raise RuntimeError("backward() on a tensor that does not require grad: no input of "
                           "its graph has requires_grad=True (or it was made under no_grad())")
    retain_graph = create_graph if retain_graph is None else retain_graph
    _run([root], [_seed(root, grad, create_graph)], retain_graph, create_graph=create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None,
         create_graph: bool = False):
    """Gradients of ``outputs`` with respect to ``inputs``, returned; ``.grad`` is untouched.

    ``outputs`` and ``inputs`` are tensors or sequences of tensors; ``grad_outputs`` gives the
    seed for each output (needed for non-scalar outputs). Returns a tuple of arrays (zeros for
    an input the outputs do not depend on) -- or a single array when ``inputs`` is a tensor.

    With ``create_graph=True`` the results are Tensors that carry the graph of the backward
    pass, so ``grad`` can differentiate them again (second, third … derivatives; a Tensor
    ``grad_outputs`` with ``requires_grad`` is part of that graph too). ``retain_graph``
    defaults to ``create_graph``: the graph is freed afterwards unless it is True.
    """
    single = isinstance(inputs, xp.Tensor)
    if isinstance(outputs, xp.Tensor):
        outputs, grad_outputs = [outputs], [grad_outputs]
    else:
        outputs = list(outputs)
        grad_outputs = [None] * len(outputs) if grad_outputs is None else list(grad_outputs)
    inputs = [inputs] if single else list(inputs)
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"grad: {len(outputs)} outputs but {len(grad_outputs)} grad_outputs")
    for o in outputs:
        if not o.requires_grad:
            raise RuntimeError("grad: an output does not require grad (no input of its graph "
                               "has requires_grad=True)")
    for i in inputs:
        if not i.requires_grad:
            raise ValueError("grad: every input must have requires_grad=True")
    retain_graph = create_graph if retain_graph is None else retain_graph
    seeds = [_seed(o, g, create_graph) for o, g in zip(outputs, grad_outputs)]
    found = _run(outputs, seeds, retain_graph, wanted=set(inputs), create_graph=create_graph)
    if create_graph:
        result = tuple(found[i] if i in found else xp.Tensor(np.zeros_like(i.data)) for i in inputs)
    else:  # copies, as for .grad: a VJP may hand the same (or a read-only) array to two inputs
        result = tuple(np.array(found[i]) if i in found else np.zeros_like(i.data) for i in inputs)
    return result[0] if single else result


from minigrad import xp  # noqa: E402  (at the end: xp imports the ops, which import the engine)
