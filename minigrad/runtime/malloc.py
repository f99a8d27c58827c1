"""Keep freed memory in the process for the next training step (glibc's malloc), set at run time.

A training step allocates tens of MB of graph and frees it in backward; with glibc's defaults
the large blocks go back to the OS (mmap, heap trimming) and the next step page-faults them in
again. ``keep_freed_memory()`` raises both thresholds so the next step reuses them (the peak
memory does not change); elsewhere (not glibc) it does nothing and returns False.

The setting is process-wide and irreversible: for programs that own their process (``python -m
models``, ``python -m benchmarks``), never called on import (``tests/models/test_imports.py``).
"""
from __future__ import annotations

import ctypes
import ctypes.util

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3   # mallopt's parameter numbers (malloc.h)
MMAP_THRESHOLD = 32 << 20    # the largest glibc accepts on 64-bit: bigger blocks still use mmap
TRIM_THRESHOLD = 256 << 20   # give memory back only when more than this is free at the top


def keep_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds; True if it took effect."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (or no C library found)
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
