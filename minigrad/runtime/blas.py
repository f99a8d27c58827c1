"""How many threads NumPy's BLAS (OpenBLAS) may use, set at run time.

The matrices of these models are small: a second BLAS thread costs more than it saves, so the
CLI runs BLAS on one thread unless told otherwise (``--threads``). OpenBLAS reads
``OPENBLAS_NUM_THREADS`` only when loaded, so this calls its ``openblas_set_num_threads``
through ctypes; where that is not possible the functions do nothing and return None.
"""
from __future__ import annotations

import contextlib
import ctypes
import importlib

importlib.import_module("numpy")  # loads the BLAS library whose threads are set

_LIB = None
_SUFFIXES = ("scipy_openblas_{}64_", "scipy_openblas_{}", "openblas_{}64_", "openblas_{}")


def _openblas():
    """(set, get) functions of the loaded OpenBLAS, or None."""
    global _LIB
    if _LIB is None:
        _LIB = False
        try:
            with open("/proc/self/maps", encoding="utf-8") as f:
                paths = {line.split()[-1] for line in f if "openblas" in line.lower()}
        except OSError:
            return None
        for path in sorted(paths):
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for pattern in _SUFFIXES:
                set_, get = pattern.format("set_num_threads"), pattern.format("get_num_threads")
                if hasattr(lib, set_) and hasattr(lib, get):
                    _LIB = (getattr(lib, set_), getattr(lib, get))
                    return _LIB
    return _LIB or None


def get_threads() -> int | None:
    """OpenBLAS's current thread count, or None if it cannot be found."""
    fns = _openblas()
    return None if fns is None else int(fns[1]())


def set_threads(n: int) -> int | None:
    """Let OpenBLAS use ``n`` threads; returns the previous count (None: not possible)."""
    if int(n) < 1:
        raise ValueError(f"set_threads: need at least 1 thread, got {n}")
    fns = _openblas()
    if fns is None:
        return None
    previous = int(fns[1]())
    fns[0](int(n))
    return previous


@contextlib.contextmanager
def threads(n: int | None):
    """Run a block with OpenBLAS limited to ``n`` threads (None: leave it alone)."""
    previous = None if n is None else set_threads(n)
    try:
        yield
    finally:
        if previous is not None:
            set_threads(previous)
