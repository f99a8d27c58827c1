"""``save`` and ``load``: a dict of arrays as an ``.npz`` file, never pickled.

``save`` writes atomically (``minigrad.files.write_atomic``): a crash mid-write never leaves a
half-written file where a good one was.

``load`` trusts nothing in the file: it must be a regular file within bounds
(``minigrad.files.open_bounded``), a zip archive whose headers (member count, inflated sizes)
are within bounds (``check_archive``), and each member a ``.npy`` array of a non-object dtype
whose header (shape, dtype) is read and checked -- against ``max_bytes`` for all the arrays
together, the member's size and, when given, the caller's ``check_headers`` -- before any data
is read, so a header that claims 10^12 elements, a device or FIFO, or a small file that would
inflate to gigabytes is refused, not read or allocated.
"""
from __future__ import annotations

import math
import os
import zipfile
from collections.abc import Mapping
from typing import Callable

import numpy as np

from minigrad.files import FileRefused, check_archive, open_bounded, write_atomic

MAX_BYTES = 1 << 30  # 1 GiB for all the arrays of a file; a caller may pass its own limit
MAX_MEMBERS = 10_000  # arrays per file: a model's state has hundreds at most
NPY_HEADER = 1 << 12  # bytes a member may add to its data (a .npy header is 128 as saved)
ARCHIVE_OVERHEAD = 1 << 24  # bytes a file may add to its arrays (zip headers: ~200 a member)


def save(state: dict, path) -> None:
    """Write ``{name: array or tensor}`` to ``path`` atomically (temp file, then rename)."""
    if not isinstance(state, Mapping):
        raise TypeError(f"save: state must be a dict {{name: array}}, got {type(state).__name__} "
                        f"(for a model, save model.state_dict())")
    arrays = {}
    for name, value in state.items():
        array = np.asarray(getattr(value, "data", value))
        if array.dtype.kind == "O":
            raise TypeError(f"save: entry {name!r} is not numeric (dtype object); only arrays "
                            f"of numbers are saved, so that loading never unpickles")
        arrays[name] = array
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"save: cannot write {path}: the folder {folder} does not exist")
    write_atomic(path, lambda f: np.savez(f, **arrays), binary=True)


def _header(f, name: str, max_bytes: int, size: int) -> tuple:
    """(shape, dtype, fortran_order) from a member's ``.npy`` header, refusing object dtypes,
    arrays above ``max_bytes`` and arrays larger than the member's ``size`` (from the zip
    header) can hold."""
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
    else:
        raise ValueError(f"member {name!r} has .npy format version {version}, expected 1.0 or 2.0")
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


def load(path, max_bytes: int = MAX_BYTES,
         check_headers: Callable[[dict], None] | None = None) -> dict:
    """Read a file written by ``save`` into ``{name: array}``, never unpickling.

    The file is read through ``minigrad.files.open_bounded`` (a regular file, at most
    ``max_bytes`` plus its headers) and ``check_archive`` (at most ``MAX_MEMBERS`` members,
    inflating to at most that much); then every member's ``.npy`` header is read, their arrays
    must add up to at most ``max_bytes``, and ``check_headers({name: (shape, dtype)})``, when
    given, may raise ValueError to refuse the file before any array is allocated. Any problem
    raises one ``ValueError`` naming the file (``FileNotFoundError`` when there is no file).
    """
    path = os.fspath(path)
    if not os.path.lexists(path):
        raise FileNotFoundError(f"load: no such file: {path}")
    try:
        with open_bounded(path, limit=max_bytes + ARCHIVE_OVERHEAD, what="load") as f:
            if not zipfile.is_zipfile(f):
                raise ValueError("not a zip file")
            with zipfile.ZipFile(f) as z:
                return _read_members(z, max_bytes, check_headers, f"load: {path}")
    except FileRefused as e:  # already one line naming the file and the limit
        raise ValueError(str(e)) from None
    except (ValueError, OSError, zipfile.BadZipFile, EOFError, NotImplementedError) as e:
        raise ValueError(f"load: {path} is not an .npz archive written by minigrad.save "
                         f"({e.strerror if isinstance(e, OSError) and e.strerror else e})") from None


def _read_members(z: zipfile.ZipFile, max_bytes: int, check_headers, what: str) -> dict:
    """The arrays of an open archive: sizes from its headers first, data last."""
    infos = check_archive(z, max_members=MAX_MEMBERS, what=what,
                          max_total=max_bytes + len(z.infolist()) * NPY_HEADER)
    headers = {}
    names = [i.filename for i in infos]
    repeated = {n for n in names if names.count(n) > 1} if len(set(names)) < len(names) else set()
    for info in infos:
        name = info.filename[:-4]
        if not info.filename.endswith(".npy") or info.filename in repeated:
            raise ValueError(f"member {info.filename!r} is not an array (.npy) or is repeated")
        with z.open(info) as f:
            headers[name] = _header(f, name, max_bytes, info.file_size)
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
