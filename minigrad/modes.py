"""The engine's two switches: ``no_grad()`` (ops inside record no graph; the one switch that
stops recording) and ``detect_anomaly()`` (the first op whose forward or backward yields
NaN/inf raises, ``checks.AnomalyError``). Nothing of minigrad is imported here.
"""
from __future__ import annotations

import contextlib


class _Mode:
    """Engine state. Read by every op, changed only by the two context managers below."""

    grad_enabled = True
    anomaly = False
    epoch = 0  # counts backward passes: a leaf's bytes are snapshot once per epoch


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
