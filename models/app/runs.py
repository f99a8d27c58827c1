"""Where runs are written, and the rule that nothing a user saved is overwritten by accident.

* ``fresh_folder("runs/dates")`` is ``runs/dates`` when that does not exist or is empty, else
  ``runs/dates-2``, ``runs/dates-3`` …: the demo, and ``train`` without ``--out``, use it.
* A folder named with ``train --out`` that holds a checkpoint is refused by the CLI unless
  ``--resume`` (continue that run) or ``--overwrite`` (replace it) says what to do with it.
* ``free_name`` picks a new file name (``exact_vs_length-2.svg``) instead of replacing one.
* ``stop_on_ctrl_c``: the first Ctrl-C during training checkpoints after the current batch
  and stops; a second one aborts, and the checkpoint written last stays intact (checkpoints
  are written atomically, see ``models/app/checkpoint.py``).
"""
from __future__ import annotations

import contextlib
import os
import signal
import tempfile

from models.app.checkpoint import INDEX


def holds_checkpoint(folder) -> bool:
    """True when ``folder`` holds a checkpoint (its ``checkpoint.json``)."""
    return os.path.exists(os.path.join(os.fspath(folder), INDEX))


def writable_folder(folder) -> str:
    """Create ``folder`` and check that files can be written in it -- before training for
    minutes only to fail at the first checkpoint. Raises ValueError saying why not."""
    folder = os.fspath(folder)
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise ValueError(f"{folder} is a file, not a folder: choose another folder")
    try:
        os.makedirs(folder, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        raise ValueError(f"cannot write into {folder} ({e.strerror or e})") from None
    return folder


def fresh_folder(base) -> str:
    """``base`` if it does not exist or is an empty folder, else the first of ``base-2``,
    ``base-3`` … that is; the folder is created, so two runs never pick the same one."""
    base = os.path.normpath(os.fspath(base))
    for n in range(1, 10_000):
        path = base if n == 1 else f"{base}-{n}"
        try:
            os.makedirs(path)
            return path
        except FileExistsError:
            if os.path.isdir(path) and not os.listdir(path):
                return path
        except OSError as e:
            raise ValueError(f"cannot create the folder {path} ({e.strerror or e})") from None
    raise ValueError(f"no free folder next to {base} (tried {base}-2 … {base}-9999)")


def free_name(folder, stem: str, ext: str) -> str:
    """``folder/stem.ext`` if no such file exists, else ``folder/stem-2.ext``, ``-3`` …"""
    n = 1
    while True:
        path = os.path.join(folder, f"{stem}.{ext}" if n == 1 else f"{stem}-{n}.{ext}")
        if not os.path.exists(path):
            return path
        n += 1


@contextlib.contextmanager
def stop_on_ctrl_c():
    """Inside: the first Ctrl-C lets the current batch finish, then training checkpoints and
    stops (the yielded list becomes non-empty); a second Ctrl-C aborts (KeyboardInterrupt)."""
    flag = []

    def handler(signum, frame):
        if flag:
            raise KeyboardInterrupt
        flag.append(True)
        print("\ninterrupted: checkpointing after this batch (Ctrl-C again to abort)", flush=True)
    try:
        previous = signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main thread: no handler, Ctrl-C works as usual
        yield flag
        return
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, previous)
