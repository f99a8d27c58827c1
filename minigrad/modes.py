"""The engine's two switches, per thread as in PyTorch: ``no_grad()`` (ops record no graph) and
``detect_anomaly()`` (the first op whose forward or backward yields NaN/inf raises)."""
from __future__ import annotations

import contextlib
import itertools
import threading

_threads = itertools.count()  # numbers each thread's first use of ``mode``


class _Mode(threading.local):
    """Engine state, one copy per thread. ``backward_pass`` counts this thread's backward passes
    (for ``engine.check_saved``), thread k from k·2⁴⁰, so two threads never share a number."""

    grad_enabled = True
    anomaly = False

    def __init__(self):  # run once in each thread, on its first use of ``mode``
        self.backward_pass = next(_threads) << 40


mode = _Mode()


@contextlib.contextmanager
def no_grad():
    """Ops inside this block (in this thread) record no graph."""
    previous = mode.grad_enabled
    mode.grad_enabled = False
    try:
        yield
    finally:
        mode.grad_enabled = previous


@contextlib.contextmanager
def detect_anomaly():
    """Inside this block (in this thread) an op whose forward or backward yields NaN/inf raises."""
    previous = mode.anomaly
    mode.anomaly = True
    try:
        yield
    finally:
        mode.anomaly = previous
