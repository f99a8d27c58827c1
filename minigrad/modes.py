"""The engine's two switches: ``no_grad()`` (ops inside record no graph; the one switch that
stops recording) and ``detect_anomaly()`` (the first op whose forward or backward yields
NaN/inf raises, ``checks.AnomalyError``). Nothing of minigrad is imported here.

Both are per thread, as in PyTorch: ``mode`` is a ``threading.local``, so every thread starts
with grad enabled and anomaly off, and a ``no_grad()`` in one thread does not reach another.
"""
from __future__ import annotations

import contextlib
import itertools
import threading

_threads = itertools.count()  # numbers each thread's first use of ``mode``


class _Mode(threading.local):
    """Engine state, one copy per thread. Read by every op, changed only by the two context
    managers below (and ``backward_pass`` by backward).

    ``backward_pass`` counts this thread's backward passes: a leaf's bytes are snapshot once
    per pass for the saved-leaf check (``engine.check_saved``). Each thread counts in its own range
    (thread k from k·2⁴⁰), so two threads never share a pass number: a leaf last seen by
    another thread is always snapshot afresh. Threads that share no tensors are checked as if
    each ran alone. A leaf shared by threads keeps one snapshot (the last thread's): changing it
    while another thread's graph holds it is a data race, which that check may not catch.
    """

    grad_enabled = True
    anomaly = False

    def __init__(self):  # run once in each thread, on its first use of ``mode``
        self.backward_pass = next(_threads) << 40


mode = _Mode()


@contextlib.contextmanager
def no_grad():
    """Ops inside this block (in this thread) record no graph: results have
    ``requires_grad=False``."""
    previous = mode.grad_enabled
    mode.grad_enabled = False
    try:
        yield
    finally:
        mode.grad_enabled = previous


@contextlib.contextmanager
def detect_anomaly():
    """Inside this block (in this thread) the first op whose forward or backward yields NaN/inf
    raises ``FloatingPointError`` naming the op. Costs one ``isfinite`` pass per op."""
    previous = mode.anomaly
    mode.anomaly = True
    try:
        yield
    finally:
        mode.anomaly = previous
