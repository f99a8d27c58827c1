"""The project's files on disk: written atomically, read within bounds.

``write_atomic(path, write)`` calls ``write(f)`` on a temporary file in the target's folder,
flushes and fsyncs it, gives it the permissions a plain ``open(path, "w")`` would give
(0o666 minus the user's umask, not the owner-only 0o600 of a temporary file), and renames it
over ``path``. A crash mid-write never leaves a half-written file where a good one was; the
temporary file (named with ``TMP_PREFIX``, this project's own) is removed when writing fails.

``open_bounded(path, limit=, what=)`` / ``read_bounded`` are the one way to read a file that
anyone may have put there: only a regular file (a symlink to one is fine) of at most ``limit``
bytes is read. A folder, a FIFO (opened non-blocking, so it cannot hang the open), a device
(``/dev/zero``, ``/dev/urandom``) or a socket is refused, and so is a file that grows past the
limit while it is read. ``check_archive(zip, ...)`` caps a zip archive's member count and the
total size its headers say its members inflate to, before any member is inflated (a member
read through ``zipfile`` stops at the size its header gives, so a header that lies cannot read
more). Each refusal is one ``FileRefused`` (a ``ValueError``) line naming the file and the limit.
"""
from __future__ import annotations

import os
import stat
import tempfile
import zipfile
from typing import IO, BinaryIO, Callable

TMP_PREFIX = ".minigrad-tmp-"  # this project's own: nothing else names a file so


class FileRefused(ValueError):
    """A file that is not read: not a regular file, or above its size limit."""


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
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as f:
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


def _kind(mode: int) -> str:
    return ("a folder" if stat.S_ISDIR(mode) else "a pipe (FIFO)" if stat.S_ISFIFO(mode) else
            "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket"
            if stat.S_ISSOCK(mode) else "not a regular file")


def open_bounded(path, *, limit: int, what: str) -> BinaryIO:
    """``path`` opened for binary reading if it is a regular file of at most ``limit`` bytes;
    else ``FileRefused`` naming ``what``, the file and the limit (``FileNotFoundError`` when
    there is none). The type is taken from the opened descriptor, so it cannot change between
    the check and the read."""
    path = os.fspath(path)
    try:  # O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise FileNotFoundError(f"{what}: no such file: {path}") from None
    except OSError as e:
        raise FileRefused(f"{what}: cannot read {path} ({e.strerror or e})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileRefused(f"{what}: {path} is {_kind(st.st_mode)}, not a regular file")
        if st.st_size > limit:
            raise FileRefused(f"{what}: {path} is {st.st_size:,} bytes, above the limit of "
                              f"{limit:,} bytes")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bounded(path, *, limit: int, what: str) -> bytes:
    """The bytes of ``path``, checked as ``open_bounded`` does; a file that grows past ``limit``
    while it is read is refused too."""
    with open_bounded(path, limit=limit, what=what) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise FileRefused(f"{what}: {os.fspath(path)} grew past the limit of {limit:,} bytes "
                          "while it was read")
    return data


def check_archive(z: zipfile.ZipFile, *, max_members: int, max_total: int, what: str) -> list:
    """``z``'s members (``ZipInfo``) if there are at most ``max_members`` and their headers'
    sizes add up to at most ``max_total`` bytes; read from the headers, nothing is inflated."""
    infos = z.infolist()
    if len(infos) > max_members:
        raise FileRefused(f"{what}: {len(infos):,} members, above the limit of {max_members:,}")
    total = sum(i.file_size for i in infos)
    if total > max_total:
        raise FileRefused(f"{what}: its members inflate to {total:,} bytes, above the limit "
                          f"of {max_total:,} bytes")
    return infos
