"""Files written atomically: a crash mid-write never leaves a half-written file where a good one
was."""
from __future__ import annotations

import os
import tempfile
from typing import IO, Callable

TMP_PREFIX = ".minigrad-tmp-"  # this project's own: nothing else names a file so


def write_atomic(path, write: Callable[[IO], None], binary: bool = False) -> str:
    """Call ``write(f)`` on a temporary file (named with ``TMP_PREFIX``) in ``path``'s folder, fsync
    it, give it the permissions of a plain ``open(path, "w")`` (0o666 minus the umask, not a
    temporary file's 0o600) and rename it over ``path`` (returned); removed if writing fails."""
    path = os.fspath(path)
    umask = os.umask(0)  # the only way to read the umask is to set it, then restore it
    os.umask(umask)
    fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, suffix=os.path.splitext(path)[1] or ".tmp",
                               dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else "utf-8") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return path


def write_text_atomic(path, text: str) -> str:
    """``write_atomic`` for a string (UTF-8)."""
    return write_atomic(path, lambda f: f.write(text))
