"""``save`` and ``load``: a dict of arrays as an ``.npz`` file, never pickled.

``save`` writes atomically (``minigrad.files.write_atomic``): a crash mid-write never leaves a
half-written file where a good one was.

``load`` trusts nothing in the file: each member must be a ``.npy`` array of a non-object
dtype, and its header (shape, dtype) is read and checked -- against ``max_bytes`` and, when
given, the caller's ``check_headers`` -- before any data is read, so a header that claims
10^12 elements or a small file that would inflate to gigabytes is refused, not allocated.
"""
from __future__ import annotations

import math
import os
import zipfile
from collections.abc import Mapping
from typing import Callable

import numpy as np

from minigrad.files import write_atomic

MAX_BYTES = 1 << 32  # 4 GiB per array: far above any model here, far below exhausting memory
MAX_MEMBERS = 100_000


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


def _header(f, name: str, max_bytes: int) -> tuple:
    """(shape, dtype, fortran_order) from a member's ``.npy`` header, refusing object dtypes
    and arrays above ``max_bytes``."""
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

    Every member's header is read first: ``check_headers({name: (shape, dtype)})``, when given,
    may raise ValueError to refuse the file before any array is allocated. Any problem raises
    one ``ValueError`` naming the file (``FileNotFoundError`` when there is no file).
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"load: no such file: {path}")
    try:
        if os.path.isdir(path) or not zipfile.is_zipfile(path):
            raise ValueError("not a zip file")
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
            if len(infos) > MAX_MEMBERS:
                raise ValueError(f"{len(infos)} members, more than {MAX_MEMBERS}")
            headers, names = {}, [i.filename for i in infos]
            for info in infos:
                name = info.filename[:-4]
                if not info.filename.endswith(".npy") or names.count(info.filename) > 1:
                    raise ValueError(f"member {info.filename!r} is not an array (.npy) or is repeated")
                with z.open(info) as f:
                    headers[name] = _header(f, name, max_bytes)
            if check_headers is not None:
                check_headers({k: (s, d) for k, (s, d, _) in headers.items()})
            out = {}
            for info in infos:
                name = info.filename[:-4]
                with z.open(info) as f:
                    _header(f, name, max_bytes)
                    out[name] = _read_data(f, name, *headers[name])
            return out
    except (ValueError, OSError, zipfile.BadZipFile, EOFError, NotImplementedError) as e:
        raise ValueError(f"load: {path} is not an .npz archive written by minigrad.save "
                         f"({e.strerror if isinstance(e, OSError) and e.strerror else e})") from None
