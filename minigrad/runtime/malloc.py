"""Keep freed memory in the process for the next training step (glibc's malloc), set at run time.

A training step allocates its graph -- tens of MB of arrays -- and frees it again in backward.
With glibc's defaults, blocks above the mmap threshold come from ``mmap`` and go back on free,
and once the free space at the top of the heap exceeds the trim threshold (both adapt to the
largest block freed so far: a few MB here) it is handed back to the OS. The next step then
page-faults all of that memory in again: on the reference workload about 30 MB, 7 000 faults
and 9 ms of a 40 ms float64 step (benchmarks/README.md). PyTorch's step, which keeps less of
its graph, is hardly affected.

``keep_freed_memory()`` raises both thresholds, so freed blocks stay in the heap and the next
step reuses them. The peak memory does not change (measured); what a run freed stays with the
process until it exits. Where it is not possible (another C library) it does nothing and
returns False.

Note: the setting is process-wide and irreversible (nothing here restores glibc's defaults).
It is meant for programs that own their process -- the CLI (``python -m models``) and the
benchmarks (``python -m benchmarks``) -- not for library or notebook code, where it would
change the memory behaviour of everything else in the process. No module calls it on import
(``tests/models/test_imports.py`` checks).
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
