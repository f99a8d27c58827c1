"""Reading a file that anyone may have put there (a run folder, a checkpoint), within bounds.

``open_bounded(path, limit=, what=)`` / ``read_bounded`` read only a regular file (a symlink to
one is fine) of at most ``limit`` bytes. A folder, a FIFO (opened non-blocking, so it cannot
hang the open), a device (``/dev/zero``, ``/dev/urandom``) or a socket is refused, and so is a
file that grows past the limit while it is read.

``load_npz(path, max_bytes, check_headers)`` reads an ``.npz`` written by ``minigrad.save``
trusting nothing in it: a bounded regular file; a zip archive of at most ``MAX_MEMBERS``
members whose headers say they inflate to at most ``max_bytes`` plus their ``.npy`` headers,
checked before any member is inflated (a member read through ``zipfile`` stops at the size its
header gives, so a header that lies cannot read more); each member a ``.npy`` array of numbers
whose header (shape, dtype) is checked -- against its member's size, ``max_bytes`` for all the
arrays together and the caller's ``check_headers`` -- before any data is read. So a header
that claims 10^12 elements, a device or FIFO, or a small file that would inflate to gigabytes
is refused, not read or allocated. Each refusal is one ``ValueError`` line naming the file (a
``FileRefused`` when the file itself is refused).
"""
from __future__ import annotations

import math
import os
import stat
import zipfile
from typing import BinaryIO, Callable

import numpy as np

MAX_MEMBERS = 10_000  # arrays per file: a model's state has hundreds at most
NPY_HEADER = 1 << 12  # bytes a member may add to its data (a .npy header is 128 as saved)
ARCHIVE_OVERHEAD = 1 << 24  # bytes a file may add to its arrays (zip headers: ~200 a member)
HEADERS = {(1, 0): np.lib.format.read_array_header_1_0,  # .npy format version: its reader
           (2, 0): np.lib.format.read_array_header_2_0}


class FileRefused(ValueError):
    """A file that is not read: not a regular file, or above its size limit."""


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


def load_npz(path, max_bytes: int, check_headers: Callable[[dict], None] | None = None) -> dict:
    """``{name: array}`` from an ``.npz`` file anyone may have written, within ``max_bytes``;
    ``check_headers({name: (shape, dtype)})``, when given, may raise ValueError to refuse the
    file before any array is allocated."""
    path = os.fspath(path)
    try:
        with open_bounded(path, limit=max_bytes + ARCHIVE_OVERHEAD, what="load") as f:
            if not zipfile.is_zipfile(f):
                raise ValueError("not a zip file")
            with zipfile.ZipFile(f) as z:
                return _read_members(z, max_bytes, check_headers, f"load: {path}")
    except FileRefused:  # already one line naming the file and the limit
        raise
    except (ValueError, OSError, zipfile.BadZipFile, EOFError, NotImplementedError) as e:
        raise ValueError(f"load: {path} is not an .npz archive written by minigrad.save "
                         f"({e.strerror if isinstance(e, OSError) and e.strerror else e})"
                         ) from None


def _read_members(z: zipfile.ZipFile, max_bytes: int, check_headers, what: str) -> dict:
    """The arrays of an open archive: sizes from its headers first, data last."""
    infos = z.infolist()
    if len(infos) > MAX_MEMBERS:
        raise FileRefused(f"{what}: {len(infos):,} members, above the limit of {MAX_MEMBERS:,}")
    inflated, limit = sum(i.file_size for i in infos), max_bytes + len(infos) * NPY_HEADER
    if inflated > limit:
        raise FileRefused(f"{what}: its members inflate to {inflated:,} bytes, above the limit "
                          f"of {limit:,} bytes")
    headers = {}
    for info in infos:
        if not info.filename.endswith(".npy") or info.filename[:-4] in headers:
            raise ValueError(f"member {info.filename!r} is not an array (.npy) or is repeated")
        with z.open(info) as f:
            headers[info.filename[:-4]] = _header(f, info.filename[:-4], max_bytes, info.file_size)
    if check_headers is not None:
        check_headers({k: (s, d) for k, (s, d, _) in headers.items()})
    total = sum(math.prod(s) * d.itemsize for s, d, _ in headers.values())
    if total > max_bytes:
        raise ValueError(f"its arrays hold {total:,} bytes together, above the limit "
                         f"max_bytes={max_bytes:,}")
    out = {}
    for info in infos:
        name = info.filename[:-4]
        with z.open(info) as f:  # reads stop at the member's size in its header
            _header(f, name, max_bytes, info.file_size)
            out[name] = _read_data(f, name, *headers[name])
    return out


def _header(f, name: str, max_bytes: int, size: int) -> tuple:
    """(shape, dtype, fortran_order) from a member's ``.npy`` header, refusing object dtypes,
    arrays above ``max_bytes`` and arrays larger than the member's ``size`` (from the zip
    header) can hold."""
    version = np.lib.format.read_magic(f)
    if version not in HEADERS:
        raise ValueError(f"member {name!r} has .npy format version {version}, expected 1.0 or 2.0")
    shape, fortran, dtype = HEADERS[version](f)
    if dtype.hasobject:
        raise ValueError(f"member {name!r} holds Python objects (dtype {dtype}); only arrays "
                         "of numbers are loaded, never unpickled")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > max_bytes:
        raise ValueError(f"member {name!r} claims shape {shape} of {dtype}, {nbytes:,} bytes, "
                         f"above the limit max_bytes={max_bytes:,}")
    if nbytes > size - f.tell():
        raise ValueError(f"member {name!r} claims {nbytes:,} bytes of data, more than the "
                         f"{size:,} bytes its zip header gives")
    return shape, dtype, fortran


def _read_data(f, name: str, shape: tuple, dtype, fortran: bool) -> np.ndarray:
    """The array data after the header: exactly the bytes the header announced."""
    count = math.prod(shape)
    flat = np.empty(count, dtype=dtype)
    view, got = memoryview(flat.view(np.uint8)) if count else memoryview(b""), 0
    while got < len(view):
        n = f.readinto(view[got:])
        if not n:
            raise ValueError(f"member {name!r} is truncated ({got} of {len(view)} bytes)")
        got += n
    return flat.reshape(shape, order="F" if fortran else "C")
