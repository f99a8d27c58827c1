"""``save`` and ``load``: a dict of arrays as an ``.npz`` file, written atomically, never pickled.
``load`` reads what the file holds: bound untrusted files first (the application does)."""
from __future__ import annotations

import os
import zipfile
from collections.abc import Mapping

import numpy as np

from minigrad.files import write_atomic


def save(state: dict, path) -> None:
    """Write ``{name: array or tensor}`` to ``path`` atomically (temp file, then rename)."""
    if not isinstance(state, Mapping):
        raise TypeError(f"save: state must be a dict {{name: array}}, got {type(state).__name__} "
                        f"(for a model, save model.state_dict())")
    arrays = {name: np.asarray(getattr(value, "data", value)) for name, value in state.items()}
    for name, array in arrays.items():
        if array.dtype.kind == "O":
            raise TypeError(f"save: entry {name!r} is not numeric (dtype object): numbers only, "
                            f"never pickles")
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"save: cannot write {path}: the folder {folder} does not exist")
    write_atomic(path, lambda f: np.savez(f, **arrays), binary=True)


def load(path) -> dict:
    """Read a file written by ``save`` into ``{name: array}``, never unpickling."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"load: no such file: {path}")
    try:
        with open(path, "rb") as f, np.lib.npyio.NpzFile(f) as archive:  # .npy files in a zip
            state = {name: archive[name] for name in archive.files}
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as e:
        raise ValueError(f"load: {path} is not an .npz archive written by minigrad.save "
                         f"({e})") from None
    raw = sorted(name for name, value in state.items() if not isinstance(value, np.ndarray))
    if raw:  # NumPy hands a member that is not an .npy file over as its bytes
        raise ValueError(f"load: {path} holds entries that are not arrays: {raw}")
    return state
