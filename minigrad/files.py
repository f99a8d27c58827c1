"""The project's files on disk, written atomically.

``write_atomic(path, write)`` calls ``write(f)`` on a temporary file in the target's folder,
flushes and fsyncs it, gives it the permissions a plain ``open(path, "w")`` would give
(0o666 minus the user's umask, not the owner-only 0o600 of a temporary file), and renames it
over ``path``. A crash mid-write never leaves a half-written file where a good one was; the
temporary file (named with ``TMP_PREFIX``, this project's own) is removed when writing fails.
"""
from __future__ import annotations

import os
import tempfile
from typing import IO, Callable

TMP_PREFIX = ".minigrad-tmp-"  # this project's own: nothing else names a file so


def _umask() -> int:
    umask = os.umask(0)  # the only way to read the umask is to set it, then restore it
    os.umask(umask)
    return umask


def write_atomic(path, write: Callable[[IO], None], binary: bool = False) -> str:
    """Write a file through ``write(f)`` atomically (temp file, fsync, rename); returns the path."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    suffix = os.path.splitext(path)[1] or ".tmp"
    fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, suffix=suffix, dir=folder)
    try:
        with os.fdopen(fd, "wb" if binary else "w",
                       **({} if binary else {"encoding": "utf-8"})) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return path


def write_text_atomic(path, text: str) -> str:
    """``write_atomic`` for a string (UTF-8)."""
    return write_atomic(path, lambda f: f.write(text))
