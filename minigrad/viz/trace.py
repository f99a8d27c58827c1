"""Recording a graph for drawing: who made each node, and every node's gradient.

``backward()`` keeps gradients only on leaves and frees the graph as it goes, and a tensor
does not know which Module made it. Inside ``with trace(model) as tr:`` the viewer learns
both, without any cost outside the block:

* every tensor an op makes is recorded with its parents and its *scope*: the stack of Module
  calls that were open when it was made. Each ``Module.__call__`` opens a scope named by the
  module's attribute path in ``model`` (e.g. ``decoder.attention``; a repeated call inside one
  scope is ``name#k``); a module of ``model`` that is driven step by step (it has ``start``
  and ``step``, as the decoders do) opens ``step 0``, ``step 1``, ... for its ``step`` calls,
  and another module's ``step`` (an unchecked forward, as ``Attention.step``) is a call too;
  and ``scope(name)`` blocks open a group of the caller's choosing;
* each recorded op's VJP is wrapped so that, when a later ``backward()`` passes through it,
  the gradient ``dL/d node`` is kept (``grads=True``, the default): the switch that puts a
  gradient on *every* node, as PyTorch's ``retain_grad`` does for one tensor;
* the parameters of ``model`` are named by their attribute paths
  (``encoder.forward_cell.weight_ih``).

How it costs nothing when off: ``trace`` swaps recording versions of ``Tensor._from_op`` (the
one constructor every op calls) and ``Module.__call__`` into the two classes, and a scoped
``step`` into the stepped modules of ``model``, for the duration of the block, and puts the
originals back on exit; the models know nothing of it, and ``scope(name)`` outside a trace
returns a shared do-nothing context. The recording holds every traced tensor alive until the
Trace is dropped, so the graph can still be drawn after ``backward()`` has freed it.

    with trace(model) as tr:
        loss = model.loss(src, tgt)
        loss.backward()
    draw_graph(loss, trace=tr, collapse=2, path="loss.svg")
"""
from __future__ import annotations

import contextlib

import numpy as np

from minigrad import nn
from minigrad.tensor import Tensor

_NULL = contextlib.nullcontext()
_active = None  # the Trace being recorded, or None


def scope(name: str):
    """A named group for the nodes made inside the block (only while tracing; else a no-op)."""
    return _NULL if _active is None else _active.enter(str(name))


def _named_modules(module, prefix: str = ""):
    """(attribute path, Module) for ``module`` and its submodules, as ``named_parameters`` walks."""
    for name, value in nn._attributes(module):
        if isinstance(value, nn.Module):
            yield prefix + name, value
            yield from _named_modules(value, f"{prefix}{name}.")


class Trace:
    """What ``trace`` records: nodes (in the order they were made), their parents, scopes,
    gradients (``dL/d node``, arrays) and the names of parameters. Read by ``draw_graph``."""

    def __init__(self, module=None, grads: bool = True):
        self.grads_on = grads
        self.nodes: list = []            # every tensor that requires grad made by an op
        self.parents: dict = {}          # tensor -> parents (kept when backward frees them)
        self.scopes: dict = {}           # tensor -> tuple of scope frames, outermost first
        self.grads: dict = {}            # tensor -> dL/d tensor
        self.names: dict = {}            # tensor -> name (parameters)
        self.module_names: dict = {}     # id(module) -> attribute path
        self._stack: list = []           # open frames
        self._counts: list = [{}]        # per open frame: name -> calls so far
        if module is not None:
            self.module_names[id(module)] = type(module).__name__
            self.module_names.update((id(m), n) for n, m in _named_modules(module))
            self.names.update((p, n) for n, p in module.named_parameters())

    @contextlib.contextmanager
    def enter(self, name: str, numbered: bool = False):
        """Open a frame; the k-th frame of the same name inside one parent frame is ``name#k``
        (``name k`` for every k, 0 included, when ``numbered``)."""
        counts = self._counts[-1]
        k = counts.get(name, 0)
        counts[name] = k + 1
        self._stack.append(f"{name} {k}" if numbered else name if k == 0 else f"{name}#{k}")
        self._counts.append({})
        try:
            yield
        finally:
            self._stack.pop()
            self._counts.pop()

    def record(self, t: Tensor) -> None:
        if not t.requires_grad:  # not part of any graph
            return
        self.nodes.append(t)
        self.parents[t] = t._parents
        self.scopes[t] = tuple(self._stack)
        if self.grads_on and callable(t._vjp):
            t._vjp = self._keeping(t, t._vjp)

    def _keeping(self, t: Tensor, vjp):
        grads = self.grads

        def vjp_keeping_grad(xp, g, *args):
            grads[t] = np.array(g.data if isinstance(g, Tensor) else g)  # a copy: g is the engine's
            return vjp(xp, g, *args)
        return vjp_keeping_grad

    def module_name(self, module) -> str:
        name = self.module_names.get(id(module))
        if name is None:  # a module outside the traced model: its class, its params by it
            name = self.module_names[id(module)] = type(module).__name__
            for pname, p in module.named_parameters():
                self.names.setdefault(p, f"{name}.{pname}")
        return name


@contextlib.contextmanager
def trace(module=None, grads: bool = True):
    """Record the graph made inside the block (see the module docstring); yields the Trace."""
    global _active
    if _active is not None:
        raise RuntimeError("trace: a trace is already being recorded (traces do not nest)")
    tr = Trace(module, grads)
    original_op = Tensor.__dict__["_from_op"]
    original_call = nn.Module.__call__
    make = original_op.__func__

    def recording_from_op(*args, **kwargs):
        t = make(*args, **kwargs)
        tr.record(t)
        return t

    inside = set()  # ids of the modules whose call is open

    def in_module_scope(m, fn, args, kwargs):
        with tr.enter(tr.module_name(m)):
            inside.add(id(m))
            try:
                return fn(*args, **kwargs)
            finally:
                inside.discard(id(m))

    def scoped_call(self, *args, **kwargs):
        return in_module_scope(self, lambda *a, **k: original_call(self, *a, **k), args, kwargs)

    def scoped_unchecked(m, step):  # a module's unchecked step (Attention.step): a call too
        def step_as_a_call(*args, **kwargs):
            if id(m) in inside:  # from its own forward, whose call is open
                return step(*args, **kwargs)
            return in_module_scope(m, step, args, kwargs)
        return step_as_a_call

    def scoped_step(step):
        def step_in_its_scope(*args, **kwargs):
            with tr.enter("step", numbered=True):
                return step(*args, **kwargs)
        return step_in_its_scope

    modules = list(module.modules()) if module is not None else []
    stepped = [m for m in modules if callable(getattr(m, "step", None))]
    Tensor._from_op = staticmethod(recording_from_op)
    nn.Module.__call__ = scoped_call
    for m in stepped:  # an instance attribute, over the class's method, for this block only
        if callable(getattr(m, "start", None)):  # a decoder: step 0, step 1, ...
            m.step = scoped_step(m.step)
        else:  # a module's unchecked forward, which its caller checked once
            m.step = scoped_unchecked(m, m.step)
    _active = tr
    try:
        yield tr
    finally:
        _active = None
        Tensor._from_op = original_op
        nn.Module.__call__ = original_call
        for m in stepped:
            del m.step
